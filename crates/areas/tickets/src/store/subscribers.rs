//! Which tenants' new tickets webhooks were last seen to wait for: how a
//! plain create on Postgres is first tried (see `plain`).

use crate::auth::Tenant;
use crate::ratelimit::HotMap;

/// The tenants this node last saw with an active webhook subscribed to
/// `ticket.created`: their plain creates begin a transaction at once
/// instead of trying the statement that commits by itself first (which
/// would write nothing for them: a round trip lost). A hint only, right or
/// wrong: the statement checks the webhooks itself, and each create that
/// reads them corrects it. Read by every plain create: a sharded map, so
/// creates of different tenants do not take turns on one lock.
#[derive(Default)]
pub struct Subscribers(HotMap<Tenant, ()>);

impl Subscribers {
    pub fn seen(&self, tenant: &Tenant) -> bool {
        self.0.contains_key(tenant)
    }

    pub(super) fn saw(&self, tenant: &Tenant, subscribed: bool) {
        // Most creates confirm the hint: a shared lock answers them, and
        // only a change takes the shard's write lock.
        if self.seen(tenant) == subscribed {
            return;
        }
        match subscribed {
            true => {
                self.0.insert(*tenant, ());
            }
            false => {
                self.0.remove(tenant);
            }
        }
    }
}
