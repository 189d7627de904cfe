//! Agent presence with a time to live (SPEC.md: 30 s after the last
//! heartbeat). Two stores with one contract:
//!
//! - Redis: per agent `SET <prefix>presence:<company>:<mode>:<user> <json> PX
//!   <ttl>`, plus sorted sets scored by expiry (one per tenant for listing,
//!   one for the whole deployment for the sweeper) and a hash of the last
//!   known record (so an expired agent can still be announced by name). A
//!   sweeper on every node claims expired entries atomically (one Lua call),
//!   so each expiry is announced once, with no keyspace notifications.
//! - In process: a map with the same expiry.
//!
//! Each write returns the record it replaced, so the caller can tell a
//! transition (offline → online) from a heartbeat that changes nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::Script;
use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::{Mode, Tenant};
use crate::error::StoreError;
use crate::time::Timestamp;

pub const VISIBILITIES: &[&str] = &["PUBLIC", "PRIVATE"];

/// An online agent, as a heartbeat describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentPresence {
    pub user_id: Uuid,
    pub name: String,
    pub email: String,
    pub role: String,
    pub visibility: String,
    pub last_seen: Timestamp,
}

impl AgentPresence {
    pub fn is_public(&self) -> bool {
        self.visibility == "PUBLIC"
    }

    /// Whether two records differ in anything a presence event shows.
    pub fn same_view(&self, other: &AgentPresence) -> bool {
        self.name == other.name && self.visibility == other.visibility
    }
}

pub enum Presence {
    Local(LocalPresence),
    Redis(RedisPresence),
}

impl Presence {
    pub fn local(ttl: Duration) -> Presence {
        Presence::Local(LocalPresence {
            ttl,
            agents: Mutex::new(HashMap::new()),
        })
    }

    pub fn redis(conn: ConnectionManager, prefix: &str, ttl: Duration) -> Presence {
        Presence::Redis(RedisPresence {
            conn,
            prefix: format!("{prefix}presence:"),
            ttl,
            scripts: Scripts {
                heartbeat: Script::new(HEARTBEAT),
                remove: Script::new(REMOVE),
                online: Script::new(ONLINE),
                sweep: Script::new(SWEEP),
            },
        })
    }

    /// Marks `agent` online for the TTL; returns the record it replaced
    /// (`None`: the agent was offline).
    pub async fn heartbeat(
        &self,
        tenant: &Tenant,
        agent: &AgentPresence,
    ) -> Result<Option<AgentPresence>, StoreError> {
        match self {
            Presence::Local(local) => Ok(local.heartbeat(tenant, agent)),
            Presence::Redis(redis) => redis.heartbeat(tenant, agent).await,
        }
    }

    /// Takes the agent offline; returns the record removed, if it was online.
    pub async fn remove(
        &self,
        tenant: &Tenant,
        user_id: Uuid,
    ) -> Result<Option<AgentPresence>, StoreError> {
        match self {
            Presence::Local(local) => Ok(local.remove(tenant, user_id)),
            Presence::Redis(redis) => redis.remove(tenant, user_id).await,
        }
    }

    /// The tenant's online agents, by name.
    pub async fn online(&self, tenant: &Tenant) -> Result<Vec<AgentPresence>, StoreError> {
        let mut agents = match self {
            Presence::Local(local) => local.online(tenant),
            Presence::Redis(redis) => redis.online(tenant).await?,
        };
        agents.sort_by(|a, b| a.name.cmp(&b.name).then(a.user_id.cmp(&b.user_id)));
        Ok(agents)
    }

    /// Claims the agents whose presence has expired since the last sweep
    /// (on any node): each expiry is returned exactly once.
    pub async fn sweep(&self) -> Result<Vec<(Tenant, AgentPresence)>, StoreError> {
        match self {
            Presence::Local(local) => Ok(local.sweep()),
            Presence::Redis(redis) => redis.sweep().await,
        }
    }
}

pub struct LocalPresence {
    ttl: Duration,
    agents: Mutex<HashMap<(Tenant, Uuid), (AgentPresence, Instant)>>,
}

impl LocalPresence {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Tenant, Uuid), (AgentPresence, Instant)>> {
        self.agents.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn heartbeat(&self, tenant: &Tenant, agent: &AgentPresence) -> Option<AgentPresence> {
        let now = Instant::now();
        let previous = self
            .lock()
            .insert((*tenant, agent.user_id), (agent.clone(), now + self.ttl));
        // An expired entry the sweeper has not reached yet counts as offline;
        // replacing it here means the sweeper will not announce it.
        previous.and_then(|(record, expires)| (expires > now).then_some(record))
    }

