//! Asking for every site to be loaded again from inside a request (the admin
//! changed a `site.toml`), answered by the task that owns the sites
//! (`sites.rs`). Here, apart from `Sites`, so that a running site can hold the
//! handle without knowing the host table.

use crate::error::LoadError;

/// Why a reload was not whole.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    #[error("the server is shutting down")]
    ShuttingDown,
    /// Sites that did not load (they run as they were; the others were
    /// loaded again).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Refused(Vec<LoadError>),
}

/// What the owner of the sites answers one request with.
pub(crate) type ReloadReply = tokio::sync::oneshot::Sender<Result<(), ReloadError>>;

/// Asks for every site to be loaded again and waits for the outcome.
#[derive(Debug, Clone)]
pub struct ReloadHandle(pub(crate) tokio::sync::mpsc::Sender<ReloadReply>);

impl ReloadHandle {
    pub async fn reload(&self) -> Result<(), ReloadError> {
        let (reply, outcome) = tokio::sync::oneshot::channel();
        self.0
            .send(reply)
            .await
            .map_err(|_| ReloadError::ShuttingDown)?;
        outcome.await.map_err(|_| ReloadError::ShuttingDown)?
    }
}
