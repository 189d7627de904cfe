//! Presence in Redis, shared by every node, in keys that Redis Cluster can
//! serve: each script touches only keys it is given (`KEYS`), and the keys
//! one script touches share a hash tag, so they live in one slot.
//!
//! Per company (`<prefix>presence:{<company>}:…`, tag `{<company>}`): a
//! sorted set of its agents (`<mode>:<user>`) scored by expiry (Redis's
//! clock, ms), a hash of their last records (so an expired agent can
//! still be announced by name), and a sorted set of its PUBLIC agents with
//! the same scores, which routing reads on every new chat without decoding
//! a record. An agent is online while its score is in the future.
//!
//! Across companies, `<prefix>presence:due` (its own slot): companies
//! scored by when one of their agents may next expire, so the sweeper on
//! every node looks only at companies with something due. A heartbeat
//! lowers its company's score to its agent's expiry (`ZADD LT`, Redis 6.2)
//! after writing the agent, so the score never lies past a live agent's
//! expiry. The sweeper claims due companies by parking their score a few
//! seconds ahead (a sweep cut short is retried then), claims their expired
//! agents atomically (each expiry is announced once), and sets the score
//! to the earliest expiry left, or removes a company with none left and
//! then looks again (a heartbeat in between re-adds it itself, or is seen).

use std::time::Duration;

use crate::redis_conn::RedisConn;
use redis::Script;
use uuid::Uuid;

use super::AgentPresence;
use crate::auth::{Mode, Tenant};
use crate::error::StoreError;
use crate::time::Clock;

pub struct RedisPresence {
    pub(super) conn: RedisConn,
    /// `<prefix>presence:`
    pub(super) prefix: String,
    pub(super) ttl: Duration,
    /// Every script reads Redis's clock plus what this clock has been
    /// advanced (zero outside tests), its last argument: a test moves
    /// presence's time forward the way it moves the node's.
    pub(super) clock: Clock,
    pub(super) scripts: Scripts,
}

/// The Lua scripts, hashed once (invoked by EVALSHA, loaded on demand).
pub(super) struct Scripts {
    pub(super) heartbeat: Script,
    pub(super) remove: Script,
    pub(super) online: Script,
    pub(super) available: Script,
    pub(super) due: Script,
    pub(super) sweep: Script,
}

/// KEYS: company expiry zset, company last-known hash, company PUBLIC zset.
/// ARGV: record, ttl ms, member (`mode:user`), `1` if PUBLIC else `0`,
/// advanced ms (every script's last: see `RedisPresence::clock`).
/// Returns the record it replaced if that was live, and the new expiry.
pub(super) const HEARTBEAT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[5])
local expiry = now + tonumber(ARGV[2])
local old = false
local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
if score and tonumber(score) > now then
  old = redis.call('HGET', KEYS[2], ARGV[3])
end
redis.call('ZADD', KEYS[1], expiry, ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[3], expiry, ARGV[3])
else
  redis.call('ZREM', KEYS[3], ARGV[3])
end
return {old, tostring(expiry)}
";

/// KEYS: company expiry zset, company last-known hash, company PUBLIC zset.
/// ARGV: member, advanced ms. Returns the record it removed if that was live.
pub(super) const REMOVE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local old = false
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) > now then
  old = redis.call('HGET', KEYS[2], ARGV[1])
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return old
";

