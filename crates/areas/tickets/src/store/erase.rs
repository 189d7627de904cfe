//! Erasing a person from their tickets, a batch at a time (each batch its
//! own short transaction, run by the erasure sequence): what they wrote
//! (subject, description, their comments) becomes the marker, the fields
//! that name them are emptied, agents' replies and the timeline keep their
//! words but lose the person's, their files' rows go (the caller releases
//! the bytes after the commit), and each ticket's search document is
//! written again from what is left. A ticket is released from the contact
//! as it is erased, so the next batch takes the next tickets.

use uuid::Uuid;

use crate::attachments::cleanup::{Sent, erase_sent};
use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::erasure::{Column, MARKER, Person, scrub_rows};
use crate::error::StoreError;

/// What one batch erased.
#[derive(Debug, Clone, Default)]
pub struct ErasedTickets {
    pub tickets: Vec<Uuid>,
    /// Every comment of those tickets (the change feed names them).
    pub comments: Vec<Uuid>,
    /// The SHA-256s of the files whose rows went.
    pub files: Vec<String>,
}

/// The ids of the tenant's tickets from contact `contact` (every team's).
pub async fn ids_of_contact(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    Query::new("SELECT t.id FROM tickets t WHERE t.contact_id = ")
        .push_bind(contact)
        .push(" AND ")
        .push_tenant(tenant, "t")
        .push(" ORDER BY t.id LIMIT ")
        .push_bind(limit)
        .fetch_column(tx)
        .await
}

/// How many tickets contact `contact` has.
pub async fn count_of_contact(
    db: &crate::db::Db,
    tenant: &Tenant,
    contact: Uuid,
) -> Result<i64, StoreError> {
    Query::new("SELECT count(*) FROM tickets t WHERE t.contact_id = ")
        .push_bind(contact)
        .push(" AND ")
        .push_tenant(tenant, "t")
        .fetch_scalar(db)
        .await
}

/// Erases `person` from up to `limit` of contact `contact`'s tickets in
/// `tx`.
pub async fn erase_batch(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    person: &Person,
    limit: i64,
) -> Result<ErasedTickets, StoreError> {
    let tickets = ids_of_contact(tx, tenant, contact, limit).await?;
    if tickets.is_empty() {
        return Ok(ErasedTickets::default());
    }
    let theirs: Vec<Uuid> = Query::new(
        "SELECT id FROM ticket_comments WHERE author_type = 'customer' AND ticket_id IN ",
    )
    .push_bind_list(tickets.iter().copied())
    .fetch_column(&mut *tx)
    .await?;
    let comments: Vec<Uuid> = Query::new("SELECT id FROM ticket_comments WHERE ticket_id IN ")
        .push_bind_list(tickets.iter().copied())
        .fetch_column(&mut *tx)
        .await?;
    let sent = Sent {
        tickets: &tickets,
        comments: &theirs,
        ..Sent::default()
    };
    let files = erase_sent(tx, tenant, &sent).await?;
    if !theirs.is_empty() {
        Query::new("UPDATE ticket_comments SET body = $1 WHERE id IN ")
            .bind(MARKER)
            .push_bind_list(theirs.iter().copied())
            .execute(&mut *tx)
            .await?;
    }
    let bodies = [Column::text("body")];
    scrub_rows(
        tx,
        "ticket_comments",
        "id",
        "ticket_id",
        &tickets,
        &bodies,
        person,
    )
    .await?;
    Query::new(
        "UPDATE tickets SET subject = $1, description = CASE WHEN description IS NULL THEN NULL \
         ELSE $1 END, visitor_email = NULL, visitor_name = NULL, visitor_external_id = NULL, \
         contact_id = NULL WHERE id IN ",
    )
    .bind(MARKER)
    .push_bind_list(tickets.iter().copied())
    .execute(&mut *tx)
    .await?;
    let fields = [Column::json("custom_fields")];
    scrub_rows(tx, "tickets", "id", "id", &tickets, &fields, person).await?;
    let timeline = [
        Column::text("from_value"),
        Column::text("to_value"),
        Column::json("details"),
        Column::json("actor"),
    ];
    scrub_rows(
        tx,
        "ticket_activities",
        "id",
        "ticket_id",
        &tickets,
        &timeline,
        person,
    )
    .await?;
    for ticket in &tickets {
        super::search::reindex_comments(tx, *ticket).await?;
    }
    Ok(ErasedTickets {
        tickets,
        comments,
        files,
    })
}

/// Merges the segments of SQLite's full-text index, so the terms of
/// erased text leave its pages too (a delete only marks them); Postgres
/// rebuilds a row's vector as the row changes.
pub async fn compact_search(db: &crate::db::Db) -> Result<(), StoreError> {
    if db.backend() == crate::db::Backend::Sqlite {
        Query::new("INSERT INTO ticket_search_fts (ticket_search_fts) VALUES ('optimize')")
            .execute(db)
            .await?;
    }
    Ok(())
}
