//! The request as controllers see it.

use std::sync::{Mutex, OnceLock};

use bulwark_acl::Principal;
use bulwark_http::Peer;
use bytes::Bytes;
use http::request::Parts;

use crate::authenticate::Authenticated;
use crate::language::pick_language;
use crate::site::SiteRuntime;

/// What a controller knows about the request.
pub struct RequestCtx<'a> {
    pub parts: &'a Parts,
    /// Path arguments from the dispatch rule, percent-decoded.
    pub args: &'a [(String, String)],
    pub site: &'a SiteRuntime,
    /// The request body, already read within the size limit (when the controller
    /// reads bodies and the method has one).
    pub body: Bytes,
    /// The connection, for a controller that switches protocols (WebSocket).
    pub upgrade: Mutex<Option<hyper::upgrade::OnUpgrade>>,
    /// The body as it arrives, for a controller that streams it
    /// ([`Controller::streams_body`](crate::Controller::streams_body)).
    body_stream: Mutex<Option<hyper::body::Incoming>>,
    /// [`language`](Self::language) (its index in the site's languages), worked
    /// out on first use: the page cache key, the render and `Content-Language`
    /// all ask.
    language: OnceLock<usize>,
    /// Whether the URL named the language (`/nl/...`).
    language_in_url: bool,
    auth: Authenticated,
    peer: Peer,
}

impl<'a> RequestCtx<'a> {
    pub fn new(
        parts: &'a Parts,
        args: &'a [(String, String)],
        site: &'a SiteRuntime,
        body: Bytes,
        upgrade: Option<hyper::upgrade::OnUpgrade>,
        peer: Peer,
    ) -> RequestCtx<'a> {
        RequestCtx {
            parts,
            args,
            site,
            body,
            upgrade: Mutex::new(upgrade),
            body_stream: Mutex::new(None),
            language: OnceLock::new(),
            language_in_url: false,
            auth: Authenticated::anonymous(),
            peer,
        }
    }

    /// Hands the body over as it arrives (see `take_body_stream`).
    pub fn with_body_stream(self, stream: Option<hyper::body::Incoming>) -> Self {
        *self.body_stream.lock().unwrap_or_else(|e| e.into_inner()) = stream;
        self
    }

    /// The body as it arrives, once, for a controller that streams it; it
    /// keeps to its own size limit and time limit.
    pub fn take_body_stream(&self) -> Option<hyper::body::Incoming> {
        self.body_stream
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The body as it arrives, as a stream of its data (what `multer` and
    /// the like read), once; see [`take_body_stream`](Self::take_body_stream).
    pub fn take_body_chunks(
        &self,
    ) -> Option<
        impl futures_util::Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static,
    > {
        use futures_util::StreamExt;
        let body = self.take_body_stream()?;
        Some(
            http_body_util::BodyStream::new(body).filter_map(|frame| async move {
                match frame {
                    Ok(frame) => frame.into_data().ok().map(Ok),
                    Err(e) => Some(Err(std::io::Error::other(e))),
                }
            }),
        )
    }

    /// The request for a URL that names its language (`/nl/...`): the
    /// language of the site's with index `index`, whatever the browser asks.
    pub(crate) fn in_language(mut self, index: Option<usize>) -> RequestCtx<'a> {
        if let Some(index) = index {
            let _ = self.language.set(index);
            self.language_in_url = true;
        }
        self
    }

    /// How a render of this request reads texts (the language, then the
    /// site's fallbacks) and what its links start with (`/nl`, when the URL
    /// named the language).
    pub fn render_language(&self) -> bulwark_template::RenderLanguage {
        self.language();
        let index = self.language.get().copied().unwrap_or(0);
        self.site.languages().render(index, self.language_in_url)
    }

    /// The request as made by whom `auth` says (the site's authenticator).
    pub fn authenticated(mut self, auth: Authenticated) -> RequestCtx<'a> {
        self.auth = auth;
        self
    }

    /// The site language this visitor gets: the one their `Accept-Language`
    /// weighs most (`nl-BE` matches `nl`), else the site's first.
    pub fn language(&self) -> &str {
        let languages = &self.site.config().languages;
        let index = *self
            .language
            .get_or_init(|| pick_language(languages, &self.parts.headers));
        languages.get(index).map_or("en", String::as_str)
    }

    /// Who is asking: what renders, the API and push connections of this request
    /// may see and do (the site's authenticator decides; without one, anonymous).
    /// Only anonymous requests are served from the page cache.
    pub fn principal(&self) -> &Principal {
        &self.auth.principal
    }

    /// Who is asking and how they proved it (session, CSRF token).
    pub fn auth(&self) -> &Authenticated {
        &self.auth
    }

    /// The connection's other end: the visitor's address (or a proxy's, behind
    /// one), for limits per address.
    pub fn peer(&self) -> Peer {
        self.peer
    }

    /// A path argument of the dispatch rule (`{id}`, `{*path}`).
    pub fn arg(&self, name: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A query string parameter, as it was sent (not decoded).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.parts
            .uri
            .query()?
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}
