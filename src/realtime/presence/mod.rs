//! Agent presence with a time to live (30 s after the last
//! heartbeat). Two stores with one contract:
//!
//! - Redis: per company a sorted set of its agents scored by expiry, a
//!   hash of their last known records (so an expired agent can still be
//!   announced by name) and a sorted set of its PUBLIC agents scored by
//!   expiry (routing's candidates), under the company's hash tag, and one sorted set
//!   of companies scored by when an agent of theirs may next expire. A
//!   sweeper on every node claims expired entries atomically (one Lua call
//!   per company with something due), so each expiry is announced once,
//!   with no keyspace notifications (see `redis` for the Cluster layout).
//! - In process: a map with the same expiry.
//!
//! Each write returns the record it replaced, so the caller can tell a
//! transition (offline → online) from a heartbeat that changes nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod redis;

use crate::redis_conn::RedisConn;
use ::redis::Script;
use serde::{Deserialize, Serialize};

pub use self::redis::RedisPresence;
use self::redis::{AVAILABLE, DUE, HEARTBEAT, ONLINE, REMOVE, SWEEP, Scripts};
use uuid::Uuid;

use crate::auth::Tenant;
use crate::error::StoreError;
use crate::time::{Clock, Timestamp};
use crate::users::Role;

crate::text_enum! {
    /// Who sees an online agent: everyone, or agents only.
    pub enum Visibility {
        Public = "PUBLIC",
        Private = "PRIVATE",
    }
}

/// An online agent, as a heartbeat describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentPresence {
    pub user_id: Uuid,
    pub name: String,
    pub email: String,
    #[schema(value_type = String)]
    pub role: Role,
    #[schema(value_type = String)]
    pub visibility: Visibility,
    pub last_seen: Timestamp,
}

impl AgentPresence {
    pub fn is_public(&self) -> bool {
        self.visibility == Visibility::Public
    }

    /// Whether two records differ in anything a presence event shows.
    pub fn same_view(&self, other: &AgentPresence) -> bool {
        self.name == other.name && self.visibility == other.visibility
    }
}

pub enum Presence {
    Local(LocalPresence),
    /// Boxed: its scripts outweigh the local map.
    Redis(Box<RedisPresence>),
}

impl Presence {
    /// Expiry read from `clock` (its monotonic side, which a test moves).
    pub fn local(ttl: Duration, clock: Clock) -> Presence {
        Presence::Local(LocalPresence {
            ttl,
            clock,
            agents: Mutex::new(HashMap::new()),
        })
    }

    /// Expiry read from Redis's clock, moved forward by what `clock` has
    /// been advanced (a test's time passing; zero otherwise).
    pub fn redis(conn: RedisConn, prefix: &str, ttl: Duration, clock: Clock) -> Presence {
        Presence::Redis(Box::new(RedisPresence {
            conn,
            prefix: format!("{prefix}presence:"),
            ttl,
            clock,
            scripts: Scripts {
                heartbeat: Script::new(HEARTBEAT),
                remove: Script::new(REMOVE),
                online: Script::new(ONLINE),
                available: Script::new(AVAILABLE),
                due: Script::new(DUE),
                sweep: Script::new(SWEEP),
            },
        }))
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

    /// The ids of the tenant's online PUBLIC agents, in no order: those
    /// routing may give new work to (PRIVATE reads as busy). One read, of
    /// ids alone, as it runs for every new chat.
    pub async fn available(&self, tenant: &Tenant) -> Result<Vec<Uuid>, StoreError> {
        match self {
            Presence::Local(local) => Ok(local.available(tenant)),
            Presence::Redis(redis) => redis.available(tenant).await,
        }
    }

    /// Claims the agents whose presence has expired since the last sweep
    /// (on any node): each expiry is returned exactly once.
    pub async fn sweep(&self) -> Result<Vec<(Tenant, AgentPresence)>, StoreError> {
        match self {
            Presence::Local(local) => Ok(local.sweep()),
            Presence::Redis(redis) => redis.sweep().await,
        }
    }

    /// How many agents are online in every tenant (metrics).
    pub async fn online_count(&self) -> Result<u64, StoreError> {
        match self {
            Presence::Local(local) => Ok(local.online_count()),
            Presence::Redis(redis) => redis.online_count().await,
        }
    }
}

pub struct LocalPresence {
    ttl: Duration,
    clock: Clock,
    agents: Mutex<HashMap<(Tenant, Uuid), (AgentPresence, Instant)>>,
}

impl LocalPresence {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Tenant, Uuid), (AgentPresence, Instant)>> {
        self.agents.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn heartbeat(&self, tenant: &Tenant, agent: &AgentPresence) -> Option<AgentPresence> {
        let now = self.clock.instant();
        let previous = self
            .lock()
            .insert((*tenant, agent.user_id), (agent.clone(), now + self.ttl));
        // An expired entry the sweeper has not reached yet counts as offline;
        // replacing it here means the sweeper will not announce it.
        previous.and_then(|(record, expires)| (expires > now).then_some(record))
    }

