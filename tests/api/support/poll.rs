//! The one way a test waits for something it can observe (a row, a frame,
//! a counter, a process answering): poll a check, with a short pause
//! between tries, until it passes or a bound runs out. A fixed sleep would
//! either wait longer than needed or, on a loaded machine, too little.

use std::time::Duration;

/// How long `eventually` waits: far longer than anything a test waits for
/// takes on a quiet machine, so only a real failure runs it out.
pub const LIMIT: Duration = Duration::from_secs(10);

/// The pause between tries: short, so a wait ends soon after its condition
/// holds, and long enough not to flood what the check reads.
const PAUSE: Duration = Duration::from_millis(25);

/// What a check answers: `true`, or `Some(value)` when the value waited for
/// is there (a response, a frame), which the wait then hands back.
pub trait Outcome {
    type Value;
    fn passed(self) -> Option<Self::Value>;
}

impl Outcome for bool {
    type Value = ();
    fn passed(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Outcome for Option<T> {
    type Value = T;
    fn passed(self) -> Option<T> {
        self
    }
}

/// Polls `check` until it passes and answers what it found; panics naming
/// `what` once `LIMIT` has passed.
pub async fn eventually<R: Outcome>(what: &str, check: impl AsyncFnMut() -> R) -> R::Value {
    eventually_within(what, LIMIT, check).await
}

/// `eventually` with a bound of its own: a wait the test asserts ends
/// within a time (before a cache entry expires, say), or one known to take
/// longer than `LIMIT` (a server restarting).
pub async fn eventually_within<R: Outcome>(
    what: &str,
    limit: Duration,
    mut check: impl AsyncFnMut() -> R,
) -> R::Value {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(value) = check().await.passed() {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {limit:?} waiting for: {what}"
        );
        tokio::time::sleep(PAUSE).await;
    }
}
