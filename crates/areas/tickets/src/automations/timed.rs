//! Timed automations over a tenant's tickets, and the dry run of any
//! automation. A timed automation fires once on a ticket when its
//! conditions come to hold (a row in `automation_firings`, claimed in the
//! firing's transaction, so two passes never both fire), and may fire
//! again only after a pass saw them not hold (the row is then deleted).
//! Its changes run the tenant's triggers in the same transaction, as any
//! change does. A pass pages through every ticket due by its time (the
//! store's `due_tickets`, by the indexes on the times the conditions
//! name), so it fires on each at the first pass at or after the second
//! its condition comes to hold, however many other tickets are older; a
//! dry run reads the same pages (`Due`), so it lists every ticket the
//! pass would change.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::engine::{self, Context, Fired};
use super::store::{self as automation_store, DueCursor};
use super::{Automation, Kind, TriggerEvent};
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::StoreError;
use crate::store;
use crate::time::Timestamp;

/// Tickets read at a time; a timed rule's pass and dry run read every
/// page, a trigger's dry run the first (the latest tickets).
pub const BATCH: i64 = 500;

/// One pass of `rule` (timed) at `ctx.now`: first forgets the firings
/// whose conditions no longer hold, then fires on every due ticket whose
/// conditions hold. What it did (`count`: the tickets it changed; the
/// chats closed by it or the triggers its changes ran, all committed).
pub async fn run(
    db: &Db,
    ctx: &Context<'_>,
    rule: &Automation,
    triggers: &[Automation],
) -> Result<Fired, StoreError> {
    let whole = ctx.tenant.whole();
    let mut after = None;
    loop {
        let page = automation_store::fired_tickets(db, &whole, rule.id, after, BATCH).await?;
        for &id in &page {
            let mut tx = db.begin().await?;
            let holds = match store::load(&mut tx, &whole, id, ctx.signer).await {
                Ok(ticket) => engine::holds(&mut tx, ctx, rule, &ticket, None).await?,
                Err(StoreError::NotFound) => false,
                Err(err) => return Err(err),
            };
            drop(tx);
            if !holds {
                automation_store::reset_firing(db, &whole, rule.id, id).await?;
            }
        }
        match page.last() {
            Some(&last) if page.len() >= BATCH as usize => after = Some(last),
            _ => break,
        }
    }
    let mut fired = Fired::default();
    let mut due = Due::new(rule, ctx.now);
    while let Some(page) = due.next(db, &whole).await? {
        for id in page {
            fired.add(fire(db, ctx, rule, triggers, id).await?);
        }
    }
    Ok(fired)
}

/// The tickets due for timed `rule` at `now` (old enough, not yet fired),
/// a page at a time in the order they were created: what a pass fires on
/// and a dry run lists, so the two read the same tickets.
struct Due<'r> {
    rule: &'r Automation,
    now: Timestamp,
    after: Option<DueCursor>,
    done: bool,
}

impl<'r> Due<'r> {
    fn new(rule: &'r Automation, now: Timestamp) -> Self {
        Due {
            rule,
            now,
            after: None,
            done: false,
        }
    }

    /// The next page, `None` once every due ticket was read. A page reads
    /// after the last one's last ticket, so what a pass fired on in
    /// between moves nothing.
    async fn next(&mut self, db: &Db, tenant: &Tenant) -> Result<Option<Vec<Uuid>>, StoreError> {
        if self.done {
            return Ok(None);
        }
        let page =
            automation_store::due_tickets(db, tenant, self.rule, self.now, self.after, BATCH)
                .await?;
        self.done = page.len() < BATCH as usize;
        self.after = page.last().copied();
        Ok(Some(page.into_iter().map(|(_, id)| id).collect()))
    }
}

