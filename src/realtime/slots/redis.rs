//! The socket caps shared by every node: one sorted set per credential,
//! `<prefix>sockets:<key>`, with one member per open socket scored by when
//! it expires (Redis's clock, in ms). A socket refreshes its member while it
//! lives and removes it when it ends; members of a node that died expire on
//! their own. Taking a place is one Lua call, so two nodes cannot both take
//! the last one.

use std::time::Duration;

use crate::redis_conn::RedisConn;
use redis::Script;

/// KEYS: the credential's set. ARGV: member, cap, ttl ms.
/// Drops expired members, then adds this one if fewer than `cap` remain.
const TAKE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// KEYS: the credential's set. ARGV: member, ttl ms.
const REFRESH: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

/// How long one call may take before the node decides locally.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);

pub struct RedisSlots {
    conn: RedisConn,
    /// `<prefix>sockets:`
    prefix: String,
    take: Script,
    refresh: Script,
}

impl RedisSlots {
    pub fn new(conn: RedisConn, prefix: &str) -> Self {
        RedisSlots {
            conn,
            prefix: format!("{prefix}sockets:"),
            take: Script::new(TAKE),
            refresh: Script::new(REFRESH),
        }
    }

    /// The Redis key of a credential's sockets (tests inspect it).
    pub fn redis_key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Adds `member` to `key`'s set unless `cap` live members are in it.
    pub(super) async fn take(
        &self,
        key: &str,
        member: &str,
        cap: usize,
        ttl: Duration,
    ) -> anyhow::Result<bool> {
        let mut invocation = self.take.key(self.redis_key(key));
        invocation.arg(member).arg(cap).arg(millis(ttl));
        let taken: i64 = bounded(invocation.invoke_async(&mut self.conn.clone())).await?;
        Ok(taken == 1)
    }

    /// Pushes `member`'s expiry `ttl` past now (re-adding it if it was lost).
    pub(super) async fn refresh(
        &self,
        key: &str,
        member: &str,
        ttl: Duration,
    ) -> anyhow::Result<()> {
        let mut invocation = self.refresh.key(self.redis_key(key));
        invocation.arg(member).arg(millis(ttl));
        let _: i64 = bounded(invocation.invoke_async(&mut self.conn.clone())).await?;
        Ok(())
    }

    pub(super) async fn release(&self, key: &str, member: &str) -> anyhow::Result<()> {
        let mut command = redis::cmd("ZREM");
        command.arg(self.redis_key(key)).arg(member);
        let _: i64 = bounded(command.query_async(&mut self.conn.clone())).await?;
        Ok(())
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX / 4)
        .max(1)
}

async fn bounded<T>(
    call: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> anyhow::Result<T> {
    let outcome = tokio::time::timeout(CALL_TIMEOUT, call)
        .await
        .map_err(|_| anyhow::anyhow!("socket slot call to Redis timed out"))
        .and_then(|result| result.map_err(anyhow::Error::from));
    if outcome.is_err() {
        crate::metrics::redis_error();
    }
    outcome
}
