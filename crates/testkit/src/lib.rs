//! What Bulwark's integration tests share, a dev-dependency only.
//!
//! A test that needs something to have happened (a change event applied, a
//! mail sent, a node heard) waits for that fact, not for an amount of time: a
//! sleep long enough on a busy machine is wasted everywhere else, and one
//! short enough everywhere else fails on a busy machine. [`eventually`] asks
//! the observable state again every few milliseconds until it holds and
//! fails the test, naming what never happened, at a generous deadline.
//!
//! A test that waits for a timer to expire (a token older than its
//! lifetime, a rate-limit window) does sleep, for that timer's length, and
//! says which timer it waits for; that is not what this crate is for.
//!
//! It deliberately holds no fixtures: servers, sites and clients stay with
//! the tests that use them.

use std::future::Future;
use std::time::{Duration, Instant};

/// How long to wait between two looks: short, since it only bounds how late a
/// test notices a fact, never whether it does.
const POLL: Duration = Duration::from_millis(20);

/// Asks `check` until it answers `Some`, and returns that answer.
///
/// Panics with `what` (the fact waited for) if `within` passes first.
pub async fn eventually<T, F, Fut>(what: &str, within: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "not within {within:?}: {what}");
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`] for a test without a runtime (or a check that blocks).
pub fn eventually_blocking<T>(
    what: &str,
    within: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(Instant::now() < deadline, "not within {within:?}: {what}");
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn returns_the_first_answer() {
        let asked = AtomicU32::new(0);
        let n = eventually("the third look", Duration::from_secs(5), || async {
            let n = asked.fetch_add(1, Ordering::SeqCst) + 1;
            (n == 3).then_some(n)
        })
        .await;
        assert_eq!(n, 3);
    }

    #[tokio::test]
    #[should_panic(expected = "the moon turned green")]
    async fn names_what_never_happened() {
        eventually(
            "the moon turned green",
            Duration::from_millis(50),
            || async { None::<()> },
        )
        .await;
    }

    #[test]
    fn blocking_returns_the_first_answer() {
        let mut asked = 0;
        let n = eventually_blocking("the second look", Duration::from_secs(5), || {
            asked += 1;
            (asked == 2).then_some(asked)
        });
        assert_eq!(n, 2);
    }
}
