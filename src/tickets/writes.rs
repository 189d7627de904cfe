//! The handles a ticket's change uses once checked (fields, tags, snooze):
//! the PATCH and bulk routes hand this bundle on, never the whole state.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::attachments::Attachments;
use crate::attachments::links::Signer;
use crate::db::Db;
use crate::state::AppState;
use crate::teams::routing::Routing;
use crate::time::Clock;

/// The store and the clock; the attachment links of the changed ticket;
/// the base URL of a resolution's rating link; the routing of a ticket
/// moved into a team.
#[derive(Clone)]
pub struct TicketWrites {
    pub db: Db,
    pub clock: Clock,
    pub attachments: Arc<Attachments>,
    pub public_url: Arc<str>,
    pub routing: Routing,
}

impl TicketWrites {
    /// The signer of attachment links in what is read now.
    pub fn link_signer(&self) -> Signer {
        self.attachments.signer(self.clock.now())
    }
}

impl FromRef<AppState> for TicketWrites {
    fn from_ref(state: &AppState) -> TicketWrites {
        TicketWrites {
            db: state.db.clone(),
            clock: state.clock.clone(),
            attachments: state.attachments.clone(),
            public_url: state.public_url.clone(),
            routing: Routing::from_ref(state),
        }
    }
}
