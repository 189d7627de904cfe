//! A write made at most once per period per record on this node: a key's
//! `lastUsedAt` and a session's `lastSeenAt` are recorded this way, so
//! authentication never writes per request.

use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::ratelimit::HotMap;

/// Remembered records are swept past this many.
const SWEEP_ABOVE: usize = 10_000;

/// When this node last made the write of each record.
#[derive(Default)]
pub struct WriteThrottle {
    last: HotMap<Uuid, Instant>,
}

impl WriteThrottle {
    /// Whether the write of record `id` is due at `now` (none for it in the
    /// last `every`); when it is, `now` is remembered as its last.
    pub fn due(&self, id: Uuid, now: Instant, every: Duration) -> bool {
        let mut due = false;
        self.last
            .entry(id)
            .and_modify(|at| {
                if now.duration_since(*at) >= every {
                    *at = now;
                    due = true;
                }
            })
            .or_insert_with(|| {
                due = true;
                now
            });
        if due && self.last.len() > SWEEP_ABOVE {
            self.last.retain(|_, at| now.duration_since(*at) < every);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_due_once_per_period() {
        let throttle = WriteThrottle::default();
        let (id, start) = (Uuid::nil(), Instant::now());
        let every = Duration::from_secs(60);
        assert!(throttle.due(id, start, every));
        assert!(!throttle.due(id, start + Duration::from_secs(59), every));
        assert!(throttle.due(id, start + every, every));
    }
}