    fn remove(&self, tenant: &Tenant, user_id: Uuid) -> Option<AgentPresence> {
        let now = self.clock.instant();
        self.lock()
            .remove(&(*tenant, user_id))
            .and_then(|(record, expires)| (expires > now).then_some(record))
    }

    fn online(&self, tenant: &Tenant) -> Vec<AgentPresence> {
        let now = self.clock.instant();
        self.lock()
            .iter()
            .filter(|((t, _), (_, expires))| t == tenant && *expires > now)
            .map(|(_, (record, _))| record.clone())
            .collect()
    }

    fn available(&self, tenant: &Tenant) -> Vec<Uuid> {
        let now = self.clock.instant();
        self.lock()
            .iter()
            .filter(|((t, _), (record, expires))| {
                t == tenant && *expires > now && record.is_public()
            })
            .map(|((_, user_id), _)| *user_id)
            .collect()
    }

    fn online_count(&self) -> u64 {
        let now = self.clock.instant();
        let online = self
            .lock()
            .values()
            .filter(|(_, expires)| *expires > now)
            .count();
        u64::try_from(online).unwrap_or(u64::MAX)
    }

    fn sweep(&self) -> Vec<(Tenant, AgentPresence)> {
        let now = self.clock.instant();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Mode;

    fn agent(name: &str) -> AgentPresence {
        AgentPresence {
            user_id: Uuid::now_v7(),
            name: name.into(),
            email: "a@example.com".into(),
            role: Role::Agent,
            visibility: Visibility::Public,
            last_seen: Timestamp::now(),
        }
    }

    /// A company's test tenant and its live tenant.
    fn one_company_in_both_modes() -> (Tenant, Tenant) {
        let tenant = Tenant::new(Uuid::now_v7(), Mode::Test);
        let live = Tenant {
            mode: Mode::Live,
            ..tenant
        };
        (tenant, live)
    }

    #[tokio::test]
    async fn local_presence_reports_transitions_and_expiry() {
        let clock = Clock::default();
        let presence = Presence::local(Duration::from_millis(50), clock.clone());
        let (tenant, other_mode) = one_company_in_both_modes();
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
        clock.advance(chrono::TimeDelta::milliseconds(80));
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
            super::redis::parse_mode(&RedisPresence::member(tenant.mode, ann.user_id)),
            Some(tenant.mode)
        );
    }

    #[tokio::test]
    async fn local_available_is_the_public_agents_of_the_tenant() {
        let presence = Presence::local(Duration::from_secs(30), Clock::default());
        let (tenant, other_mode) = one_company_in_both_modes();
        let public = agent("Ann");
        let private = AgentPresence {
            visibility: Visibility::Private,
            ..agent("Bob")
        };
        let elsewhere = agent("Cy");
        for (t, a) in [
            (tenant, &public),
            (tenant, &private),
            (other_mode, &elsewhere),
        ] {
            presence.heartbeat(&t, a).await.expect("ok");
        }

        assert_eq!(
            presence.available(&tenant).await.expect("ok"),
            vec![public.user_id]
        );
    }
}
