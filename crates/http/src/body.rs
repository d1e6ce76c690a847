//! The response body: bytes in memory, or a file streamed from disk.
//!
//! An enum instead of a boxed trait object: the hot path (cached or rendered bytes)
//! allocates nothing beyond the bytes themselves.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::io::AsyncRead;
use tokio_util::io::ReaderStream;

pub enum Body {
    Full(Option<Bytes>),
    Stream {
        reader: ReaderStream<Pin<Box<dyn AsyncRead + Send>>>,
        remaining: u64,
    },
    /// Chunks as a task produces them (event streams); ends when the sender goes.
    Channel(tokio::sync::mpsc::Receiver<Bytes>),
}

impl Body {
    pub fn empty() -> Body {
        Body::Full(None)
    }

    pub fn channel(receiver: tokio::sync::mpsc::Receiver<Bytes>) -> Body {
        Body::Channel(receiver)
    }

    /// Streams `len` bytes from `reader` in 64 KiB chunks.
    pub fn stream(reader: impl AsyncRead + Send + 'static, len: u64) -> Body {
        let reader: Pin<Box<dyn AsyncRead + Send>> = Box::pin(reader);
        Body::Stream {
            reader: ReaderStream::with_capacity(reader, 64 * 1024),
            remaining: len,
        }
    }
}

impl From<Bytes> for Body {
    fn from(b: Bytes) -> Body {
        if b.is_empty() {
            Body::Full(None)
        } else {
            Body::Full(Some(b))
        }
    }
}

impl From<String> for Body {
    fn from(s: String) -> Body {
        Body::from(Bytes::from(s))
    }
}

impl From<&'static str> for Body {
    fn from(s: &'static str) -> Body {
        Body::from(Bytes::from_static(s.as_bytes()))
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream { reader, remaining } => {
                use futures_util::Stream;
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                match Pin::new(reader).poll_next(cx) {
                    Poll::Ready(Some(Ok(mut chunk))) => {
                        if chunk.len() as u64 > *remaining {
                            chunk.truncate(*remaining as usize);
                        }
                        *remaining -= chunk.len() as u64;
                        Poll::Ready(Some(Ok(Frame::data(chunk))))
                    }
                    Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
                    Poll::Ready(None) => Poll::Ready(None),
                    Poll::Pending => Poll::Pending,
                }
            }
            Body::Channel(receiver) => receiver
                .poll_recv(cx)
                .map(|chunk| chunk.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Full(b) => b.is_none(),
            Body::Stream { remaining, .. } => *remaining == 0,
            Body::Channel(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream { remaining, .. } => SizeHint::with_exact(*remaining),
            Body::Channel(_) => SizeHint::default(),
        }
    }
}

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the request body is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the request body could not be read: {0}")]
    Broken(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The whole body did not arrive within the time allowed: a client that sends
    /// a body slowly (or announces one and never sends it) must not hold its
    /// connection, and a file descriptor, for ever.
    #[error("the request body did not arrive within {0:?}")]
    TimedOut(std::time::Duration),
}

/// Reads a whole request body, refusing it as soon as it passes `limit` bytes (a
/// chunked body is counted while it arrives) or when it has not fully arrived
/// within `timeout`.
pub async fn read_body(
    body: hyper::body::Incoming,
    limit: usize,
    timeout: std::time::Duration,
) -> Result<Bytes, BodyError> {
    use http_body_util::BodyExt;
    let collect = http_body_util::Limited::new(body, limit).collect();
    match tokio::time::timeout(timeout, collect).await {
        Err(_) => Err(BodyError::TimedOut(timeout)),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            Err(BodyError::TooLarge { limit })
        }
        Ok(Err(e)) => Err(BodyError::Broken(e)),
    }
}
