//! The handles a chat change uses, whether it comes through REST, a socket
//! or an automation: the handler takes this bundle, never the whole state.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::attachments::Attachments;
use crate::attachments::links::Signer;
use crate::db::Db;
use crate::realtime::Realtime;
use crate::state::AppState;
use crate::teams::routing::Routing;
use crate::time::Clock;
use crate::widget::access::VisitorTokens;

/// The store, the clock and the sockets; the attachment links of a message;
/// the base URL of the visitor's link in a reply email; the team queues a
/// change drains; the visitor tokens a new session or a reply email mints.
/// `routing` and `tokens` hold the same store, clock and sockets.
#[derive(Clone)]
pub struct ChatDeps {
    pub db: Db,
    pub clock: Clock,
    pub realtime: Arc<Realtime>,
    pub attachments: Arc<Attachments>,
    pub public_url: Arc<str>,
    pub routing: Routing,
    pub tokens: VisitorTokens,
}

impl ChatDeps {
    /// The signer of attachment links in what is read now.
    pub fn link_signer(&self) -> Signer {
        self.attachments.signer(self.clock.now())
    }
}

impl FromRef<AppState> for ChatDeps {
    fn from_ref(state: &AppState) -> ChatDeps {
        ChatDeps {
            db: state.db.clone(),
            clock: state.clock.clone(),
            realtime: state.realtime.clone(),
            attachments: state.attachments.clone(),
            public_url: state.public_url.clone(),
            routing: Routing::from_ref(state),
            tokens: VisitorTokens::from_ref(state),
        }
    }
}
