//! The Redis limiter: the same GCRA as `gcra.rs`, in a Lua script run
//! atomically in Redis with Redis's clock, so every node shares one budget
//! per key. The key expires when its bucket is full again.
//!
//! On a single Redis the checks of one node are batched: one task sends
//! every check waiting at that moment in one script call (up to
//! [`MAX_BATCH`]) and, while that call is out, the next checks gather for
//! the following one. A lone request still costs one round trip; under
//! load, many requests share one, and Redis runs one script per batch
//! instead of one per request. The script takes the batch's checks in
//! order, so two checks of one key in a batch see each other's spending.
//! On a Redis Cluster the keys of a batch would live on different masters,
//! so there each check is a call of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::Limiter;
use super::gcra::Decision;
use crate::redis_conn::RedisConn;

/// KEYS are the buckets, ARGV holds each one's limit and window (µs) in
/// turn; the reply has four numbers per key: allowed (1/0), remaining,
/// µs until full, µs until the next request is allowed.
const SCRIPT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local window = tonumber(ARGV[2 * i])
  local interval = math.max(math.floor(window / limit), 1)
  local capacity = interval * limit
  local tat = now
  local stored = redis.call('GET', key)
  if stored then tat = math.max(tonumber(stored), now) end
  local new_tat = tat + interval
  if new_tat - now > capacity then
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = tat - now
    out[#out + 1] = new_tat - capacity - now
  else
    redis.call('SET', key, string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
    out[#out + 1] = 1
    out[#out + 1] = math.floor((capacity - (new_tat - now)) / interval)
    out[#out + 1] = new_tat - now
    out[#out + 1] = 0
  end
end
return out
"#;

/// How long one limiter check may take before the node decides locally.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);

/// Checks one script call carries at most.
const MAX_BATCH: usize = 128;

/// Checks that may wait for the batching task before callers wait to queue.
const QUEUE: usize = 4096;

/// One check: spend one request of the bucket at `redis_key`.
struct Check {
    redis_key: String,
    limit: u64,
    window_us: u64,
}

/// A check waiting in the queue for its batch, and where its answer goes.
struct Queued {
    check: Check,
    answer: oneshot::Sender<Result<Decision, String>>,
}

pub struct RedisLimiter {
    conn: RedisConn,
    script: Arc<redis::Script>,
    prefix: String,
    /// The batching task's queue; None on a cluster (or outside a runtime).
    batches: Option<mpsc::Sender<Queued>>,
    /// Script calls made, for tests that check batching.
    calls: Arc<AtomicU64>,
}

impl RedisLimiter {
    /// Keys are `<prefix>rl:<key>`. On a single Redis, starts the batching
    /// task (it ends when the limiter is dropped).
    pub fn new(conn: RedisConn, prefix: &str) -> Self {
        let script = Arc::new(redis::Script::new(SCRIPT));
        let calls = Arc::new(AtomicU64::new(0));
        let runtime = tokio::runtime::Handle::try_current().ok();
        let batches = match (&conn, runtime) {
            (RedisConn::Node(_), Some(runtime)) => {
                let (queue, waiting) = mpsc::channel(QUEUE);
                let batcher = Batcher {
                    conn: conn.clone(),
                    script: script.clone(),
                    calls: calls.clone(),
                };
                runtime.spawn(batcher.run(waiting));
                Some(queue)
            }
            _ => None,
        };
        RedisLimiter {
            conn,
            script,
            prefix: format!("{prefix}rl:"),
            batches,
            calls,
        }
    }

    /// The Redis key of a bucket (tests inspect it).
    pub fn redis_key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// How many script calls this limiter has made.
    pub fn script_calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Spends one request of the bucket stored at `redis_key`; an error when
    /// Redis does not answer in time.
    async fn spend(
        &self,
        redis_key: String,
        limit: u64,
        window: Duration,
    ) -> anyhow::Result<Decision> {
        let check = Check {
            redis_key,
            limit: limit.max(1),
            window_us: u64::try_from(window.as_micros()).unwrap_or(u64::MAX / 4),
        };
        let decided = async {
            match &self.batches {
                Some(queue) => {
                    let (answer, answered) = oneshot::channel();
                    queue
                        .send(Queued { check, answer })
                        .await
                        .map_err(|_| anyhow::anyhow!("rate limiter batching task stopped"))?;
                    answered
                        .await
                        .map_err(|_| anyhow::anyhow!("rate limiter batch dropped"))?
                        .map_err(anyhow::Error::msg)
                }
                None => {
                    let batch = [check];
                    let mut decisions = call(&self.conn, &self.script, &self.calls, &batch)
                        .await
                        .map_err(anyhow::Error::msg)?;
                    decisions
                        .pop()
                        .ok_or_else(|| anyhow::anyhow!("empty rate limiter reply"))
                }
            }
        };
        tokio::time::timeout(CALL_TIMEOUT, decided)
            .await
            .map_err(|_| anyhow::anyhow!("rate limiter call to Redis timed out"))?
    }
}

/// The task that turns queued checks into script calls.
struct Batcher {
    conn: RedisConn,
    script: Arc<redis::Script>,
    calls: Arc<AtomicU64>,
}

impl Batcher {
    async fn run(self, mut waiting: mpsc::Receiver<Queued>) {
        let mut queued = Vec::with_capacity(MAX_BATCH);
        let mut checks = Vec::with_capacity(MAX_BATCH);
        while waiting.recv_many(&mut queued, MAX_BATCH).await > 0 {
            let mut answers = Vec::with_capacity(queued.len());
            for Queued { check, answer } in queued.drain(..) {
                checks.push(check);
                answers.push(answer);
            }
            let decided = tokio::time::timeout(
                CALL_TIMEOUT,
                call(&self.conn, &self.script, &self.calls, &checks),
            )
            .await
            .unwrap_or_else(|_| Err("rate limiter call to Redis timed out".to_string()));
            checks.clear();
            match decided {
                Ok(decisions) => {
                    for (answer, decision) in answers.into_iter().zip(decisions) {
                        // The caller may have given up (its own timeout).
                        let _ = answer.send(Ok(decision));
                    }
                }
                Err(error) => {
                    for answer in answers {
                        let _ = answer.send(Err(error.clone()));
                    }
                }
            }
        }
    }
}

/// One script call deciding `checks` in order.
async fn call(
    conn: &RedisConn,
    script: &redis::Script,
    calls: &AtomicU64,
    checks: &[Check],
) -> Result<Vec<Decision>, String> {
    let mut invocation = script.prepare_invoke();
    for check in checks {
        invocation
            .key(check.redis_key.as_str())
            .arg(check.limit)
            .arg(check.window_us);
    }
    calls.fetch_add(1, Ordering::Relaxed);
    let mut conn = conn.clone();
    let reply: Vec<i64> = invocation
        .invoke_async(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    if reply.len() != checks.len() * 4 {
        return Err(format!("unexpected rate limiter reply: {reply:?}"));
    }
    let non_negative = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(reply
        .chunks_exact(4)
        .zip(checks)
        .map(|(answer, check)| {
            Decision::from_micros(
                answer[0] == 1,
                check.limit,
                non_negative(answer[1]),
                non_negative(answer[2]),
                non_negative(answer[3]),
            )
        })
        .collect())
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
