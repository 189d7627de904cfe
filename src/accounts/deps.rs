//! The handles agent accounts use (sign-in, sessions, links, second
//! factors): their routes and the flows that start a session elsewhere
//! (single sign-on, an invitation) take this bundle, never the whole state.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRef;

use crate::auth::access::Access;
use crate::db::Db;
use crate::realtime::Realtime;
use crate::state::AppState;
use crate::time::Clock;

/// The store and the clock; the message bus that tells other nodes of an
/// ended session; the session cache, sign-in guard and limiter; the public
/// URL (links, and whether cookies are `Secure`); a session's lifetime.
#[derive(Clone)]
pub struct AccountDeps {
    pub db: Db,
    pub clock: Clock,
    pub realtime: Arc<Realtime>,
    pub access: Arc<Access>,
    pub public_url: Arc<str>,
    /// `SUPPORTDESK_SESSION_MAX_HOURS`.
    pub session_max: Duration,
}

impl FromRef<AppState> for AccountDeps {
    fn from_ref(state: &AppState) -> AccountDeps {
        AccountDeps {
            db: state.db.clone(),
            clock: state.clock.clone(),
            realtime: state.realtime.clone(),
            access: state.access.clone(),
            public_url: state.public_url.clone(),
            session_max: state.config.session_max,
        }
    }
}
