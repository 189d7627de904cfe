//! Brute-force protection of sign-in: failed attempts are counted per
//! account (its email) and per client, and past a few of them each further
//! failure locks the account or the client out for twice as long as the
//! last, up to a cap. A locked-out attempt is refused with 429 before any
//! store work or password hashing. A successful sign-in clears the client's
//! and the account's count; a password reset clears the account's.
//!
//! With Redis the counts are shared by every node (one hash per account or
//! client); without, they are this node's. The lock's end is a time on the
//! node's clock kept in the hash, not a Redis expiry, so tests move it with
//! the clock. Written here rather than on the rate limiter: a GCRA bucket
//! cannot be cleared by a success, and its refusals do not grow.

use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use dashmap::DashMap;

use crate::redis_conn::RedisConn;
use crate::time::{Clock, Timestamp};

/// Failures of one account allowed before a lock-out.
pub const ACCOUNT_FREE_FAILURES: u32 = 5;
/// Failures of one client allowed before a lock-out (a client may be an
/// office behind one address, trying several accounts).
pub const CLIENT_FREE_FAILURES: u32 = 20;
/// The first lock-out; each further failure doubles it …
pub const FIRST_LOCKOUT: Duration = Duration::from_secs(30);
/// … up to this.
pub const MAX_LOCKOUT: Duration = Duration::from_secs(15 * 60);
/// Counts are forgotten after this long without a failure.
const FORGET_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Whose failures: an account's or a client's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    Account(String),
    Client(IpAddr),
}

impl Subject {
    fn free_failures(&self) -> u32 {
        match self {
            Subject::Account(_) => ACCOUNT_FREE_FAILURES,
            Subject::Client(_) => CLIENT_FREE_FAILURES,
        }
    }

    fn key(&self) -> String {
        match self {
            // The email is hashed: Redis keys are not a list of accounts.
            Subject::Account(email) => format!("account:{}", crate::auth::key::hash(email)),
            Subject::Client(ip) => format!("client:{ip}"),
        }
    }
}

/// How long a subject with `failures` failures stays locked out.
pub fn lockout_for(subject: &Subject, failures: u32) -> Option<Duration> {
    let over = failures.checked_sub(subject.free_failures())?;
    let doubled = FIRST_LOCKOUT.saturating_mul(1u32.checked_shl(over).unwrap_or(u32::MAX));
    Some(doubled.min(MAX_LOCKOUT))
}

#[derive(Debug, Clone, Copy, Default)]
struct Count {
    failures: u32,
    locked_until: Option<Timestamp>,
    last_failure: Option<Timestamp>,
}

/// Counts failed sign-ins; see the module's comment.
pub struct SignInGuard {
    redis: Option<(RedisConn, String)>,
    local: DashMap<Subject, Count>,
    /// Serialises this node's read-modify-write of a local count.
    local_writes: Mutex<()>,
    clock: Clock,
}

/// Adds a failure to the hash at KEYS[1] and returns the count. ARGV: the
/// hash's expiry in ms.
const RECORD_FAILURE: &str = r"
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return failures
";

impl SignInGuard {
    pub fn new(redis: Option<RedisConn>, prefix: &str, clock: Clock) -> Self {
        SignInGuard {
            redis: redis.map(|conn| (conn, format!("{prefix}signin:"))),
            local: DashMap::new(),
            local_writes: Mutex::new(()),
            clock,
        }
    }

    /// How long until `subject` may try again, if it is locked out now.
    pub async fn locked_for(&self, subject: &Subject) -> Option<Duration> {
        let now = self.clock.now();
        let until = match &self.redis {
            Some((conn, prefix)) => {
                let mut conn = conn.clone();
                let millis: Option<i64> = redis::cmd("HGET")
                    .arg(format!("{prefix}{}", subject.key()))
                    .arg("until")
                    .query_async(&mut conn)
                    .await
                    .ok()
                    .flatten();
                millis.and_then(from_millis)
            }
            None => self.local.get(subject).and_then(|count| count.locked_until),
        }?;
        (until.0 - now.0)
            .to_std()
            .ok()
            .filter(|left| !left.is_zero())
    }

    /// Counts a failure of `subject`; the lock-out it now has, if any.
    pub async fn record_failure(&self, subject: &Subject) -> Option<Duration> {
        let now = self.clock.now();
        let failures = match &self.redis {
            Some((conn, prefix)) => {
                let mut conn = conn.clone();
                let key = format!("{prefix}{}", subject.key());
                let failures: u32 = redis::Script::new(RECORD_FAILURE)
                    .key(&key)
                    .arg(u64::try_from(FORGET_AFTER.as_millis()).unwrap_or(u64::MAX))
                    .invoke_async(&mut conn)
                    .await
                    .ok()?;
                let lockout = lockout_for(subject, failures)?;
                let until = now.plus(lockout).0.timestamp_millis();
                let _: Result<(), _> = redis::cmd("HSET")
                    .arg(&key)
                    .arg("until")
                    .arg(until)
                    .query_async(&mut conn)
                    .await;
                return Some(lockout);
            }
            None => {
                let _serial = self.local_writes.lock().unwrap_or_else(|e| e.into_inner());
                let mut count = self.local.entry(subject.clone()).or_default();
                if count
                    .last_failure
                    .is_some_and(|last| last.plus(FORGET_AFTER) <= now)
                {
                    *count = Count::default();
                }
                count.failures += 1;
                count.last_failure = Some(now);
                let lockout = lockout_for(subject, count.failures);
                count.locked_until = lockout.map(|lockout| now.plus(lockout));
                count.failures
            }
        };
        lockout_for(subject, failures)
    }

    /// Forgets `subject`'s failures (a success, a reset).
    pub async fn clear(&self, subject: &Subject) {
        match &self.redis {
            Some((conn, prefix)) => {
                let mut conn = conn.clone();
                let _: Result<(), _> = redis::cmd("DEL")
                    .arg(format!("{prefix}{}", subject.key()))
                    .query_async(&mut conn)
                    .await;
            }
            None => {
                self.local.remove(subject);
            }
        }
    }
}

fn from_millis(millis: i64) -> Option<Timestamp> {
    chrono::DateTime::from_timestamp_millis(millis).map(Timestamp::from_datetime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lockouts_start_past_the_free_failures_and_double_to_a_cap() {
        let account = Subject::Account("ada@example.com".into());
        assert_eq!(lockout_for(&account, ACCOUNT_FREE_FAILURES - 1), None);
        assert_eq!(
            lockout_for(&account, ACCOUNT_FREE_FAILURES),
            Some(FIRST_LOCKOUT)
        );
        assert_eq!(
            lockout_for(&account, ACCOUNT_FREE_FAILURES + 2),
            Some(FIRST_LOCKOUT * 4)
        );
        assert_eq!(lockout_for(&account, 200), Some(MAX_LOCKOUT));
    }

    #[test]
    fn a_client_has_more_free_failures_than_an_account() {
        let client = Subject::Client("192.0.2.1".parse().expect("ip"));
        assert_eq!(lockout_for(&client, ACCOUNT_FREE_FAILURES), None);
        assert_eq!(
            lockout_for(&client, CLIENT_FREE_FAILURES),
            Some(FIRST_LOCKOUT)
        );
    }
}
