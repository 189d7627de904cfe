//! Presence in Redis, shared by every node: per agent `SET … PX <ttl>`,
//! sorted sets scored by expiry (per tenant for listing, one for the
//! sweeper), and a hash of last-known records to announce expiries by name.
//! Each operation is one Lua call, so it is atomic across nodes.

use std::time::Duration;

use redis::Script;
use redis::aio::ConnectionManager;
use uuid::Uuid;

use super::AgentPresence;
use crate::auth::{Mode, Tenant};
use crate::error::StoreError;

pub struct RedisPresence {
    pub(super) conn: ConnectionManager,
    /// `<prefix>presence:`
    pub(super) prefix: String,
    pub(super) ttl: Duration,
    pub(super) scripts: Scripts,
}

/// The Lua scripts, hashed once (invoked by EVALSHA, loaded on demand).
pub(super) struct Scripts {
    pub(super) heartbeat: Script,
    pub(super) remove: Script,
    pub(super) online: Script,
    pub(super) sweep: Script,
}

/// KEYS: agent key, tenant zset, expiry zset, last-known hash.
/// ARGV: record, ttl ms, user id, member (`company:mode:user`).
pub(super) const HEARTBEAT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = now + tonumber(ARGV[2])
local old = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], expiry, ARGV[3])
redis.call('ZADD', KEYS[3], expiry, ARGV[4])
redis.call('HSET', KEYS[4], ARGV[4], ARGV[1])
return old
";

/// KEYS: agent key, tenant zset, expiry zset, last-known hash.
/// ARGV: user id, member.
pub(super) const REMOVE: &str = r"
local old = redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
return old
";

/// KEYS: tenant zset. ARGV: agent key prefix (`…presence:company:mode:`).
/// Drops expired members on read, then reads the live records.
pub(super) const ONLINE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local users = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {}
for _, user in ipairs(users) do
  local record = redis.call('GET', ARGV[1] .. user)
  if record then table.insert(out, record) end
end
return out
";

/// KEYS: expiry zset, last-known hash. ARGV: key prefix (`…presence:`), limit.
/// Claims expired members: returns member, record, member, record, …
pub(super) const SWEEP: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, member in ipairs(members) do
  redis.call('ZREM', KEYS[1], member)
  local record = redis.call('HGET', KEYS[2], member)
  redis.call('HDEL', KEYS[2], member)
  redis.call('DEL', ARGV[1] .. member)
  local tenant, user = string.match(member, '^(.*):([^:]+)$')
  if tenant then redis.call('ZREM', ARGV[1] .. tenant, user) end
  if record then
    table.insert(out, member)
    table.insert(out, record)
  end
end
return out
";

/// Expired agents claimed per sweep call (the sweeper loops while full).
const SWEEP_BATCH: usize = 500;

fn unavailable(err: redis::RedisError) -> StoreError {
    crate::metrics::redis_error();
    StoreError::Unavailable(format!("redis: {err}"))
}

fn decode(raw: Option<String>) -> Option<AgentPresence> {
    serde_json::from_str(&raw?).ok()
}

impl RedisPresence {
    fn tenant_part(tenant: &Tenant) -> String {
        format!("{}:{}", tenant.company_id, tenant.mode.as_str())
    }

    pub(super) fn member(tenant: &Tenant, user_id: Uuid) -> String {
        format!("{}:{user_id}", Self::tenant_part(tenant))
    }

    fn keys(&self, tenant: &Tenant, user_id: Uuid) -> [String; 4] {
        [
            format!("{}{}", self.prefix, Self::member(tenant, user_id)),
            format!("{}{}", self.prefix, Self::tenant_part(tenant)),
            format!("{}expiry", self.prefix),
            format!("{}last", self.prefix),
        ]
    }

    pub(super) async fn heartbeat(
        &self,
        tenant: &Tenant,
        agent: &AgentPresence,
    ) -> Result<Option<AgentPresence>, StoreError> {
        let record = serde_json::to_string(agent)?;
        let [key, tenant_set, expiry_set, last] = self.keys(tenant, agent.user_id);
        let ttl_ms = self.ttl.as_millis().max(1) as u64;
        let old: Option<String> = self
            .scripts
            .heartbeat
            .key(key)
            .key(tenant_set)
            .key(expiry_set)
            .key(last)
            .arg(record)
            .arg(ttl_ms)
            .arg(agent.user_id.to_string())
            .arg(Self::member(tenant, agent.user_id))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        Ok(decode(old))
    }

    pub(super) async fn remove(
        &self,
        tenant: &Tenant,
        user_id: Uuid,
    ) -> Result<Option<AgentPresence>, StoreError> {
        let [key, tenant_set, expiry_set, last] = self.keys(tenant, user_id);
        let old: Option<String> = self
            .scripts
            .remove
            .key(key)
            .key(tenant_set)
            .key(expiry_set)
            .key(last)
            .arg(user_id.to_string())
            .arg(Self::member(tenant, user_id))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        Ok(decode(old))
    }

    pub(super) async fn online(&self, tenant: &Tenant) -> Result<Vec<AgentPresence>, StoreError> {
        let tenant_set = format!("{}{}", self.prefix, Self::tenant_part(tenant));
        let records: Vec<String> = self
            .scripts
            .online
            .key(tenant_set)
            .arg(format!("{}{}:", self.prefix, Self::tenant_part(tenant)))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)?;
        Ok(records
            .into_iter()
            .filter_map(|r| decode(Some(r)))
            .collect())
    }

    pub(super) async fn sweep(&self) -> Result<Vec<(Tenant, AgentPresence)>, StoreError> {
        let mut expired = Vec::new();
        loop {
            let claimed: Vec<String> = self
                .scripts
                .sweep
                .key(format!("{}expiry", self.prefix))
                .key(format!("{}last", self.prefix))
                .arg(&self.prefix)
                .arg(SWEEP_BATCH)
                .invoke_async(&mut self.conn.clone())
                .await
                .map_err(unavailable)?;
            let pairs = claimed.len() / 2;
            for pair in claimed.chunks_exact(2) {
                if let (Some(tenant), Some(record)) =
                    (parse_tenant(&pair[0]), decode(Some(pair[1].clone())))
                {
                    expired.push((tenant, record));
                }
            }
            if pairs < SWEEP_BATCH {
                return Ok(expired);
            }
        }
    }
}

impl RedisPresence {
    /// Agents online in every tenant: the sweeper's expiry set, whose
    /// expired members go within a sweep interval (metrics).
    pub(super) async fn online_count(&self) -> Result<u64, StoreError> {
        redis::cmd("ZCARD")
            .arg(format!("{}expiry", self.prefix))
            .query_async(&mut self.conn.clone())
            .await
            .map_err(unavailable)
    }
}

/// The tenant of a member `company:mode:user`.
pub(super) fn parse_tenant(member: &str) -> Option<Tenant> {
    let mut parts = member.split(':');
    let company_id = Uuid::parse_str(parts.next()?).ok()?;
    let mode = Mode::parse(parts.next()?)?;
    Some(Tenant { company_id, mode })
}
