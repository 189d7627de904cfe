//! SQL for comments: each one touches its ticket and records `commented`
//! and `comment.created` in the same transaction.

use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::read::ensure_ticket;
use super::user_ref;
use crate::attachments::links::Signer;
use crate::attachments::store::{self as attachment_store, Kind, Owner};
use crate::auth::Tenant;
use crate::db::{Db, Query, Table, Tx, ensure_reference};
use crate::delivery::DeliveryState;
use crate::error::StoreError;
use crate::events;
use crate::model::{ActivityKind, AuthorType, Comment, CommentEmail, NewComment, Ticket};
use crate::paging::{After, Order, push_after};
use crate::sla::clocks::store::{self as sla_store, Reply};
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

/// A comment with its author and, when it was made from an email, that
/// email's headers (recorded by the email component with the comment: one
/// incoming message makes at most one comment), joined on the message's
/// comment index: a comment that came by no email costs one probe of it,
/// no subquery.
pub(super) const COMMENT_SELECT: &str = "SELECT c.id, c.ticket_id, c.body, c.author_id, \
     u.name AS author_name, u.email AS author_email, c.author_type, c.is_internal, c.created_at, \
     c.delivery_state, c.send_at, m.envelope AS email \
     FROM ticket_comments c LEFT JOIN users u ON u.id = c.author_id \
     LEFT JOIN email_messages m ON m.comment_id = c.id AND m.direction = 'in'";

#[derive(sqlx::FromRow)]
pub(super) struct CommentRow {
    id: Uuid,
    ticket_id: Uuid,
    body: String,
    author_id: Option<Uuid>,
    author_name: Option<String>,
    author_email: Option<String>,
    author_type: AuthorType,
    is_internal: bool,
    created_at: Timestamp,
    delivery_state: DeliveryState,
    send_at: Option<Timestamp>,
    email: Option<Json<CommentEmail>>,
}

impl From<CommentRow> for Comment {
    fn from(row: CommentRow) -> Self {
        Comment {
            author: user_ref(row.author_id, row.author_name, row.author_email),
            id: row.id,
            ticket_id: row.ticket_id,
            body: row.body,
            author_id: row.author_id,
            author_type: row.author_type,
            is_internal: row.is_internal,
            attachments: Vec::new(),
            created_at: row.created_at,
            delivery_state: row.delivery_state,
            send_at: row.send_at,
            email: row.email.map(|email| email.0),
        }
    }
}

