//! The crate's one error: a render or a template load that failed, with what kind
//! of failure it is and where in which template it happened.
//!
//! The kind decides the answer (the web layer maps it to a status in one place):
//! a missing page is a 404, a busy or absent database a 503, anything else a 500.
//! The location and the source excerpt are for the developer.

use bulwark_store::StoreError;
use minijinja::ErrorKind;

/// What kind of failure a [`RenderError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderErrorKind {
    /// The template does not exist at all (as opposed to being broken).
    TemplateNotFound,
    /// The template, or one it uses, does not compile.
    Syntax,
    /// The render used up its fuel: a runaway loop was stopped.
    OutOfFuel,
    /// The template called `not_found()`: the page answers `404`.
    PageMissing,
    /// The database was busy (its pool's deadline passed) or could not be
    /// reached: a `503`, try again, not a broken page.
    StoreBusy,
    /// The database failed.
    StoreFailed,
    /// Anything else: an unknown filter, a bad argument, a failed controller.
    Other,
}

impl RenderErrorKind {
    /// What a store error does to a render, if it spoils it: the database being
    /// away or busy does, a question the store refuses (a malformed key) does not.
    pub(crate) fn of_store_error(e: &StoreError) -> Option<RenderErrorKind> {
        if e.is_temporary() {
            Some(RenderErrorKind::StoreBusy)
        } else if matches!(e, StoreError::Database(_)) {
            Some(RenderErrorKind::StoreFailed)
        } else {
            None
        }
    }
}

/// Where in which template an error happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub template: String,
    pub line: Option<usize>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.template),
            None => f.write_str(&self.template),
        }
    }
}

/// What `not_found()` raises: the render stops and the page answers 404.
#[derive(Debug, thiserror::Error)]
#[error("the template called not_found()")]
pub(crate) struct PageMissing;

/// A template that could not be loaded or rendered, with where and why.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct RenderError {
    pub kind: RenderErrorKind,
    /// The innermost place the error happened (an include inside a layout...).
    pub location: Option<Location>,
    pub message: String,
    /// The source excerpt around the error, for development error pages.
    pub detail: String,
    #[source]
    source: Option<minijinja::Error>,
}

impl RenderError {
    /// An error that did not come from a template (a redirect whose target
    /// cannot be built...).
    pub fn other(message: impl Into<String>) -> RenderError {
        RenderError {
            kind: RenderErrorKind::Other,
            location: None,
            message: message.into(),
            detail: String::new(),
            source: None,
        }
    }
}

impl From<minijinja::Error> for RenderError {
    fn from(err: minijinja::Error) -> Self {
        // The innermost error is where the problem is (an include inside a layout...).
        let mut innermost: &minijinja::Error = &err;
        let mut messages = vec![err.to_string()];
        let mut kinds = vec![err.kind()];
        let mut page_missing = false;
        let mut store = None;
        loop {
            let source = std::error::Error::source(innermost);
            if let Some(e) = source.and_then(|s| s.downcast_ref::<StoreError>()) {
                store = store.or(RenderErrorKind::of_store_error(e));
            }
            page_missing |= source.is_some_and(|s| s.is::<PageMissing>());
            let Some(next) = source.and_then(|s| s.downcast_ref::<minijinja::Error>()) else {
                break;
            };
            messages.push(next.to_string());
            kinds.push(next.kind());
            innermost = next;
        }
        let kind = if page_missing {
            RenderErrorKind::PageMissing
        } else if let Some(store) = store {
            store
        } else if kinds.contains(&ErrorKind::OutOfFuel) {
            RenderErrorKind::OutOfFuel
        } else if err.kind() == ErrorKind::TemplateNotFound {
            RenderErrorKind::TemplateNotFound
        } else if kinds.contains(&ErrorKind::SyntaxError) {
            RenderErrorKind::Syntax
        } else {
            RenderErrorKind::Other
        };
        let located = if innermost.line().is_some() {
            innermost
        } else {
            &err
        };
        RenderError {
            kind,
            location: located.name().map(|template| Location {
                template: template.to_string(),
                line: located.line(),
            }),
            message: messages.join("\n  caused by: "),
            detail: format!("{}", located.display_debug_info()),
            source: Some(err),
        }
    }
}
