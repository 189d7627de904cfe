//! SQL for comments: each one touches its ticket and records `commented`
//! and `comment.created` in the same transaction.

use serde_json::json;
use sqlx::AssertSqlSafe;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::{ensure_ticket, user_ref};
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::StoreError;
use crate::tickets::events;
use crate::tickets::model::{ActivityKind, Comment, NewComment};
use crate::time::{Timestamp, new_id};
use crate::validate::Page;
use crate::{on_db, on_tx, users};

const COMMENT_SELECT: &str = "SELECT c.id, c.ticket_id, c.body, c.author_id, \
     u.name AS author_name, u.email AS author_email, c.is_internal, c.created_at \
     FROM ticket_comments c LEFT JOIN users u ON u.id = c.author_id";

#[derive(sqlx::FromRow)]
struct CommentRow {
    id: Uuid,
    ticket_id: Uuid,
    body: String,
    author_id: Option<Uuid>,
    author_name: Option<String>,
    author_email: Option<String>,
    is_internal: bool,
    created_at: Timestamp,
}

impl From<CommentRow> for Comment {
    fn from(row: CommentRow) -> Self {
        Comment {
            author: user_ref(row.author_id, row.author_name, row.author_email),
            id: row.id,
            ticket_id: row.ticket_id,
            body: row.body,
            author_id: row.author_id,
            is_internal: row.is_internal,
            created_at: row.created_at,
        }
    }
}

/// Adds a comment (the author, if given, must be a user of the company),
/// marks the ticket as active, and records `commented` and
/// `comment.created`.
pub async fn add_comment(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    new: NewComment,
) -> Result<Comment, StoreError> {
    if let Some(author) = new.author_id {
        users::store::find_reference(db, tenant.company_id, author, "authorId").await?;
    }
    let mut tx = db.begin().await?;
    let now = Timestamp::now();
    let touched = on_tx!(&mut tx, c => sqlx::query(
        "UPDATE tickets SET updated_at = $4 WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(ticket_id).bind(tenant.company_id).bind(tenant.mode.as_str()).bind(now)
        .execute(c).await?.rows_affected());
    if touched == 0 {
        return Err(StoreError::NotFound);
    }
    let id = new_id();
    on_tx!(&mut tx, c => sqlx::query(
        "INSERT INTO ticket_comments (id, company_id, mode, ticket_id, body, author_id, \
         is_internal, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
        .bind(id)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(ticket_id)
        .bind(&new.body)
        .bind(new.author_id)
        .bind(new.is_internal)
        .bind(now)
        .execute(c)
        .await?
        .rows_affected());
    let entry = NewActivity {
        details: Some(json!({
            "commentId": id,
            "authorId": new.author_id,
            "isInternal": new.is_internal,
        })),
        ..NewActivity::new(ActivityKind::Commented)
    };
    add_activity(&mut tx, tenant, ticket_id, entry, now).await?;
    let sql = format!("{COMMENT_SELECT} WHERE c.id = $1");
    let comment: Comment = on_tx!(&mut tx, c => sqlx::query_as::<_, CommentRow>(AssertSqlSafe(sql))
        .bind(id).fetch_one(c).await?)
    .into();
    events::comment_created(&mut tx, tenant, &comment).await?;
    tx.commit().await?;
    Ok(comment)
}

/// A page of the ticket's comments, oldest first (a conversation), and
/// their number.
pub async fn list_comments(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    page: Page,
) -> Result<(Vec<Comment>, i64), StoreError> {
    ensure_ticket(db, tenant, ticket_id).await?;
    let sql = format!(
        "{COMMENT_SELECT} WHERE c.ticket_id = $1 AND c.company_id = $2 AND c.mode = $3 \
         ORDER BY c.created_at, c.id LIMIT $4 OFFSET $5"
    );
    let rows = on_db!(db, c => sqlx::query_as::<_, CommentRow>(AssertSqlSafe(sql))
        .bind(ticket_id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .bind(page.limit).bind(page.offset)
        .fetch_all(c).await?);
    let total = on_db!(db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM ticket_comments WHERE ticket_id = $1 AND company_id = $2 \
         AND mode = $3")
        .bind(ticket_id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_one(c).await?);
    Ok((rows.into_iter().map(Comment::from).collect(), total))
}
