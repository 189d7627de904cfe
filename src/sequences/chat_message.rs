//! Sending a chat message: the chat area stores the message, and an agent's
//! answer records the SLA targets it meets on the tickets opened from the
//! session, in the message's transaction.

use futures::future::BoxFuture;
use uuid::Uuid;

use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::chat::model::NewMessage;
use crate::chat::store::{self as chat_store, AgentReply, AnsweredTickets, SendError, Sent};
use crate::db::{Db, Tx};
use crate::error::StoreError;
use crate::sla::clocks::store::Met;
use crate::tickets::store as ticket_store;
use crate::time::Timestamp;

/// Adds a message to an ACTIVE session (`chat::store::create_message`),
/// recording on each ticket of the session the SLA targets an agent's
/// message meets.
pub async fn create_message(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
    new: NewMessage,
    visitor_link: Option<&str>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Sent, SendError> {
    chat_store::create_message(
        db,
        tenant,
        session_id,
        new,
        AgentReply {
            visitor_link,
            tickets: &TicketSla {
                tenant,
                signer,
                now,
            },
        },
        now,
        signer,
    )
    .await
}

/// The SLA targets an agent's message met, recorded on a ticket of its
/// session (its timeline, `ticket.sla_*` events).
struct TicketSla<'s> {
    tenant: &'s Tenant,
    signer: &'s Signer,
    now: Timestamp,
}

impl AnsweredTickets for TicketSla<'_> {
    fn record<'a>(
        &'a self,
        tx: &'a mut Tx,
        ticket: Uuid,
        met: &'a [Met],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(ticket_store::record_sla(
            tx,
            self.tenant,
            ticket,
            met,
            self.signer,
            self.now,
        ))
    }
}
