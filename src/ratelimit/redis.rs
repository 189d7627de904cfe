//! The Redis limiter: the same GCRA as `gcra.rs`, in one Lua script run
//! atomically per request, with Redis's clock, so every node shares one
//! budget per key. The key expires when its bucket is full again.

use std::time::Duration;

use crate::redis_conn::RedisConn;
use uuid::Uuid;

use super::Limiter;
use super::gcra::Decision;

const SCRIPT: &str = r#"
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local interval = math.max(math.floor(window / limit), 1)
local capacity = interval * limit
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = now
local stored = redis.call('GET', KEYS[1])
if stored then tat = math.max(tonumber(stored), now) end
local new_tat = tat + interval
if new_tat - now > capacity then
  return {0, 0, tat - now, new_tat - capacity - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return {1, math.floor((capacity - (new_tat - now)) / interval), new_tat - now, 0}
"#;

/// How long one limiter call may take before the node decides locally.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);

pub struct RedisLimiter {
    conn: RedisConn,
    script: redis::Script,
    prefix: String,
}

impl RedisLimiter {
    /// Keys are `<prefix>rl:<key>`.
    pub fn new(conn: RedisConn, prefix: &str) -> Self {
        RedisLimiter {
            conn,
            script: redis::Script::new(SCRIPT),
            prefix: format!("{prefix}rl:"),
        }
    }

    /// The Redis key of a bucket (tests inspect it).
    pub fn redis_key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Spends one request of the bucket stored at `redis_key`; an error when
    /// Redis does not answer in time.
    async fn spend(
        &self,
        redis_key: String,
        limit: u64,
        window: Duration,
    ) -> anyhow::Result<Decision> {
        let mut conn = self.conn.clone();
        let window_us = u64::try_from(window.as_micros()).unwrap_or(u64::MAX / 4);
        let mut invocation = self.script.key(redis_key);
        invocation.arg(limit.max(1)).arg(window_us);
        let reply: Vec<i64> =
            tokio::time::timeout(CALL_TIMEOUT, invocation.invoke_async(&mut conn))
                .await
                .map_err(|_| anyhow::anyhow!("rate limiter call to Redis timed out"))??;
        let [allowed, remaining, reset_us, retry_us] = reply[..] else {
            anyhow::bail!("unexpected rate limiter reply: {reply:?}");
        };
        let non_negative = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(Decision::from_micros(
            allowed == 1,
            limit.max(1),
            non_negative(remaining),
            non_negative(reset_us),
            non_negative(retry_us),
        ))
    }
}

impl Limiter for RedisLimiter {
    /// Spends one request of `key`'s shared allowance.
    async fn check(&self, key: &str, limit: u64, window: Duration) -> anyhow::Result<Decision> {
        self.spend(self.redis_key(key), limit, window).await
    }

    /// The bucket is `key:<id>`, as `check` would name it.
    async fn check_api_key(
        &self,
        key_id: Uuid,
        limit: u64,
        window: Duration,
    ) -> anyhow::Result<Decision> {
        let redis_key = format!("{}key:{key_id}", self.prefix);
        self.spend(redis_key, limit, window).await
    }
}
