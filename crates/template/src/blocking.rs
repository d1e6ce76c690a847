//! Blocking work on an async runtime.
//!
//! Renders are synchronous (minijinja's lookups are), and so are the store reads
//! they make. On a multi-threaded runtime the thread is first handed over with
//! `block_in_place`, so the runtime keeps serving others while it waits.

/// Runs blocking work (store reads, renders) without stalling a runtime worker:
/// `block_in_place` on a multi-threaded runtime, inline elsewhere.
pub fn off_the_runtime<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}
