//! SQL for mentions: the agents a note names, recorded in the note's
//! transaction, and each agent's list.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::mentions::{Mention, mention_tokens};
use crate::paging::{After, Order, Total, capped_count, push_after};
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

/// Records whom the note `comment_id` (its text `body`) mentions: for each
/// `@` word, the active user of the company with that email, or else the
/// one user whose email's local part it is (two such users: no one).
/// Answers them, each once.
pub(crate) async fn record(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    comment_id: Uuid,
    body: &str,
    now: Timestamp,
) -> Result<Vec<Uuid>, StoreError> {
    let mut mentioned = Vec::new();
    for token in mention_tokens(body) {
        let local = !token.contains('@');
        let mut query = Query::new("SELECT u.id FROM users u WHERE u.company_id = ")
            .push_bind(tenant.company_id)
            .push(" AND u.is_active AND (lower(u.email) = ")
            .push_bind(token.clone());
        if local {
            query = query
                .push(" OR substr(lower(u.email), 1, CAST(")
                .push_bind(token.chars().count() as i64 + 1)
                // Postgres' substr takes an integer, not the BIGINT bound.
                .push(" AS INTEGER)) = ")
                .push_bind(format!("{token}@"));
        }
        let found: Vec<(Uuid,)> = query.push(") LIMIT 2").fetch_all(&mut *tx).await?;
        if let [(user,)] = found.as_slice()
            && !mentioned.contains(user)
        {
            mentioned.push(*user);
        }
    }
    for user in &mentioned {
        Query::new(
            "INSERT INTO ticket_mentions (id, company_id, mode, ticket_id, comment_id, user_id, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(new_id())
        .bind_tenant(tenant)
        .bind(ticket_id)
        .bind(comment_id)
        .bind(*user)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    Ok(mentioned)
}

/// The users the note `comment_id` mentions.
pub async fn of_comment(
    db: &Db,
    tenant: &Tenant,
    comment_id: Uuid,
) -> Result<Vec<Uuid>, StoreError> {
    let rows: Vec<(Uuid,)> = Query::new("SELECT m.user_id FROM ticket_mentions m WHERE ")
        .push_tenant(tenant, "m")
        .push(" AND m.comment_id = ")
        .push_bind(comment_id)
        .push(" ORDER BY m.id")
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|(user,)| user).collect())
}

#[derive(sqlx::FromRow)]
struct MentionRow {
    id: Uuid,
    user_id: Uuid,
    ticket_id: Uuid,
    ticket_number: String,
    comment_id: Uuid,
    author_id: Option<Uuid>,
    body: String,
    created_at: Timestamp,
}

/// `select` WHERE the mentions of `user` on tickets the tenant sees: the
/// ticket the note is on now (a merge moves notes to its target).
fn of_user(select: &str, tenant: &Tenant, user: Uuid) -> Query {
    Query::new(select)
        .push(
            " FROM ticket_mentions m JOIN ticket_comments c ON c.id = m.comment_id \
             JOIN tickets t ON t.id = c.ticket_id WHERE ",
        )
        .push_tenant_in_teams(tenant, "t", "team_id")
        .push(" AND m.user_id = ")
        .push_bind(user)
}

/// A page of `user`'s mentions, newest first, read with one row more than
/// `page.limit`, and their number (capped at `cap`).
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    user: Uuid,
    page: Page,
    after: Option<&After>,
    cap: i64,
) -> Result<(Vec<Mention>, Total), StoreError> {
    let total = capped_count(db, of_user("SELECT 1", tenant, user), cap).await?;
    let select = "SELECT m.id, m.user_id, c.ticket_id, t.ticket_number, m.comment_id, \
         c.author_id, c.body, m.created_at";
    let rows: Vec<MentionRow> = push_after(
        of_user(select, tenant, user),
        "m",
        after,
        Order::NewestFirst,
    )
    .push(" ORDER BY m.created_at DESC, m.id DESC LIMIT ")
    .push_bind(page.limit + 1)
    .push(" OFFSET ")
    .push_bind(page.offset)
    .fetch_all(db)
    .await?;
    let mentions = rows
        .into_iter()
        .map(|row| Mention {
            id: row.id,
            user_id: row.user_id,
            ticket_id: row.ticket_id,
            ticket_number: row.ticket_number,
            comment_id: row.comment_id,
            author_id: row.author_id,
            body: row.body,
            created_at: row.created_at,
        })
        .collect();
    Ok((mentions, total))
}