/// KEYS: company expiry zset, company last-known hash. ARGV: `mode:`,
/// advanced ms.
/// The records of the mode's live agents.
pub(super) const ONLINE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
local out = {}
for _, member in ipairs(members) do
  if string.sub(member, 1, #ARGV[1]) == ARGV[1] then
    local record = redis.call('HGET', KEYS[2], member)
    if record then table.insert(out, record) end
  end
end
return out
";

/// KEYS: company PUBLIC zset. ARGV: `mode:`, advanced ms.
/// The user ids of the mode's live PUBLIC agents.
pub(super) const AVAILABLE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
local out = {}
for _, member in ipairs(members) do
  if string.sub(member, 1, #ARGV[1]) == ARGV[1] then
    table.insert(out, string.sub(member, #ARGV[1] + 1))
  end
end
return out
";

/// KEYS: the due zset. ARGV: limit, park ms, advanced ms.
/// Claims up to `limit` companies with something due by parking their
/// score `park` ms ahead; returns them.
pub(super) const DUE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, company in ipairs(due) do
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), company)
end
return due
";

/// KEYS: company expiry zset, company last-known hash, company PUBLIC
/// zset. ARGV: limit, advanced ms.
/// Claims expired agents: returns the earliest expiry left (false if
/// none), then member, record, member, record, …
pub(super) const SWEEP: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local out = {false}
for _, member in ipairs(members) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[3], member)
  local record = redis.call('HGET', KEYS[2], member)
  redis.call('HDEL', KEYS[2], member)
  if record then
    table.insert(out, member)
    table.insert(out, record)
  end
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then out[1] = first[2] end
return out
";

/// Expired agents claimed per sweep call (the sweeper loops while full).
const SWEEP_BATCH: usize = 500;
/// Companies claimed per sweep pass.
const DUE_BATCH: usize = 1_000;
/// How long a company claimed by a sweep stays away from other sweeps (a
/// sweep cut short by an error is retried after it).
const PARK: Duration = Duration::from_secs(5);

fn unavailable(err: redis::RedisError) -> StoreError {
    crate::metrics::redis_error();
    StoreError::Unavailable(format!("redis: {err}"))
}

fn decode(raw: Option<String>) -> Option<AgentPresence> {
    serde_json::from_str(&raw?).ok()
}

impl RedisPresence {
    /// An agent's member in its company's keys: `<mode>:<user>`.
    pub(super) fn member(mode: Mode, user_id: Uuid) -> String {
        format!("{}:{user_id}", mode.as_str())
    }

    /// The company's keys: expiry zset, last-known hash and PUBLIC zset
    /// (one hash tag).
    fn company_keys(&self, company_id: Uuid) -> [String; 3] {
        [
            format!("{}{{{company_id}}}:expiry", self.prefix),
            format!("{}{{{company_id}}}:last", self.prefix),
            format!("{}{{{company_id}}}:public", self.prefix),
        ]
    }

    fn advanced_ms(&self) -> u64 {
        u64::try_from(self.clock.advanced().as_millis()).unwrap_or(u64::MAX)
    }

    fn due_key(&self) -> String {
        format!("{}due", self.prefix)
    }

    pub(super) async fn heartbeat(
        &self,
        tenant: &Tenant,
        agent: &AgentPresence,
    ) -> Result<Option<AgentPresence>, StoreError> {
        let record = serde_json::to_string(agent)?;
        let [expiry_set, last, public] = self.company_keys(tenant.company_id);
        let ttl_ms = self.ttl.as_millis().max(1) as u64;
        let (old, expiry): (Option<String>, String) = self
            .scripts
            .heartbeat
            .key(expiry_set)
            .key(last)
            .key(public)
            .arg(record)
            .arg(ttl_ms)
            .arg(Self::member(tenant.mode, agent.user_id))
            .arg(if agent.is_public() { "1" } else { "0" })
            .arg(self.advanced_ms())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        let _: i64 = redis::cmd("ZADD")
            .arg(self.due_key())
            .arg("LT")
            .arg(expiry)
            .arg(tenant.company_id.to_string())
            .query_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        Ok(decode(old))
    }

    pub(super) async fn remove(
        &self,
        tenant: &Tenant,
        user_id: Uuid,
    ) -> Result<Option<AgentPresence>, StoreError> {
        let [expiry_set, last, public] = self.company_keys(tenant.company_id);
        let old: Option<String> = self
            .scripts
            .remove
            .key(expiry_set)
            .key(last)
            .key(public)
            .arg(Self::member(tenant.mode, user_id))
            .arg(self.advanced_ms())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        Ok(decode(old))
    }

    pub(super) async fn online(&self, tenant: &Tenant) -> Result<Vec<AgentPresence>, StoreError> {
        let [expiry_set, last, _] = self.company_keys(tenant.company_id);
        let records: Vec<String> = self
            .scripts
            .online
            .key(expiry_set)
            .key(last)
            .arg(format!("{}:", tenant.mode.as_str()))
            .arg(self.advanced_ms())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        Ok(records
            .into_iter()
            .filter_map(|r| decode(Some(r)))
            .collect())
    }

    pub(super) async fn available(&self, tenant: &Tenant) -> Result<Vec<Uuid>, StoreError> {
        let [_, _, public] = self.company_keys(tenant.company_id);
        let ids: Vec<String> = self
            .scripts
            .available
            .key(public)
            .arg(format!("{}:", tenant.mode.as_str()))
            .arg(self.advanced_ms())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        Ok(ids
            .iter()
            .filter_map(|id| Uuid::parse_str(id).ok())
            .collect())
    }

    pub(super) async fn sweep(&self) -> Result<Vec<(Tenant, AgentPresence)>, StoreError> {
        let due: Vec<String> = self
            .scripts
            .due
            .key(self.due_key())
            .arg(DUE_BATCH)
            .arg(PARK.as_millis() as u64)
            .arg(self.advanced_ms())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        let mut expired = Vec::new();
        for company in due {
            let Ok(company_id) = Uuid::parse_str(&company) else {
                continue;
            };
            self.sweep_company(company_id, &mut expired).await?;
        }
        Ok(expired)
    }

    /// Claims the company's expired agents, then files the company under
    /// its next expiry (or takes it off the due set when none is left).
    async fn sweep_company(
        &self,
        company_id: Uuid,
        expired: &mut Vec<(Tenant, AgentPresence)>,
    ) -> Result<(), StoreError> {
        let [expiry_set, last, public] = self.company_keys(company_id);
        let next = loop {
            let claimed: Vec<Option<String>> = self
                .scripts
                .sweep
                .key(&expiry_set)
                .key(&last)
                .key(&public)
                .arg(SWEEP_BATCH)
                .arg(self.advanced_ms())
                .invoke_async(&mut self.conn.clone())
                .await
                .map_err(unavailable)?;
            let Some((next, pairs)) = claimed.split_first() else {
                break None;
            };
            for pair in pairs.chunks_exact(2) {
                let (Some(member), Some(record)) = (&pair[0], &pair[1]) else {
                    continue;
                };
                if let (Some(mode), Some(record)) =
                    (parse_mode(member), decode(Some(record.clone())))
                {
                    expired.push((Tenant::new(company_id, mode), record));
                }
            }
            if pairs.len() / 2 < SWEEP_BATCH {
                break next.clone();
            }
        };
        let mut conn = self.conn.clone();
        let company = company_id.to_string();
        if let Some(next) = next {
            let _: i64 = redis::cmd("ZADD")
                .arg(self.due_key())
                .arg(next)
                .arg(&company)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            return Ok(());
        }
        let _: i64 = redis::cmd("ZREM")
            .arg(self.due_key())
            .arg(&company)
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        // An agent written between the sweep and the removal has its
        // heartbeat's own ZADD, unless that ran first: look again.
        let first: Vec<(String, String)> = redis::cmd("ZRANGE")
            .arg(&expiry_set)
            .arg(0)
            .arg(0)
            .arg("WITHSCORES")
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        if let Some((_, score)) = first.first() {
            let _: i64 = redis::cmd("ZADD")
                .arg(self.due_key())
                .arg("LT")
                .arg(score)
                .arg(&company)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
        }
        Ok(())
    }
}

impl RedisPresence {
    /// Agents online in every tenant (metrics, read at scrape time): the
    /// members of the expiry set of each company on the sweeper's due set,
    /// whose expired members go within a sweep interval.
    pub(super) async fn online_count(&self) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        let companies: Vec<String> = redis::cmd("ZRANGE")
            .arg(self.due_key())
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        // One command per company, sent together: on a cluster the
        // companies' sets live in different slots, which one pipeline
        // cannot span.
        let counts = companies
            .iter()
            .filter_map(|c| Uuid::parse_str(c).ok())
            .map(|company| {
                let [expiry_set, ..] = self.company_keys(company);
                let mut conn = conn.clone();
                async move {
                    redis::cmd("ZCARD")
                        .arg(expiry_set)
                        .query_async::<u64>(&mut conn)
                        .await
                }
            });
        let counts = futures::future::try_join_all(counts)
            .await
            .map_err(unavailable)?;
        Ok(counts.iter().sum())
    }
}

/// The mode of a member `mode:user`.
pub(super) fn parse_mode(member: &str) -> Option<Mode> {
    Mode::parse(member.split_once(':')?.0)
}