    fn remove(&self, tenant: &Tenant, user_id: Uuid) -> Option<AgentPresence> {
        let now = Instant::now();
        self.lock()
            .remove(&(*tenant, user_id))
            .and_then(|(record, expires)| (expires > now).then_some(record))
    }

    fn online(&self, tenant: &Tenant) -> Vec<AgentPresence> {
        let now = Instant::now();
        self.lock()
            .iter()
            .filter(|((t, _), (_, expires))| t == tenant && *expires > now)
            .map(|(_, (record, _))| record.clone())
            .collect()
    }

    fn sweep(&self) -> Vec<(Tenant, AgentPresence)> {
        let now = Instant::now();
        let mut expired = Vec::new();
        self.lock().retain(|(tenant, _), (record, expires)| {
            if *expires <= now {
                expired.push((*tenant, record.clone()));
                false
            } else {
                true
            }
        });
        expired
    }
}

pub struct RedisPresence {
    conn: ConnectionManager,
    /// `<prefix>presence:`
    prefix: String,
    ttl: Duration,
    scripts: Scripts,
}

/// The Lua scripts, hashed once (invoked by EVALSHA, loaded on demand).
struct Scripts {
    heartbeat: Script,
    remove: Script,
    online: Script,
    sweep: Script,
}

/// KEYS: agent key, tenant zset, expiry zset, last-known hash.
/// ARGV: record, ttl ms, user id, member (`company:mode:user`).
const HEARTBEAT: &str = r"
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
const REMOVE: &str = r"
local old = redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
return old
";

/// KEYS: tenant zset. ARGV: agent key prefix (`…presence:company:mode:`).
/// Drops expired members on read, then reads the live records.
const ONLINE: &str = r"
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
const SWEEP: &str = r"
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
    StoreError::Unavailable(format!("redis: {err}"))
}

fn decode(raw: Option<String>) -> Option<AgentPresence> {
    serde_json::from_str(&raw?).ok()
}

impl RedisPresence {
    fn tenant_part(tenant: &Tenant) -> String {
        format!("{}:{}", tenant.company_id, tenant.mode.as_str())
    }

    fn member(tenant: &Tenant, user_id: Uuid) -> String {
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

    async fn heartbeat(
        &self,
        tenant: &Tenant,
        agent: &AgentPresence,
    ) -> Result<Option<AgentPresence>, StoreError> {
        let record = serde_json::to_string(agent).unwrap_or_default();
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

    async fn remove(
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

    async fn online(&self, tenant: &Tenant) -> Result<Vec<AgentPresence>, StoreError> {
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

    async fn sweep(&self) -> Result<Vec<(Tenant, AgentPresence)>, StoreError> {
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

/// The tenant of a member `company:mode:user`.
fn parse_tenant(member: &str) -> Option<Tenant> {
    let mut parts = member.split(':');
    let company_id = Uuid::parse_str(parts.next()?).ok()?;
    let mode = Mode::parse(parts.next()?)?;
    Some(Tenant { company_id, mode })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(name: &str) -> AgentPresence {
        AgentPresence {
            user_id: Uuid::now_v7(),
            name: name.into(),
            email: "a@example.com".into(),
            role: "AGENT".into(),
            visibility: "PUBLIC".into(),
            last_seen: Timestamp::now(),
        }
    }

    #[tokio::test]
    async fn local_presence_reports_transitions_and_expiry() {
        let presence = Presence::local(Duration::from_millis(50));
        let tenant = Tenant {
            company_id: Uuid::now_v7(),
            mode: Mode::Test,
        };
        let other_mode = Tenant {
            mode: Mode::Live,
            ..tenant
        };
        let ann = agent("Ann");
        assert_eq!(presence.heartbeat(&tenant, &ann).await.expect("ok"), None);
        assert_eq!(
            presence.heartbeat(&tenant, &ann).await.expect("ok"),
            Some(ann.clone())
        );
        assert_eq!(
            presence.online(&tenant).await.expect("ok"),
            vec![ann.clone()]
        );
        assert!(presence.online(&other_mode).await.expect("ok").is_empty());
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(presence.online(&tenant).await.expect("ok").is_empty());
        assert_eq!(
            presence.sweep().await.expect("ok"),
            vec![(tenant, ann.clone())]
        );
        assert!(presence.sweep().await.expect("ok").is_empty());
        assert_eq!(
            presence.remove(&tenant, ann.user_id).await.expect("ok"),
            None
        );
        assert_eq!(
            parse_tenant(&RedisPresence::member(&tenant, ann.user_id)),
            Some(tenant)
        );
    }
}