/// Adds a comment (the author, if given, must be a user of the company),
/// marks the ticket as active, and records `commented` and
/// `comment.created`; a customer's comment wakes a snoozed ticket. A
/// merged ticket takes no comment: 409 `ticket_merged`. `expected`: the
/// version the caller saw (`If-Match`); another one refuses the comment
/// (`StoreError::VersionConflict`).
#[allow(clippy::too_many_arguments)] // the reply's whole request
pub async fn add_comment(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    new: NewComment,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Comment, StoreError> {
    let mut tx = db.begin().await?;
    let (comment, _) =
        add_comment_in(&mut tx, tenant, ticket_id, new, expected, now, signer).await?;
    tx.commit().await?;
    Ok(comment)
}

/// The reply's step inside a transaction of the caller's (a macro's
/// application adds its reply and note with it): the comment, and the
/// ticket as the comment left it.
#[allow(clippy::too_many_arguments)] // the reply's whole request
pub async fn add_comment_in(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    new: NewComment,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<(Comment, Ticket), StoreError> {
    if let Some(author) = new.author_id {
        ensure_reference(
            &mut *tx,
            tenant.company_id,
            Table::Users,
            author,
            "authorId",
        )
        .await?;
    }
    if expected.is_some() {
        super::update::lock(tx, tenant, ticket_id).await?;
        super::update::check_version(tx, tenant, ticket_id, expected).await?;
    }
    Query::new(
        "UPDATE tickets SET updated_at = $4, version = version + 1 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .bind(now)
    .push_teams(tenant, "team_id")
    .execute_or_not_found(&mut *tx)
    .await?;
    super::merge::refuse_if_merged(&mut *tx, tenant, ticket_id).await?;
    let id = new_id();
    let (delivery_state, send_at) = new.delivery.stored();
    Query::new(
        "INSERT INTO ticket_comments (id, company_id, mode, ticket_id, body, author_id, \
         is_internal, created_at, author_type, delivery_state, send_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(ticket_id)
    .bind(&new.body)
    .bind(new.author_id)
    .bind(new.is_internal)
    .bind(now)
    .bind(new.author_type)
    .bind(delivery_state)
    .bind(send_at)
    .execute(&mut *tx)
    .await?;
    if new.is_internal {
        super::mentions::record(&mut *tx, tenant, ticket_id, id, &new.body, now).await?;
    }
    let reply = match (new.author_type, new.is_internal, new.author_id) {
        (AuthorType::Customer, _, _) => Reply::Customer,
        (AuthorType::Agent, true, _) => Reply::Internal,
        (AuthorType::Agent, false, None) => Reply::Unattributed,
        (AuthorType::Agent, false, Some(_)) => Reply::AgentPublic,
    };
    let met = sla_store::commented(tx, tenant, ticket_id, reply, now).await?;
    if let Some(agent) = new.assign_on_reply {
        super::assign::assign_on_reply(&mut *tx, tenant, ticket_id, agent, signer, now).await?;
    }
    let owner = Owner::Comment(id);
    attachment_store::attach(
        &mut *tx,
        tenant,
        owner,
        &new.attachment_ids,
        "attachmentIds",
    )
    .await?;
    let entry = NewActivity {
        details: Some(json!({
            "commentId": id,
            "authorId": new.author_id,
            "authorType": new.author_type,
            "isInternal": new.is_internal,
        })),
        ..NewActivity::new(ActivityKind::Commented)
    };
    add_activity(&mut *tx, tenant, ticket_id, entry, now).await?;
    let row: CommentRow = Query::new(COMMENT_SELECT)
        .push(" WHERE c.id = ")
        .push_bind(id)
        .fetch_one(&mut *tx)
        .await?;
    let comment = Comment {
        attachments: attachment_store::of(&mut *tx, owner, signer).await?,
        ..Comment::from(row)
    };
    // The comment touched the ticket (`updatedAt`): the feed carries both.
    let ticket = super::read::load(&mut *tx, tenant, ticket_id, signer).await?;
    crate::event_log::record_change(&mut *tx, tenant, &events::ticket_change(&ticket)?, now)
        .await?;
    // A held or scheduled reply is announced when it is delivered
    // (`deliver_due`), a cancelled one never.
    if delivery_state == DeliveryState::Sent {
        events::comment_created(&mut *tx, tenant, &ticket, &comment, now).await?;
    }
    if new.author_type == AuthorType::Customer {
        super::snooze::wake_on_reply(&mut *tx, tenant, ticket_id, now, signer).await?;
    }
    if !met.is_empty() {
        super::record_sla(&mut *tx, tenant, ticket_id, &met, signer, now).await?;
    }
    Ok((comment, ticket))
}

/// The change feed's entry of each of the comments `ids` that a merge, its
/// undo or a split has just moved to another ticket: the comment as it now
/// is (`ticketId` the ticket it moved to), made by the transaction's actor,
/// so that a mirror following the feed moves it too. Only replies sent (and
/// notes): a held or scheduled reply has no entry yet, and gets its first
/// when it is delivered (`deliver_due`), on the ticket it is on then.
pub(super) async fn record_moved(
    tx: &mut Tx,
    tenant: &Tenant,
    ids: &[Uuid],
    now: Timestamp,
    signer: &Signer,
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    let rows: Vec<CommentRow> = Query::new(COMMENT_SELECT)
        .push(" WHERE ")
        .push_tenant(tenant, "c")
        .push(" AND c.delivery_state = 'sent' AND c.id IN ")
        .push_bind_list(ids.iter().copied())
        .push(" ORDER BY c.created_at, c.id")
        .fetch_all(&mut *tx)
        .await?;
    let sent: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
    let mut files = attachment_store::of_each(&mut *tx, Kind::Comment, &sent, signer).await?;
    for row in rows {
        let comment = Comment {
            attachments: files.remove(&row.id).unwrap_or_default(),
            ..Comment::from(row)
        };
        let change = events::comment_change(&comment)?;
        crate::event_log::record_change(&mut *tx, tenant, &change, now).await?;
    }
    Ok(())
}

/// The condition on comments `c` that leaves out what the customer does
/// not see (internal notes, replies not sent), unless the reader reads
/// notes (`notes`: [`crate::model::reads_internal_notes`]: an agent, who
/// sees held, scheduled and cancelled replies too).
fn hidden_notes(notes: bool) -> &'static str {
    if notes {
        ""
    } else {
        " AND NOT c.is_internal AND c.delivery_state = 'sent'"
    }
}

/// A page of the ticket's comments, oldest first (a conversation), read
/// with one row more than `page.limit`, and their number; internal notes
/// and replies not yet sent only when `notes`.
pub async fn list_comments(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    notes: bool,
    page: Page,
    after: Option<&After>,
    signer: &Signer,
) -> Result<(Vec<Comment>, i64), StoreError> {
    ensure_ticket(db, tenant, ticket_id).await?;
    let matching = Query::new(COMMENT_SELECT)
        .push(" WHERE c.ticket_id = ")
        .push_bind(ticket_id)
        .push(" AND ")
        .push_tenant(tenant, "c")
        .push(hidden_notes(notes));
    let rows: Vec<CommentRow> = push_after(matching, "c", after, Order::OldestFirst)
        .push(" ORDER BY c.created_at, c.id LIMIT ")
        .push_bind(page.limit + 1)
        .push(" OFFSET ")
        .push_bind(page.offset)
        .fetch_all(db)
        .await?;
    let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
    let mut files = attachment_store::of_each(db, Kind::Comment, &ids, signer).await?;
    let rows: Vec<Comment> = rows
        .into_iter()
        .map(|row| Comment {
            attachments: files.remove(&row.id).unwrap_or_default(),
            ..Comment::from(row)
        })
        .collect();
    let total = Query::new(
        "SELECT COUNT(*) FROM ticket_comments c WHERE c.ticket_id = $1 AND c.company_id = $2 \
         AND c.mode = $3",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .push(hidden_notes(notes))
    .fetch_scalar(db)
    .await?;
    Ok((rows, total))
}
