//! SQL for delivering held and scheduled replies (`deliver_due`, the
//! delivery pass) and cancelling one before it is sent
//! (`cancel_comment`). Each delivery is a conditional UPDATE of the
//! comment's state, so a reply is delivered once however many nodes run
//! the pass, and a cancel that commits first wins.

use futures::future::BoxFuture;
use serde_json::json;
use uuid::Uuid;

use super::comments::{COMMENT_SELECT, CommentRow};
use crate::actor::Actor;
use crate::attachments::links::Signer;
use crate::attachments::store::{self as attachment_store, Owner};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::{Mode, Tenant};
use crate::db::{Db, PassLock, Query};
use crate::delivery::DeliveryState;
use crate::error::StoreError;
use crate::events;
use crate::model::{Comment, Ticket};
use crate::time::Timestamp;

/// At most this many replies per batch of the delivery pass.
const BATCH: i64 = 500;

/// One node at a time runs the delivery pass (Postgres' advisory lock key).
const PASS_LOCK_KEY: i64 = 0x5344_5345_4e44_5550;

/// The states of a reply not yet sent: the ones a pass delivers and a
/// `DELETE` cancels.
const WAITING: &str = "('held', 'scheduled')";

#[derive(sqlx::FromRow)]
struct DueReply {
    id: Uuid,
    company_id: Uuid,
    mode: Mode,
    ticket_id: Uuid,
}

/// What else a reply's delivery does, in its transaction: a step of
/// another area (the email that carries a reply on an email ticket), which
/// the sequence above both passes in.
pub trait ReplySent: Sync {
    fn sent<'a>(
        &'a self,
        tx: &'a mut crate::db::Tx,
        tenant: &'a Tenant,
        ticket: &'a Ticket,
        comment: &'a Comment,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// Delivers every held or scheduled reply whose `send_at` has come at
/// `now`, each in its own transaction: its state becomes `sent` and its
/// `comment.created` is recorded and announced, named after its author
/// (the service's own when it has none). Reads only the index of waiting
/// replies' send times. Returns how many it delivered; 0 when another node
/// holds the pass.
pub async fn deliver_due(
    db: &Db,
    now: Timestamp,
    signer: &Signer,
    on_sent: &dyn ReplySent,
) -> Result<usize, StoreError> {
    let Some(lock) = PassLock::try_take(db, PASS_LOCK_KEY, "reply delivery").await? else {
        return Ok(0);
    };
    let mut delivered = 0;
    let result = loop {
        let due: Result<Vec<DueReply>, StoreError> = Query::new(format!(
            "SELECT id, company_id, mode, ticket_id FROM ticket_comments \
             WHERE delivery_state IN {WAITING} AND send_at <= $1 ORDER BY send_at LIMIT $2"
        ))
        .bind(now)
        .bind(BATCH)
        .fetch_all(db)
        .await;
        let due = match due {
            Ok(due) => due,
            Err(err) => break Err(err),
        };
        let batch = due.len();
        for reply in due {
            match deliver(db, &reply, now, signer, on_sent).await {
                Ok(true) => delivered += 1,
                Ok(false) => {}
                Err(err) => return finish(lock, Err(err)).await,
            }
        }
        if batch < BATCH as usize {
            break Ok(delivered);
        }
    };
    finish(lock, result).await
}

async fn finish(lock: PassLock, result: Result<usize, StoreError>) -> Result<usize, StoreError> {
    lock.release().await;
    result
}

/// Claims one due reply and announces it; false when it was no longer
/// waiting (cancelled, or delivered by another node).
async fn deliver(
    db: &Db,
    reply: &DueReply,
    now: Timestamp,
    signer: &Signer,
    on_sent: &dyn ReplySent,
) -> Result<bool, StoreError> {
    let mut tx = db.begin().await?;
    let claimed: Option<(Uuid,)> = Query::new(format!(
        "UPDATE ticket_comments SET delivery_state = 'sent' WHERE id = $1 \
         AND delivery_state IN {WAITING} AND send_at <= $2 RETURNING id"
    ))
    .bind(reply.id)
    .bind(now)
    .fetch_optional(&mut tx)
    .await?;
    if claimed.is_none() {
        return Ok(false);
    }
    let tenant = Tenant::new(reply.company_id, reply.mode);
    let comment = read(&mut tx, reply.id, signer).await?;
    if let (Some(id), Some(author)) = (comment.author_id, &comment.author) {
        tx.act_as(Actor::agent(id, author.name.clone()));
    }
    let ticket = super::read::load(&mut tx, &tenant.whole(), reply.ticket_id, signer).await?;
    events::comment_created(&mut tx, &tenant, &ticket, &comment, now).await?;
    on_sent
        .sent(&mut tx, &tenant, &ticket, &comment, now)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// The comment `id` with its attachments.
async fn read(tx: &mut crate::db::Tx, id: Uuid, signer: &Signer) -> Result<Comment, StoreError> {
    let row: CommentRow = Query::new(COMMENT_SELECT)
        .push(" WHERE c.id = ")
        .push_bind(id)
        .fetch_one(&mut *tx)
        .await?;
    let attachments = attachment_store::of(&mut *tx, Owner::Comment(id), signer).await?;
    Ok(Comment {
        attachments,
        ..Comment::from(row)
    })
}

fn refused(message: &str) -> StoreError {
    StoreError::Refused(Box::new(crate::error::ApiError::conflict(message)))
}

/// Cancels the reply `comment_id` of ticket `ticket_id` while it is held or
/// scheduled: it is never delivered, and the audit log records who
/// withdrew it (`comment.cancelled`, the API's delete of a comment). One
/// already sent is refused (409 `conflict`); one cancelled already is
/// answered as it is, with no entry.
pub async fn cancel_comment(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    comment_id: Uuid,
    signer: &Signer,
    now: Timestamp,
) -> Result<Comment, StoreError> {
    super::read::ensure_ticket(db, tenant, ticket_id).await?;
    let mut tx = db.begin().await?;
    let state: DeliveryState = Query::new("SELECT c.delivery_state FROM ticket_comments c WHERE ")
        .push_tenant(tenant, "c")
        .push(" AND c.ticket_id = ")
        .push_bind(ticket_id)
        .push(" AND c.id = ")
        .push_bind(comment_id)
        .fetch_scalar(&mut tx)
        .await?;
    match state {
        DeliveryState::Sent => {
            return Err(refused(
                "The comment was sent already: only a held or scheduled reply can be cancelled",
            ));
        }
        DeliveryState::Cancelled => {}
        waiting @ (DeliveryState::Held | DeliveryState::Scheduled) => {
            Query::new(format!(
                "UPDATE ticket_comments SET delivery_state = 'cancelled' WHERE id = $1 \
                 AND delivery_state IN {WAITING}"
            ))
            .bind(comment_id)
            .execute_or_not_found(&mut tx)
            .await
            .map_err(|_| refused("The comment was sent meanwhile"))?;
            let changes = Changes::none()
                .with("before", json!({"deliveryState": waiting.as_str()}))
                .with(
                    "after",
                    json!({"deliveryState": "cancelled", "ticketId": ticket_id}),
                );
            let target = Target::new(TargetType::Comment, comment_id);
            let action = Action::CommentCancelled;
            crate::audit::record(&mut tx, tenant.company_id, now, action, target, changes).await?;
        }
    }
    let comment = read(&mut tx, comment_id, signer).await?;
    tx.commit().await?;
    Ok(comment)
}
