//! The GCRA arithmetic shared by both limiters (the Lua script repeats it).
//! All times are integer microseconds, so both implementations agree
//! exactly and the Lua version never meets floating-point rounding.
//!
//! A key with `limit` requests per `window` earns one request every
//! `interval = window / limit`; the bucket holds `limit` requests, so the
//! whole allowance may be spent at once. The only state is the theoretical
//! arrival time (TAT): the moment the bucket would be full again.

/// The outcome of one request against a limit, as the headers show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// The key's limit per window.
    pub limit: u64,
    /// Requests that could still be made right now.
    pub remaining: u64,
    /// Whole seconds until the allowance is full again.
    pub reset_secs: u64,
    /// Whole seconds until the next request is allowed (0 when allowed).
    pub retry_after_secs: u64,
}

impl Decision {
    /// Builds a decision from the raw microsecond values of a limiter.
    pub fn from_micros(
        allowed: bool,
        limit: u64,
        remaining: u64,
        reset_us: u64,
        retry_us: u64,
    ) -> Self {
        Decision {
            allowed,
            limit,
            remaining,
            reset_secs: ceil_secs(reset_us),
            retry_after_secs: if allowed {
                0
            } else {
                ceil_secs(retry_us).max(1)
            },
        }
    }
}

fn ceil_secs(us: u64) -> u64 {
    us.div_ceil(1_000_000)
}

/// The microseconds between two earned requests (at least 1).
pub fn interval_us(limit: u64, window_us: u64) -> u64 {
    (window_us / limit.max(1)).max(1)
}

/// One GCRA step at `now` (µs) with the stored TAT (None: full bucket).
/// Returns the decision and, when allowed, the TAT to store.
pub fn step(
    now: u64,
    stored_tat: Option<u64>,
    limit: u64,
    window_us: u64,
) -> (Decision, Option<u64>) {
    let limit = limit.max(1);
    let interval = interval_us(limit, window_us);
    // The bucket holds exactly `limit` intervals (rounding never adds a request).
    let capacity = interval * limit;
    let tat = stored_tat.map_or(now, |t| t.max(now));
    let new_tat = tat + interval;
    if new_tat - now > capacity {
        let retry = new_tat - capacity - now;
        let decision = Decision::from_micros(false, limit, 0, tat - now, retry);
        return (decision, None);
    }
    let remaining = (capacity - (new_tat - now)) / interval;
    let decision = Decision::from_micros(true, limit, remaining, new_tat - now, 0);
    (decision, Some(new_tat))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = 3_600_000_000;

    #[test]
    fn whole_allowance_at_once_then_one_per_interval() {
        let mut tat = None;
        for expected_remaining in (0..5).rev() {
            let (d, next) = step(1_000, tat, 5, HOUR);
            assert!(d.allowed);
            assert_eq!(d.remaining, expected_remaining);
            tat = next;
        }
        let (d, next) = step(1_000, tat, 5, HOUR);
        assert!(!d.allowed);
        assert_eq!(next, None);
        assert_eq!(d.retry_after_secs, 720);
        assert_eq!(d.reset_secs, 3600);
        // One interval later exactly one request is earned back.
        let later = 1_000 + 720_000_000;
        let (d, next) = step(later, tat, 5, HOUR);
        assert!(d.allowed);
        assert_eq!(d.remaining, 0);
        assert!(!step(later, next, 5, HOUR).0.allowed);
    }

    #[test]
    fn fresh_key_reports_limit_minus_one_and_one_interval_to_reset() {
        let (d, _) = step(5, None, 1000, HOUR);
        assert_eq!((d.limit, d.remaining, d.reset_secs), (1000, 999, 4));
    }

    #[test]
    fn no_double_burst_after_an_idle_period() {
        let (_, tat) = step(0, None, 3, HOUR);
        // Long idle: the bucket is full, never fuller.
        let now = 10 * HOUR;
        let mut tat = tat;
        let mut allowed = 0;
        for _ in 0..10 {
            let (d, next) = step(now, tat, 3, HOUR);
            if d.allowed {
                allowed += 1;
                tat = next;
            }
        }
        assert_eq!(allowed, 3);
    }
}
