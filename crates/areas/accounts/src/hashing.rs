//! Where password hashing runs: on tokio's blocking pool, a few at a time.
//!
//! Each argon2id run holds 19 MiB and one core for tens of milliseconds.
//! The blocking pool would start one thread per waiting sign-in (up to
//! 512), so a burst of sign-ins held 19 MiB each at once while all of them
//! shared the same cores: sixteen at a time took the service from 55 to
//! 323 MiB. Runs take a turn here instead, as many at once as there are
//! cores; the cores were the limit anyway, so throughput is the same and
//! memory stays at a few runs' worth.

use std::sync::LazyLock;

use tokio::sync::Semaphore;

/// Turns for hashing work: at most `permits` runs at once.
pub struct HashingTurns(Semaphore);

/// The process's turns, one per core.
static TURNS: LazyLock<HashingTurns> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    HashingTurns::new(cores)
});

impl HashingTurns {
    pub fn new(permits: usize) -> Self {
        HashingTurns(Semaphore::new(permits.max(1)))
    }

    /// Runs `work` on the blocking pool once a turn is free; None if the
    /// work panicked.
    pub async fn run<T, F>(&self, work: F) -> Option<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let _turn = self.0.acquire().await.ok()?;
        tokio::task::spawn_blocking(work).await.ok()
    }
}

/// Runs password hashing or verification `work` in the process's turns
/// (see the module's notes); None if it panicked.
pub async fn in_turn<T, F>(work: F) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    TURNS.run(work).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_run_waits_while_every_turn_is_taken() {
        let turns = std::sync::Arc::new(HashingTurns::new(1));
        let (release, held) = std::sync::mpsc::channel::<()>();
        let first = {
            let turns = turns.clone();
            tokio::spawn(async move { turns.run(move || held.recv().is_ok()).await })
        };
        // The first run has its turn once the semaphore has no permit left.
        while turns.0.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let mut second = Box::pin(turns.run(|| 2));
        assert!(futures::poll!(second.as_mut()).is_pending());
        release.send(()).expect("release the first run");
        assert_eq!(first.await.expect("first task"), Some(true));
        assert_eq!(second.await, Some(2));
    }
}
