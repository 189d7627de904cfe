//! Reading a ticket's links: each link one row, read from both of its
//! tickets, each side with its own kind. Apart from `links` (making and
//! removing them), because reading a ticket needs its links and making a
//! link reads the ticket.

use std::collections::HashMap;

use uuid::Uuid;

use crate::db::{On, Query};
use crate::error::StoreError;
use crate::relations::{LinkKind, TicketLink};
use crate::time::Timestamp;

#[derive(sqlx::FromRow)]
struct LinkRow {
    owner: Uuid,
    other: Uuid,
    ticket_number: String,
    kind: LinkKind,
    created_at: Timestamp,
    /// The owner is the row's `to_id`: it sees the inverse kind.
    far_side: bool,
}

impl LinkRow {
    fn link(&self) -> TicketLink {
        TicketLink {
            ticket_id: self.other,
            ticket_number: self.ticket_number.clone(),
            kind: match self.far_side {
                true => self.kind.inverse(),
                false => self.kind,
            },
            created_at: self.created_at,
        }
    }
}

/// The links of each of `tickets`, oldest first.
pub(super) async fn of_each<'c>(
    on: impl Into<On<'c>>,
    tickets: &[Uuid],
) -> Result<HashMap<Uuid, Vec<TicketLink>>, StoreError> {
    let mut found: HashMap<Uuid, Vec<TicketLink>> = HashMap::new();
    if tickets.is_empty() {
        return Ok(found);
    }
    let rows: Vec<LinkRow> = Query::new(
        "SELECT l.from_id AS owner, l.to_id AS other, o.ticket_number AS ticket_number, l.kind AS kind, \
         l.created_at AS created_at, FALSE AS far_side FROM ticket_links l JOIN tickets o ON o.id = l.to_id \
         WHERE l.from_id IN ",
    )
    .push_bind_list(tickets.iter().copied())
    .push(
        " UNION ALL SELECT l.to_id AS owner, l.from_id AS other, o.ticket_number, l.kind, \
         l.created_at, TRUE AS far_side FROM ticket_links l JOIN tickets o ON o.id = l.from_id \
         WHERE l.to_id IN ",
    )
    .push_bind_list(tickets.iter().copied())
    .push(" ORDER BY created_at, other")
    .fetch_all(on)
    .await?;
    for row in rows {
        found.entry(row.owner).or_default().push(row.link());
    }
    Ok(found)
}

/// The links of `ticket`, oldest first.
pub(super) async fn of<'c>(
    on: impl Into<On<'c>>,
    ticket: Uuid,
) -> Result<Vec<TicketLink>, StoreError> {
    Ok(of_each(on, &[ticket])
        .await?
        .remove(&ticket)
        .unwrap_or_default())
}
