//! The automations' passes. Triggers read each tenant's change feed: every
//! ticket change, whoever makes it (a key, an agent, a visitor, an email, a
//! worker, the AI), writes its `ticket.*` or `comment.created` event in
//! its own transaction, and the feed numbers those events in commit
//! order without gaps, so a pass that walks the feed from a cursor sees
//! every committed change exactly once and the same way, with no hook in
//! any path that changes a ticket (a hook would be one more thing each
//! new path could forget). Each entry that runs a rule is handled in one
//! transaction that also moves the tenant's cursor past it (compare and
//! set: a second node that read the same cursor finds it moved and
//! stops), so its changes and the cursor commit together. The chain of
//! triggers an automation's change sets off runs inline, in that same
//! transaction (`automations::engine::run_triggers`), so the feed's
//! entries made by automations are skipped here. Timed automations run
//! in a second pass, one node at a time (the pass lock). A rule's
//! `close_chat` closes the ticket's chat, and a `chat.started` trigger
//! reads and changes the chat that started, through the chat area's store
//! ([`Chats`]), in the rule's transaction; each pass reports the chats its
//! rules changed ([`Pass`]), and its caller gives them, once committed,
//! what the same change through the API gets after its commit
//! ([`announce`]).

use std::time::Duration;

use axum::extract::FromRef;
use futures::future::BoxFuture;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::changes::store as feed;
use crate::chat::Session;
use crate::db::{Db, PassLock, Tx};
use crate::error::StoreError;
use crate::state::AppState;
use crate::tags::model::TagEdit;
use crate::time::Timestamp;
use ::tickets::automations::engine::{
    self, ChangedChat, ChatFacts, ChatSnapshot, ChatsOf, Context, Fired,
};
use ::tickets::automations::{Kind, TriggerEvent, store, timed};

const PASS_LOCK_KEY: i64 = 0x5344_4155_544f_4d41;
/// Feed entries read at a time.
const BATCH: i64 = 500;

/// A rule's changes of a chat (a ticket's, or one that just started), by
/// the chat area's store.
pub struct Chats;

/// The session a rule wrote, carried (opaque to the rules) to [`announce`].
fn snapshot(session: Session) -> ChatSnapshot {
    ChatSnapshot(std::sync::Arc::new(session))
}

impl ChatsOf for Chats {
    fn close<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Option<ChatSnapshot>, StoreError>> {
        Box::pin(async move {
            match crate::chat::store::close_in(tx, tenant, chat, now).await {
                Ok(closed) => Ok(closed.map(snapshot)),
                // A chat deleted since the ticket was opened from it.
                Err(StoreError::NotFound) => Ok(None),
                Err(err) => Err(err),
            }
        })
    }

    fn facts<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
    ) -> BoxFuture<'a, Result<Option<ChatFacts>, StoreError>> {
        Box::pin(async move {
            let session = match crate::chat::store::session_in(tx, tenant, chat).await {
                Ok(session) => session,
                Err(StoreError::NotFound) => return Ok(None),
                Err(err) => return Err(err),
            };
            Ok(Some(ChatFacts {
                id: session.id,
                entity_id: session.entity_id,
                team_id: session.team_id,
                assignee_id: session.assignee_id,
                visitor_email: session.visitor_email,
                tags: session.tags,
                contact_id: session.contact_id,
            }))
        })
    }

    fn retag<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
        add: &'a [String],
        remove: &'a [String],
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Option<ChatSnapshot>, StoreError>> {
        Box::pin(async move {
            let edit = TagEdit {
                add: add.to_vec(),
                remove: remove.to_vec(),
            };
            let retagged = crate::chat::store::retag_in(tx, tenant, chat, &edit, now).await?;
            Ok(retagged.map(snapshot))
        })
    }
}

/// What a pass did, committed.
#[derive(Debug, Default)]
pub struct Pass {
    /// How many times a rule fired (timed: the tickets changed, once per
    /// automation that fired on each).
    pub fired: usize,
    /// The chats its rules changed, each with its tenant.
    pub changed_chats: Vec<(Tenant, ChangedChat)>,
}

