//! Collision on tickets: an agent's socket says it views a ticket
//! (`viewing`, refreshed), types on it (`typing` with `ticketId`) or left
//! it (`leave`); the ticket's subscribers (`ticket:<id>`) hear each change
//! of that agent's state as a `viewing` event. A socket that closes leaves
//! every ticket it viewed; holds that are not refreshed expire
//! (`realtime::watchers`).

use axum::http::StatusCode;
use uuid::Uuid;

use super::{Credential, Fail, Socket};
use crate::actor::ActorType;
use crate::auth::Scope;
use crate::error::{ApiError, ErrorCode};
use crate::realtime::Realtime;
use crate::realtime::hub::TicketReads;
use crate::realtime::protocol::{self, Channel};
use crate::realtime::watchers::{self, Seat, Viewer};
use crate::validate::{Fields, required_id};

/// Tickets a socket remembers as seen (so a typing burst reads none again).
const SEEN_TICKETS: usize = 32;

/// What a frame does to the socket's hold on a ticket.
#[derive(Clone, Copy)]
pub(super) enum Hold {
    View,
    Type,
    Leave,
}

impl Socket {
    /// Whether this socket may read the ticket's channel: an agent's socket
    /// whose key reads tickets, and a ticket of its tenant (404 otherwise,
    /// as REST; an agent limited to their teams finds only their teams').
    pub(super) async fn readable_ticket(&mut self, ticket_id: Uuid) -> Result<(), Fail> {
        if self.credential.is_visitor() {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::InsufficientScope,
                "A visitor token gives its own session and presence only",
            )
            .into());
        }
        if self.conn.ticket_reads() == TicketReads::Nothing {
            return Err(ApiError::forbidden_scope(Scope::TicketsRead.as_str()).into());
        }
        if self.tickets.contains(&ticket_id) {
            return Ok(());
        }
        let tenant = self.credential.tenant();
        let signer = self.state.link_signer();
        crate::tickets::store::find(&self.state.db, &tenant, ticket_id, &signer).await?;
        if self.tickets.len() >= SEEN_TICKETS {
            self.tickets.remove(0);
        }
        self.tickets.push(ticket_id);
        Ok(())
    }

    /// A `viewing`, `typing` (with `ticketId`) or `leave` frame: only an
    /// agent's own socket (their session, or their personal key) is someone
    /// who views; a company key's socket is not.
    pub(super) async fn hold_ticket(
        &mut self,
        ticket_id: Option<&str>,
        hold: Hold,
    ) -> Result<(), Fail> {
        let actor = self.credential.actor();
        let (user_id, name) = match (&self.credential, actor.kind, actor.id) {
            (Credential::Agent { .. }, ActorType::Agent, Some(id)) => (id, actor.name.clone()),
            _ => {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    ErrorCode::InsufficientScope,
                    "Only an agent's socket (their session or personal key) views a ticket",
                )
                .into());
            }
        };
        let (ticket_id,) = (required_id("ticketId", ticket_id.map(str::trim)),).all_valid()?;
        self.readable_ticket(ticket_id).await?;
        let seat = Seat {
            tenant: self.credential.tenant(),
            ticket_id,
            user_id,
            socket: self.conn.id,
        };
        let registry = &self.state.realtime.watchers;
        let (viewer, changed) = match hold {
            Hold::View => registry.view(seat, &name),
            Hold::Type => registry.type_on(seat, &name),
            Hold::Leave => registry.leave(seat, &name),
        };
        // A refresh of `viewing` is announced again: a subscriber on another
        // node (whose own registry does not know this socket) learns of the
        // viewer by the next refresh. Typing is announced when it starts.
        let announce = changed || matches!(hold, Hold::View);
        if announce {
            watchers::announce(&self.state.realtime, seat.tenant, &viewer).await;
        }
        Ok(())
    }

    /// On subscribing to `ticket:<id>`: one `viewing` frame per agent
    /// viewing it now (on this node).
    pub(super) async fn viewers_snapshot(&mut self, ticket_id: Uuid) -> Result<(), Fail> {
        let tenant = self.credential.tenant();
        let viewers: Vec<Viewer> = self.state.realtime.watchers.viewers(tenant, ticket_id);
        let name = Channel::Ticket(ticket_id).name();
        for viewer in viewers {
            self.send_text(protocol::event("viewing", &name, None, &viewer))
                .await?;
        }
        Ok(())
    }
}

/// A socket closed: it leaves every ticket it viewed, announced.
pub(super) async fn release(realtime: &Realtime, socket: u64) {
    for (tenant, viewer) in realtime.watchers.release(socket) {
        watchers::announce(realtime, tenant, &viewer).await;
    }
}

/// The sweep: holds and typing past their time, announced.
pub async fn sweep(realtime: &Realtime) {
    for (tenant, viewer) in realtime.watchers.sweep() {
        watchers::announce(realtime, tenant, &viewer).await;
    }
}