/// Fires `rule` on ticket `id` if its conditions hold and it has not
/// fired there since they last turned false, with the triggers its
/// changes run, in one transaction.
async fn fire(
    db: &Db,
    ctx: &Context<'_>,
    rule: &Automation,
    triggers: &[Automation],
    id: Uuid,
) -> Result<Fired, StoreError> {
    let whole = ctx.tenant.whole();
    let mut tx = db.begin().await?;
    store::lock(&mut tx, &whole, id).await?;
    let ticket = store::load(&mut tx, &whole, id, ctx.signer).await?;
    if !engine::holds(&mut tx, ctx, rule, &ticket, None).await?
        || !automation_store::claim_firing(&mut tx, &whole, rule.id, id, ctx.now).await?
    {
        return Ok(Fired::default());
    }
    let outcome = engine::act(&mut tx, ctx, rule, id, "timed", 0).await?;
    let mut done = Fired {
        count: 1,
        changed_chats: outcome.closed_chat.into_iter().collect(),
    };
    for happening in outcome.happenings {
        let chained = engine::run_triggers(&mut tx, ctx, triggers, happening, 1).await?;
        done.changed_chats.extend(chained.changed_chats);
    }
    tx.commit().await?;
    Ok(done)
}

/// What an automation would do to one ticket now.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WouldChange {
    pub ticket_id: Uuid,
    pub ticket_number: String,
    /// `{field: {from, to}}` of the ticket's fields it would change.
    #[schema(value_type = Object)]
    pub changes: BTreeMap<String, Value>,
    pub tags_added: Vec<String>,
    pub tags_removed: Vec<String>,
}

/// The tickets `rule` matches now and what it would change on each (a
/// trigger's conditions on what an event changed hold for none here): its
/// actions run in one transaction that is rolled back, so nothing is
/// written, announced or sent. A timed rule's candidates are those a pass
/// would fire on (not yet fired, old enough).
pub async fn dry_run(
    db: &Db,
    ctx: &Context<'_>,
    rule: &Automation,
) -> Result<Vec<WouldChange>, StoreError> {
    let whole = ctx.tenant.whole();
    if rule.events.contains(&TriggerEvent::ChatStarted) {
        // It changes chats as they start, never a ticket.
        return Ok(Vec::new());
    }
    let ids = match rule.kind {
        Kind::Timed => {
            // Read before the rolled-back transaction opens, as a pass reads
            // each page outside its firings' transactions.
            let mut ids = Vec::new();
            let mut due = Due::new(rule, ctx.now);
            while let Some(page) = due.next(db, &whole).await? {
                ids.extend(page);
            }
            ids
        }
        Kind::Trigger => automation_store::recent_tickets(db, &whole, BATCH).await?,
    };
    let mut tx = db.begin().await?;
    let mut would = Vec::new();
    for id in ids {
        let before = store::load(&mut tx, &whole, id, ctx.signer).await?;
        if !engine::holds(&mut tx, ctx, rule, &before, None).await? {
            continue;
        }
        let outcome = engine::act(&mut tx, ctx, rule, id, "dry_run", 0).await?;
        let diff = engine::diff(&before, &outcome.ticket, &Actor::system());
        let (mut changes, tags_added, tags_removed): (BTreeMap<String, Value>, _, _) = match diff {
            Some(h) => (
                h.changes
                    .into_iter()
                    .map(|(k, (from, to))| (k, json!({"from": from, "to": to})))
                    .collect(),
                h.tags_added,
                h.tags_removed,
            ),
            None => Default::default(),
        };
        // A snooze is no field a trigger reads, yet what the rule would do.
        let snoozed = (before.snoozed_until, outcome.ticket.snoozed_until);
        if snoozed.0 != snoozed.1 {
            let change = json!({"from": snoozed.0, "to": snoozed.1});
            changes.insert("snoozedUntil".into(), change);
        }
        // Nor is a chat's close.
        if outcome
            .happenings
            .iter()
            .any(|h| h.event == TriggerEvent::ChatClosed)
        {
            let change = json!({"from": "ACTIVE", "to": "CLOSED"});
            changes.insert("chatStatus".into(), change);
        }
        would.push(WouldChange {
            ticket_id: id,
            ticket_number: before.ticket_number,
            changes,
            tags_added,
            tags_removed,
        });
    }
    drop(tx);
    Ok(would)
}
