//! Which ticket an incoming message answers: by its `In-Reply-To` and
//! `References` against the Message-IDs the tenant received and sent;
//! else by the reply token in the address it was sent to
//! (`support+<token>@…`); else by a ticket number in its subject when the
//! sender is that ticket's requester or one of its copies; else none (a
//! new ticket).

use uuid::Uuid;

use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::Tx;
use crate::email::model::{Channel, reply_token};
use crate::email::parse::Parsed;
use crate::email::store::messages::{self, Thread};
use crate::error::StoreError;
use crate::tickets::model::Ticket;
use crate::tickets::store as ticket_store;

/// How a reply found its ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Header,
    Token,
    Subject,
}

/// The ticket a message answers, how it was found, and its thread.
pub struct Found {
    pub ticket: Ticket,
    pub by: By,
    pub thread: Option<Thread>,
}

pub async fn find(
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    parsed: &Parsed,
    signer: &Signer,
) -> Result<Option<Found>, StoreError> {
    let ids: Vec<String> = parsed
        .in_reply_to
        .iter()
        .chain(parsed.references.iter().rev())
        .cloned()
        .collect();
    if let Some(id) = messages::ticket_of_ids(tx, tenant, &ids).await? {
        return found(tx, tenant, id, By::Header, signer).await;
    }
    let token = parsed
        .to
        .iter()
        .chain(parsed.cc.iter())
        .find_map(|address| reply_token(&channel.address, address));
    if let Some(token) = token
        && let Some(thread) = messages::thread_of_token(tx, tenant, &token).await?
    {
        return found(tx, tenant, thread.ticket_id, By::Token, signer).await;
    }
    let Some(number) = ticket_number(&parsed.subject) else {
        return Ok(None);
    };
    let Some(ticket) = ticket_store::find_by_number_in(tx, tenant, &number, signer).await? else {
        return Ok(None);
    };
    let thread = messages::thread(tx, tenant, ticket.id).await?;
    let sender = parsed.from.as_deref().unwrap_or_default();
    let requester = ticket
        .visitor_email
        .as_deref()
        .is_some_and(|email| email.eq_ignore_ascii_case(sender));
    let copied = thread
        .as_ref()
        .is_some_and(|t| t.cc.0.iter().any(|cc| cc == sender));
    if !(requester || copied) {
        return Ok(None);
    }
    found(tx, tenant, ticket.id, By::Subject, signer).await
}

/// The ticket `id` (or the one it was merged into) with its thread.
async fn found(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    by: By,
    signer: &Signer,
) -> Result<Option<Found>, StoreError> {
    let mut ticket = ticket_store::load(&mut *tx, tenant, id, signer).await?;
    if let Some(into) = ticket.merged_into {
        ticket = ticket_store::load(&mut *tx, tenant, into, signer).await?;
    }
    let thread = messages::thread(tx, tenant, ticket.id).await?;
    Ok(Some(Found { ticket, by, thread }))
}

/// The first `TKT-<digits>` in `subject` (six digits at least).
pub fn ticket_number(subject: &str) -> Option<String> {
    let upper = subject.to_ascii_uppercase();
    let mut rest = upper.as_str();
    while let Some(at) = rest.find("TKT-") {
        let digits: String = rest[at + 4..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if digits.len() >= 6 {
            return Some(format!("TKT-{digits}"));
        }
        rest = &rest[at + 4..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_number_is_found_in_a_subject() {
        assert_eq!(
            ticket_number("Re: [Acme] Printer (tkt-000042)"),
            Some("TKT-000042".into())
        );
        assert_eq!(ticket_number("TKT-42 is too short"), None);
    }
}
