//! A socket's allowance of client frames: every frame it sends, of any
//! kind (`subscribe`, `ping`, one that is not even JSON), spends one, so no
//! kind of frame makes a socket run queries without end
//! (`SUPPORTDESK_SOCKET_FRAME_RATE`). A `message` frame spends its key's or
//! session's allowance besides. The socket holds its own bucket: GCRA as
//! the API's limiters, on the node's monotonic clock (tests move it on).

use std::time::Instant;

use crate::config::MessageRate;
use crate::ratelimit::gcra;

pub(super) struct FrameBudget {
    /// Where the bucket's microseconds count from.
    epoch: Instant,
    /// The theoretical arrival time (None: a full bucket).
    tat: Option<u64>,
}

impl FrameBudget {
    pub(super) fn new(now: Instant) -> Self {
        FrameBudget {
            epoch: now,
            tat: None,
        }
    }

    /// Spends one frame at `now`: None when allowed, else the whole seconds
    /// until the next one is.
    pub(super) fn spend(&mut self, now: Instant, rate: MessageRate) -> Option<u64> {
        let elapsed = now.saturating_duration_since(self.epoch);
        // +1 so that "now" is never the zero of a fresh bucket.
        let now_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX / 2) + 1;
        let window_us = u64::try_from(rate.window.as_micros()).unwrap_or(u64::MAX / 4);
        let (decision, next) = gcra::step(now_us, self.tat, rate.limit, window_us);
        if next.is_some() {
            self.tat = next;
        }
        (!decision.allowed).then_some(decision.retry_after_secs)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_burst_is_allowed_then_one_frame_per_interval() {
        let rate = MessageRate {
            limit: 3,
            window: Duration::from_secs(3),
        };
        let start = Instant::now();
        let mut budget = FrameBudget::new(start);
        for _ in 0..3 {
            assert_eq!(budget.spend(start, rate), None);
        }
        assert_eq!(budget.spend(start, rate), Some(1));
        assert_eq!(budget.spend(start + Duration::from_secs(1), rate), None);
        assert_eq!(budget.spend(start + Duration::from_secs(1), rate), Some(1));
    }
}
