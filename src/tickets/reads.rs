//! The handles reading a list of tickets uses (the ticket list, a saved
//! view's tickets and count): those routes take this bundle, never the
//! whole state.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::attachments::Attachments;
use crate::attachments::links::Signer;
use crate::custom_fields::DefinitionCache;
use crate::db::Db;
use crate::paging::Cursors;
use crate::state::AppState;
use crate::time::Clock;

/// The store and the clock (`snoozed` is as of now); the list cursors; the
/// company's custom fields (`cf.` filters); the tickets' attachment links.
#[derive(Clone)]
pub struct TicketReads {
    pub db: Db,
    pub clock: Clock,
    pub cursors: Arc<Cursors>,
    pub field_definitions: Arc<DefinitionCache>,
    pub attachments: Arc<Attachments>,
}

impl TicketReads {
    /// The signer of attachment links in what is read now.
    pub fn link_signer(&self) -> Signer {
        self.attachments.signer(self.clock.now())
    }
}

impl FromRef<AppState> for TicketReads {
    fn from_ref(state: &AppState) -> TicketReads {
        TicketReads {
            db: state.db.clone(),
            clock: state.clock.clone(),
            cursors: state.cursors.clone(),
            field_definitions: state.field_definitions.clone(),
            attachments: state.attachments.clone(),
        }
    }
}
