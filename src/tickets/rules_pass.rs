//! The escalation rules scheduler: every `rules_interval` each node tries
//! to run a pass; on Postgres an advisory lock lets one node run it at a
//! time. `run_pass` is public so tests drive it step by step.

use std::collections::HashMap;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::custom_fields;
use crate::custom_fields::model::{Definition, FieldFilter};
use crate::db::Db;
use crate::error::StoreError;
use crate::teams::routing::Routing;
use crate::tickets::model::Ticket;
use crate::tickets::rules::{Rule, store};
use crate::time::Timestamp;

/// At most this many tickets per rule per pass; the rest wait for the next.
pub const BATCH: i64 = 500;

/// Evaluates every enabled rule of every tenant once, with one query per
/// rule, and escalates each matching ticket (in its own transaction, with
/// the firing recorded in it). Returns how many escalations it made; 0 when
/// another node holds the pass. `now` is the node's clock; the tickets'
/// attachments in the events carry links from `signer`.
pub async fn run_pass(db: &Db, now: Timestamp, signer: &Signer) -> Result<usize, StoreError> {
    Ok(pass(db, now, signer).await?.len())
}

/// `run_pass`, then the routing of each ticket a rule sent to a team with
/// nobody assigned (as the API routes a ticket entering a team): what the
/// scheduler runs.
pub async fn run_pass_and_route(routing: &Routing) -> Result<usize, StoreError> {
    let now = routing.clock.now();
    let escalated = pass(&routing.db, now, &routing.attachments.signer(now)).await?;
    let fired = escalated.len();
    for (tenant, ticket) in escalated {
        crate::teams::routing::route_ticket(routing, &tenant, ticket).await;
    }
    Ok(fired)
}

/// One pass at `now` (the node's clock): the tickets escalated, with
/// their tenants.
async fn pass(
    db: &Db,
    now: Timestamp,
    signer: &Signer,
) -> Result<Vec<(Tenant, Ticket)>, StoreError> {
    let Some(lock) = store::lock_pass(db).await? else {
        return Ok(Vec::new());
    };
    let rules = store::enabled_rules(db).await?;
    let mut definitions = Definitions::default();
    let mut fired = Vec::new();
    for (tenant, rule) in &rules {
        let Some(fields) = definitions.field_filter(db, tenant, rule).await else {
            continue;
        };
        let tickets = match store::matching_tickets(db, tenant, rule, &fields, BATCH).await {
            Ok(tickets) => tickets,
            Err(err) => {
                tracing::warn!(rule = %rule.id, error = %err, "escalation rule not evaluated");
                continue;
            }
        };
        for ticket in tickets {
            match store::fire(db, tenant, rule, &fields, ticket, now, signer).await {
                Ok(Some(escalated)) => fired.push((*tenant, escalated)),
                Ok(None) => {}
                Err(err) => {
                    tracing::warn!(rule = %rule.id, %ticket, error = %err, "escalation rule failed");
                }
            }
        }
    }
    lock.release().await;
    Ok(fired)
}

/// The custom field definitions of the tenants whose rules have custom
/// field conditions, loaded once per pass.
#[derive(Default)]
struct Definitions {
    by_tenant: HashMap<Tenant, Vec<Definition>>,
}

impl Definitions {
    /// The rule's custom field condition checked against the tenant's
    /// definitions now (empty when it has none). `None`, logged, when the
    /// condition no longer fits them (a field deleted, its type changed,
    /// an option removed) or they cannot be read: the rule then matches
    /// nothing until it is fixed, rather than matching more than it says.
    async fn field_filter(&mut self, db: &Db, tenant: &Tenant, rule: &Rule) -> Option<FieldFilter> {
        if rule.conditions.custom_fields.is_none() {
            return Some(FieldFilter::default());
        }
        if !self.by_tenant.contains_key(tenant) {
            match custom_fields::store::list(db, tenant).await {
                Ok(list) => {
                    self.by_tenant.insert(*tenant, list);
                }
                Err(err) => {
                    tracing::warn!(rule = %rule.id, error = %err, "escalation rule not evaluated");
                    return None;
                }
            }
        }
        let definitions = self
            .by_tenant
            .get(tenant)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match rule.conditions.field_filter(definitions)? {
            Ok(filter) => Some(filter),
            Err(problems) => {
                let problems: Vec<String> = problems
                    .iter()
                    .map(|p| format!("{}: {}", p.field, p.message))
                    .collect();
                tracing::warn!(
                    rule = %rule.id,
                    problems = %problems.join("; "),
                    "escalation rule's custom field condition no longer fits the definitions; \
                     it matches no ticket"
                );
                None
            }
        }
    }
}

/// Runs a pass every `rules_interval` (the first at once) until shutdown.
/// A pass interrupted by shutdown rolls back what it had not committed.
pub fn spawn(
    routing: Routing,
    every: Duration,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> JoinHandle<()> {
    let every = every.max(Duration::from_millis(10));
    let first = tokio::time::Instant::now();
    crate::time::every(shutdown, first, every, move || {
        let routing = routing.clone();
        async move {
            match run_pass_and_route(&routing).await {
                Ok(0) => {}
                Ok(fired) => tracing::info!(fired, "escalation rules fired"),
                Err(err) => tracing::warn!(error = %err, "escalation rules pass failed"),
            }
        }
    })
}
