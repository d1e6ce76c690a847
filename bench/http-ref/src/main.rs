//! The second reference of the HTTP benchmark, beside nginx: the plainest
//! server one would write with Bulwark's own libraries (hyper on tokio, mimalloc),
//! answering fixed bytes from memory with no routing, headers, limits or
//! logging. nginx says where the goal is; this says what hyper and tokio cost
//! before Bulwark does anything, so a gap to nginx splits into the part in
//! Bulwark's code and the part in the libraries and the runtime's design.
//!
//! Each file of DIR is answered at `/<its name>`, read once at start
//! (`application/json` for names ending in `json`, else `text/html;
//! charset=utf-8`);
//! any other path gets 404.
//!
//! Usage: http-ref 127.0.0.1:8102 DIR [--per-core]
//!
//! By default one multi-threaded runtime serves every connection, as
//! Bulwark's does. `--per-core`: one runtime of a single worker per core,
//! each accepting on the one listening socket and serving its connections
//! to their end, as nginx's worker processes do.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Path -> (content type, body).
type Files = HashMap<String, (HeaderValue, Bytes)>;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(addr), Some(dir)) = (args.next(), args.next()) else {
        eprintln!("usage: http-ref ADDR DIR [--per-core]");
        std::process::exit(2);
    };
    let per_core = args.next().as_deref() == Some("--per-core");
    let files = Arc::new(read_files(&dir)?);
    let listener = std::net::TcpListener::bind(&addr)?;
    listener.set_nonblocking(true)?;
    if !per_core {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        return runtime.block_on(accept(listener, files));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (0..cores)
        .map(|_| {
            let (listener, files) = (listener.try_clone()?, files.clone());
            Ok(std::thread::spawn(move || {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_all()
                    .build()?
                    .block_on(accept(listener, files))
            }))
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    for thread in threads {
        thread.join().expect("a serving thread does not panic")?;
    }
    Ok(())
}

fn read_files(dir: &str) -> std::io::Result<Files> {
    let mut files = Files::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = if name.ends_with("json") {
            "application/json"
        } else {
            "text/html; charset=utf-8"
        };
        let body = Bytes::from(std::fs::read(entry.path())?);
        files.insert(format!("/{name}"), (HeaderValue::from_static(kind), body));
    }
    Ok(files)
}

async fn accept(listener: std::net::TcpListener, files: Arc<Files>) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let files = files.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |req| std::future::ready(answer(&files, &req)));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn answer(files: &Files, req: &Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let Some((kind, body)) = files.get(req.uri().path()) else {
        let mut missing = Response::new(Full::new(Bytes::new()));
        *missing.status_mut() = StatusCode::NOT_FOUND;
        return Ok(missing);
    };
    let mut found = Response::new(Full::new(body.clone()));
    found.headers_mut().insert(CONTENT_TYPE, kind.clone());
    Ok(found)
}