impl Pass {
    fn add(&mut self, tenant: &Tenant, fired: Fired) {
        self.fired += fired.count;
        let changed = fired.changed_chats.into_iter().map(|chat| (*tenant, chat));
        self.changed_chats.extend(changed);
    }
}

/// The after-commit work of the chats a pass changed, as for the same
/// change through the API (`chat::closing`: the sockets' `chat.session`;
/// for a close also the queues and the rating request).
pub async fn announce(state: &AppState, pass: &Pass) {
    let chat = crate::chat::ChatDeps::from_ref(state);
    for (tenant, changed) in &pass.changed_chats {
        let Some(session) = changed.snapshot.0.downcast_ref::<Session>() else {
            // Only `Chats` makes snapshots, and only of sessions.
            tracing::error!(session = %changed.chat, "a changed chat carried no session");
            continue;
        };
        let by = &changed.by;
        match changed.closed {
            true => crate::chat::closing::closed_elsewhere(&chat, by, tenant, session).await,
            false => crate::chat::closing::changed_elsewhere(&chat, by, tenant, session).await,
        }
    }
}

/// Starts the tenant's trigger cursor at the end of its feed, unless it
/// has one: triggers run on what commits after their tenant's first.
pub async fn start_triggers(db: &Db, tenant: &Tenant) -> Result<(), StoreError> {
    let head = feed::committed_head(db, tenant).await?;
    store::start_cursor(db, tenant, head).await
}

/// Runs the triggers of every tenant that has some on the feed entries
/// committed since the last pass; what they did.
pub async fn run_triggers(db: &Db, now: Timestamp, signer: &Signer) -> Result<Pass, StoreError> {
    let mut pass = Pass::default();
    for tenant in store::tenants_with(db, Kind::Trigger).await? {
        match tenant_triggers(db, &tenant, now, signer, &mut pass).await {
            Ok(()) => {}
            Err(err) => {
                tracing::warn!(company_id = %tenant.company_id, error = %err, "triggers not run")
            }
        }
    }
    Ok(pass)
}

/// The tenant's share of a trigger pass, added to `pass` as each entry
/// commits.
async fn tenant_triggers(
    db: &Db,
    tenant: &Tenant,
    now: Timestamp,
    signer: &Signer,
    pass: &mut Pass,
) -> Result<(), StoreError> {
    let Some(mut cursor) = store::cursor(db, tenant).await? else {
        return start_triggers(db, tenant).await;
    };
    let rules = store::enabled(db, tenant, Kind::Trigger).await?;
    let definitions = crate::custom_fields::store::list(db, tenant).await?;
    let ctx = Context {
        tenant: *tenant,
        now,
        signer,
        definitions: &definitions,
        parties: &crate::sequences::contacts::Parties,
        chats: &Chats,
    };
    let names: Vec<&str> = TriggerEvent::ALL
        .iter()
        .filter(|event| rules.iter().any(|rule| rule.events.contains(event)))
        .map(|event| event.as_str())
        .collect();
    // `cursor` is what the table holds; `seen` how far this pass has read.
    let mut seen = cursor;
    loop {
        let (entries, head) = feed::happened_after(db, tenant, seen, &names, BATCH).await?;
        let full = i64::try_from(entries.len()).unwrap_or(i64::MAX) >= BATCH;
        for entry in entries {
            seen = entry.seq;
            let actor = entry.actor.map(|actor| actor.0);
            // An automation's own changes ran the triggers when it made them.
            if actor
                .as_ref()
                .is_some_and(|a| a.kind == crate::actor::ActorType::Automation)
            {
                continue;
            }
            let Some(happening) = engine::recorded(&entry.name, &entry.data.0, actor) else {
                continue;
            };
            let mut tx = db.begin().await?;
            if !store::advance_cursor(&mut tx, tenant, cursor, entry.seq).await? {
                return Ok(());
            }
            match engine::run_triggers(&mut tx, &ctx, &rules, happening, 0).await {
                Ok(fired) => {
                    tx.commit().await?;
                    pass.add(tenant, fired);
                }
                Err(err) => {
                    // A rule that cannot apply (a field deleted since, a
                    // ticket gone) is logged and the entry passed, so one
                    // bad rule does not stop every later change.
                    drop(tx);
                    tracing::warn!(seq = entry.seq, error = %err, "triggers failed on a change");
                    let mut tx = db.begin().await?;
                    if !store::advance_cursor(&mut tx, tenant, cursor, entry.seq).await? {
                        return Ok(());
                    }
                    tx.commit().await?;
                }
            }
            cursor = entry.seq;
        }
        if !full {
            seen = seen.max(head);
            break;
        }
    }
    if seen > cursor {
        let mut tx = db.begin().await?;
        if store::advance_cursor(&mut tx, tenant, cursor, seen).await? {
            tx.commit().await?;
        }
    }
    Ok(())
}

