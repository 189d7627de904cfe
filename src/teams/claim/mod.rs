//! SQL of assignment: routing's claim of a team's next queued chat, a
//! person's assignment, the queue as visitors see it, and the requeue of an
//! offline agent's unanswered chats.
//!
//! A chat claim runs in one transaction that first locks the team's row
//! (Postgres `FOR NO KEY UPDATE`; SQLite's `BEGIN IMMEDIATE` excludes every
//! other writer), so two nodes draining one team take turns. Each agent's
//! open chats are one `agent_loads` row, kept by triggers on the sessions in
//! the transaction of every change: the claim picks its member with one
//! query over those rows, then locks that member's row with the count
//! re-checked (a member of several teams is also taken by claims of the
//! others), so no two claims can both fill their last place. The chat
//! itself is taken with a conditional UPDATE (still ACTIVE and unassigned),
//! so a close or a person's assignment that won the race is never
//! overwritten. A ticket claim counts its members' open tickets under the
//! locks of their user rows, in id order: tickets are routed one at a time
//! as they are created or moved, not at the rate of chats. A Redis script would avoid the database round
//! trips, but the counts would then live in two stores that can disagree
//! after a crash; the rows are the truth the API shows.
//!
//! Here are what an assignment records (its reason, the `chat.assigned`
//! event) and the row lock the claims share; `chat` claims a queued chat,
//! `ticket` claims a ticket, `assign` is a person's assignment, `queue`
//! reads the queues, and `requeue` puts an away agent's chats back.

mod assign;
mod chat;
mod queue;
mod requeue;
mod ticket;

pub use assign::{assign_manually, assign_on_reply};
pub use chat::{Claim, claim_next};
pub use queue::{Queued, position, queue, teams_waiting};
pub use requeue::{mark_away, mark_back, requeue, unanswered_away_before};
pub use ticket::claim_ticket;

use serde::Serialize;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::chat::Session;
use crate::chat::store::record_session;
use crate::db::{Backend, Tx};
use crate::error::StoreError;
use crate::events::{self, EventName, EventPayload};
use crate::time::Timestamp;

pub use crate::teams::model::Reason;

/// `assignment` of a `chat.assigned` event and of the socket frame.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    pub reason: Reason,
    pub team_id: Option<Uuid>,
    pub assignee_id: Option<Uuid>,
}

/// The data of `chat.assigned`, and who held the chat before.
#[derive(Debug, Clone, Serialize)]
pub struct Assigned {
    pub session: Session,
    pub assignment: Assignment,
    /// The assignee the change took the chat from, whose console must hear
    /// of it; not part of the event.
    #[serde(skip)]
    pub previous_assignee_id: Option<Uuid>,
}

impl EventPayload for Assigned {
    const NAME: EventName = EventName::ChatAssigned;
}

/// Records the assignment of `session` (its row already changed), taken
/// from `previous`: the change feed's entry and the `chat.assigned` event,
/// in `tx`.
async fn finish(
    tx: &mut Tx,
    tenant: &Tenant,
    session: Uuid,
    assignment: Assignment,
    previous: Option<Uuid>,
    now: Timestamp,
) -> Result<Assigned, StoreError> {
    let session = record_session(tx, tenant, session, now).await?;
    let assigned = Assigned {
        session,
        assignment,
        previous_assignee_id: previous.filter(|p| Some(*p) != assignment.assignee_id),
    };
    events::emit(tx, tenant, &assigned, now).await?;
    Ok(assigned)
}

/// A claim's row lock on Postgres: `NO KEY UPDATE`, so that inserting a
/// session that references the team (a key share) does not wait for a
/// claim, while claims of the team (and those taking one agent's places)
/// still take turns. SQLite's `BEGIN IMMEDIATE` already excludes them.
fn row_lock(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => " FOR NO KEY UPDATE",
        Backend::Sqlite => "",
    }
}
