//! The Redis limiter: the same GCRA as `gcra.rs`, in a Lua script run
//! atomically in Redis with Redis's clock, so every node shares one budget
//! per key. The key expires when its bucket is full again.
//!
//! A node does not ask Redis for every request: it leases a slice of a
//! key's allowance and spends it in memory (`lease.rs`, which also states
//! the bound this puts on the count across nodes). The requests that find
//! no lease go to one task per node, which asks Redis for all of them at
//! once: every check waiting at that moment (up to [`MAX_BATCH`]) in one
//! script call; while that call is out, the next checks gather for the
//! following one. The same task gives back what ended leases did not
//! spend. On a Redis Cluster the keys of a batch would live on different
//! masters, so there each key of a batch is a call of its own.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::Limiter;
use super::gcra::Decision;
use super::lease::{self, Bucket, Grant, Lease, Leases};
use crate::redis_conn::RedisConn;
use crate::time::Clock;

/// KEYS are the buckets; ARGV holds five numbers for each in turn: its
/// limit, its window (µs), the requests asked for, the unspent requests
/// of an ended lease given back, and that lease's TAT; then, last, the µs
/// the node's clock has been advanced (zero outside tests), added to
/// Redis's clock so a test moves buckets forward. A return gives back
/// at most the debt still ahead of "now" at the lease's TAT, so requests
/// the bucket already earned back by time are not credited twice. The
/// reply has five numbers per key: requests granted (as many as fit, up to
/// those asked), remaining, µs until full, µs until one more would fit,
/// and the TAT.
const SCRIPT: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[#ARGV])
local out = {}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[5 * i - 4])
  local window = tonumber(ARGV[5 * i - 3])
  local want = tonumber(ARGV[5 * i - 2])
  local back = tonumber(ARGV[5 * i - 1])
  local lease_tat = tonumber(ARGV[5 * i])
  local interval = math.max(math.floor(window / limit), 1)
  local capacity = interval * limit
  local tat = now
  local stored = redis.call('GET', key)
  if stored then tat = math.max(tonumber(stored), now) end
  local changed = false
  if back > 0 and stored then
    tat = math.max(tat - math.min(back * interval, math.max(lease_tat - now, 0)), now)
    changed = true
  end
  local room = math.floor((capacity - (tat - now)) / interval)
  local granted = math.max(math.min(want, room), 0)
  if granted > 0 then
    tat = tat + granted * interval
    changed = true
  end
  if changed then
    if tat > now then
      redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000))
    else
      redis.call('DEL', key)
    end
  end
  out[#out + 1] = granted
  out[#out + 1] = math.floor((capacity - (tat - now)) / interval)
  out[#out + 1] = tat - now
  out[#out + 1] = math.max(tat + interval - capacity - now, 0)
  out[#out + 1] = tat
end
return out
"#;

/// How long one limiter check may take before the node decides locally.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);

/// Checks one script call carries at most.
const MAX_BATCH: usize = 128;

/// Checks that may wait for the batching task before callers wait to queue.
const QUEUE: usize = 4096;

/// One entry of a script call: ask for `want` requests of the bucket at
/// `redis_key`, giving back `back` unspent requests of a lease whose TAT
/// was `lease_tat`.
struct Ask {
    redis_key: String,
    limit: u64,
    window_us: u64,
    want: u64,
    back: u64,
    lease_tat: u64,
}

/// A request that found no lease, waiting for its batch.
struct Queued {
    bucket: Bucket,
    limit: u64,
    window_us: u64,
    answer: oneshot::Sender<Result<Decision, String>>,
}

pub struct RedisLimiter {
    prefix: String,
    leases: Arc<Leases>,
    /// The batching task's queue.
    batches: mpsc::Sender<Queued>,
    /// Script calls made, for tests that check batching.
    calls: Arc<AtomicU64>,
    /// Give-backs of ended leases Redis has applied, for tests that wait
    /// for one.
    given_back: Arc<AtomicU64>,
}

impl RedisLimiter {
    /// Keys are `<prefix>rl:<key>`. Starts the batching task, which ends
    /// when the limiter is dropped; must be called within the runtime.
    /// Leases end by `clock` (the node's).
    pub fn new(conn: RedisConn, prefix: &str, clock: Clock) -> Self {
        let prefix = format!("{prefix}rl:");
        let calls = Arc::new(AtomicU64::new(0));
        let given_back = Arc::new(AtomicU64::new(0));
        let leases = Arc::new(Leases::new(clock.clone()));
        let (batches, waiting) = mpsc::channel(QUEUE);
        let batcher = Batcher {
            conn,
            script: redis::Script::new(SCRIPT),
            calls: calls.clone(),
            given_back: given_back.clone(),
            leases: leases.clone(),
            prefix: prefix.clone(),
            clock,
        };
        tokio::spawn(batcher.run(waiting));
        RedisLimiter {
            prefix,
            leases,
            batches,
            calls,
            given_back,
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

    /// How many times this node has given back what its ended leases did
    /// not spend (calls Redis answered).
    pub fn give_backs(&self) -> u64 {
        self.given_back.load(Ordering::SeqCst)
    }

    /// Spends one request of `bucket` through Redis (for a request that
    /// found no lease); an error when Redis does not answer in time.
    async fn ask(&self, bucket: Bucket, limit: u64, window_us: u64) -> anyhow::Result<Decision> {
        let decided = async {
            let (answer, answered) = oneshot::channel();
            let queued = Queued {
                bucket,
                limit,
                window_us,
                answer,
            };
            self.batches
                .send(queued)
                .await
                .map_err(|_| anyhow::anyhow!("rate limiter batching task stopped"))?;
            answered
                .await
                .map_err(|_| anyhow::anyhow!("rate limiter batch dropped"))?
                .map_err(anyhow::Error::msg)
        };
        tokio::time::timeout(CALL_TIMEOUT, decided)
            .await
            .map_err(|_| anyhow::anyhow!("rate limiter call to Redis timed out"))?
    }
}

/// A bucket's part of a batch: the requests that asked for it, in order.
struct Group {
    bucket: Bucket,
    limit: u64,
    window_us: u64,
    answers: Vec<oneshot::Sender<Result<Decision, String>>>,
}

/// The task that turns queued checks into script calls, and leases.
struct Batcher {
    conn: RedisConn,
    script: redis::Script,
    calls: Arc<AtomicU64>,
    given_back: Arc<AtomicU64>,
    leases: Arc<Leases>,
    prefix: String,
    /// The node's clock: Redis's is read moved by what it was advanced.
    clock: Clock,
}

impl Batcher {
    async fn run(self, mut waiting: mpsc::Receiver<Queued>) {
        let mut queued = Vec::with_capacity(MAX_BATCH);
        let mut returns = tokio::time::interval(lease::LIFETIME);
        returns.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                received = waiting.recv_many(&mut queued, MAX_BATCH) => {
                    if received == 0 {
                        break;
                    }
                    self.decide(&mut queued).await;
                }
                _ = returns.tick() => self.give_back_ended().await,
            }
        }
    }

    /// Answers one batch: from a lease a previous call just filled where
    /// one serves, else in one script call that asks, per bucket, for the
    /// batch's requests and a slice more.
    async fn decide(&self, queued: &mut Vec<Queued>) {
        let mut groups: Vec<Group> = Vec::new();
        let mut asks: Vec<Ask> = Vec::new();
        let mut index: HashMap<Bucket, usize> = HashMap::new();
        for waiting in queued.drain(..) {
            let Queued {
                bucket,
                limit,
                window_us,
                answer,
            } = waiting;
            if let Some(decision) = self.leases.spend(&bucket, limit, window_us) {
                let _ = answer.send(Ok(decision));
                continue;
            }
            if let Some(&at) = index.get(&bucket) {
                groups[at].answers.push(answer);
                asks[at].want += 1;
                continue;
            }
            let stale = self.leases.take_stale(&bucket, limit, window_us);
            index.insert(bucket.clone(), groups.len());
            asks.push(Ask {
                redis_key: bucket_key(&self.prefix, &bucket),
                limit,
                window_us,
                want: 1 + lease::spare_per_lease(limit),
                back: stale.as_ref().map_or(0, |lease| lease.unspent),
                lease_tat: stale.as_ref().map_or(0, |lease| lease.tat),
            });
            groups.push(Group {
                bucket,
                limit,
                window_us,
                answers: vec![answer],
            });
        }
        if groups.is_empty() {
            return;
        }
        let granted = self.call(&asks).await;
        match granted {
            Ok(grants) => {
                let now = self.leases.now();
                for (group, grant) in groups.into_iter().zip(grants) {
                    let (decisions, left) = lease::share_grant(
                        &grant,
                        group.limit,
                        group.window_us,
                        group.answers.len(),
                    );
                    if left > 0 {
                        let lease = Lease::new(left, group.limit, group.window_us, &grant, now);
                        self.leases.insert(group.bucket, lease);
                    }
                    for (answer, decision) in group.answers.into_iter().zip(decisions) {
                        // The caller may have given up (its own timeout).
                        let _ = answer.send(Ok(decision));
                    }
                }
            }
            Err(error) => {
                for answer in groups.into_iter().flat_map(|group| group.answers) {
                    let _ = answer.send(Err(error.clone()));
                }
            }
        }
    }

    /// Gives back to Redis what ended leases did not spend. A failed call
    /// loses them: the key refills a little later, never the other way.
    async fn give_back_ended(&self) {
        let asks: Vec<Ask> = self
            .leases
            .take_ended()
            .into_iter()
            .map(|(bucket, lease)| Ask {
                redis_key: bucket_key(&self.prefix, &bucket),
                limit: lease.limit,
                window_us: lease.window_us,
                want: 0,
                back: lease.unspent,
                lease_tat: lease.tat,
            })
            .collect();
        if asks.is_empty() {
            return;
        }
        match self.call(&asks).await {
            Ok(_) => {
                self.given_back.fetch_add(1, Ordering::SeqCst);
            }
            Err(error) => tracing::debug!(%error, "leased requests not given back to Redis"),
        }
    }

    /// One script call for `asks` (on a Redis Cluster, one per ask), with
    /// the call timeout.
    async fn call(&self, asks: &[Ask]) -> Result<Vec<Grant>, String> {
        let advanced_us = u64::try_from(self.clock.advanced().as_micros()).unwrap_or(u64::MAX);
        let decided = async {
            match &self.conn {
                RedisConn::Node(_) => {
                    call(&self.conn, &self.script, &self.calls, asks, advanced_us).await
                }
                _ => {
                    let calls = asks
                        .chunks(1)
                        .map(|one| call(&self.conn, &self.script, &self.calls, one, advanced_us));
                    let replies = futures::future::join_all(calls).await;
                    let grants: Result<Vec<Vec<Grant>>, String> = replies.into_iter().collect();
                    grants.map(|grants| grants.into_iter().flatten().collect())
                }
            }
        };
        tokio::time::timeout(CALL_TIMEOUT, decided)
            .await
            .unwrap_or_else(|_| Err("rate limiter call to Redis timed out".to_string()))
    }
}

/// Where `bucket` lives in Redis.
fn bucket_key(prefix: &str, bucket: &Bucket) -> String {
    match bucket {
        Bucket::ApiKey(id) => format!("{prefix}key:{id}"),
        Bucket::Named(name) => format!("{prefix}{name}"),
    }
}

/// One script call deciding `asks` in order, Redis's clock moved by
/// `advanced_us`.
async fn call(
    conn: &RedisConn,
    script: &redis::Script,
    calls: &AtomicU64,
    asks: &[Ask],
    advanced_us: u64,
) -> Result<Vec<Grant>, String> {
    let mut invocation = script.prepare_invoke();
    for ask in asks {
        invocation
            .key(ask.redis_key.as_str())
            .arg(ask.limit)
            .arg(ask.window_us)
            .arg(ask.want)
            .arg(ask.back)
            .arg(ask.lease_tat);
    }
    invocation.arg(advanced_us);
    calls.fetch_add(1, Ordering::Relaxed);
    let mut conn = conn.clone();
    let reply: Vec<i64> = invocation
        .invoke_async(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    if reply.len() != asks.len() * 5 {
        return Err(format!("unexpected rate limiter reply: {reply:?}"));
    }
    let non_negative = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(reply
        .chunks_exact(5)
        .map(|answer| Grant {
            granted: non_negative(answer[0]),
            remaining: non_negative(answer[1]),
            reset_us: non_negative(answer[2]),
            retry_us: non_negative(answer[3]),
            tat: non_negative(answer[4]),
        })
        .collect())
}

/// A limit of at least 1 and the window in µs, as leases and the script
/// take them.
fn normalized(limit: u64, window: Duration) -> (u64, u64) {
    let window_us = u64::try_from(window.as_micros()).unwrap_or(u64::MAX / 4);
    (limit.max(1), window_us)
}

impl Limiter for RedisLimiter {
    /// Spends one request of `key`'s shared allowance: from this node's
    /// lease, or else through Redis.
    async fn check(&self, key: &str, limit: u64, window: Duration) -> anyhow::Result<Decision> {
        let (limit, window_us) = normalized(limit, window);
        match self.leases.spend_named(key, limit, window_us) {
            Some(decision) => Ok(decision),
            None => Box::pin(self.ask(Bucket::Named(key.to_owned()), limit, window_us)).await,
        }
    }

    /// The bucket is `key:<id>`, as `check` would name it.
    async fn check_api_key(
        &self,
        key_id: Uuid,
        limit: u64,
        window: Duration,
    ) -> anyhow::Result<Decision> {
        let (limit, window_us) = normalized(limit, window);
        match self.leases.spend_api_key(key_id, limit, window_us) {
            Some(decision) => Ok(decision),
            // Boxed (as in `check`): asking Redis is the rare path, and its
            // future would otherwise size every authenticated request's.
            None => Box::pin(self.ask(Bucket::ApiKey(key_id), limit, window_us)).await,
        }
    }
}