/// Runs every enabled timed automation once, one node at a time; what
/// they did (`fired`: the tickets changed, a ticket once per automation
/// that fired on it).
pub async fn run_timed(db: &Db, now: Timestamp, signer: &Signer) -> Result<Pass, StoreError> {
    let mut pass = Pass::default();
    let Some(lock) = PassLock::try_take(db, PASS_LOCK_KEY, "automations").await? else {
        return Ok(pass);
    };
    let tenants = match store::tenants_with(db, Kind::Timed).await {
        Ok(tenants) => tenants,
        Err(err) => {
            lock.release().await;
            return Err(err);
        }
    };
    for tenant in tenants {
        match tenant_timed(db, &tenant, now, signer).await {
            Ok(fired) => pass.add(&tenant, fired),
            Err(err) => {
                tracing::warn!(company_id = %tenant.company_id, error = %err, "timed automations not run")
            }
        }
    }
    lock.release().await;
    Ok(pass)
}

async fn tenant_timed(
    db: &Db,
    tenant: &Tenant,
    now: Timestamp,
    signer: &Signer,
) -> Result<Fired, StoreError> {
    let rules = store::enabled(db, tenant, Kind::Timed).await?;
    let triggers = store::enabled(db, tenant, Kind::Trigger).await?;
    let definitions = crate::custom_fields::store::list(db, tenant).await?;
    let ctx = Context {
        tenant: *tenant,
        now,
        signer,
        definitions: &definitions,
        parties: &crate::sequences::contacts::Parties,
        chats: &Chats,
    };
    let mut fired = Fired::default();
    for rule in &rules {
        fired.add(timed::run(db, &ctx, rule, &triggers).await?);
    }
    Ok(fired)
}

/// Runs both passes every `every` (the first at once) until shutdown,
/// each followed by the after-commit work of what it did.
pub fn spawn(state: &AppState, every: Duration) -> JoinHandle<()> {
    let every = every.max(Duration::from_millis(10));
    let first = tokio::time::Instant::now();
    let state = state.clone();
    crate::time::every(state.shutdown.clone(), first, every, move || {
        let state = state.clone();
        async move {
            let now = state.clock.now();
            let signer = state.attachments.signer(now);
            match run_triggers(&state.db, now, &signer).await {
                Ok(pass) => {
                    if pass.fired > 0 {
                        tracing::info!(fired = pass.fired, "automation triggers fired");
                    }
                    announce(&state, &pass).await;
                }
                Err(err) => tracing::warn!(error = %err, "automation trigger pass failed"),
            }
            match run_timed(&state.db, now, &signer).await {
                Ok(pass) => {
                    if pass.fired > 0 {
                        tracing::info!(fired = pass.fired, "timed automations fired");
                    }
                    announce(&state, &pass).await;
                }
                Err(err) => tracing::warn!(error = %err, "timed automation pass failed"),
            }
        }
    })
}
