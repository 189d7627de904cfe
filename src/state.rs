//! The state every handler and worker shares. It sits at the bottom of the
//! module graph: areas import it, and it imports only infrastructure, so the
//! application's wiring (`app`) is not part of any import cycle.

use std::sync::Arc;

use axum::extract::FromRef;
use tokio::sync::watch;

use crate::config::Config;
use crate::db::Db;

/// Everything a handler or worker needs. One `Arc`: axum clones the state
/// several times per request (each middleware's service and state, the
/// `State` extractor), and with the fields behind one pointer each clone and
/// drop is one atomic operation instead of one per field (bench/RESULTS.md,
/// scenario 3). Fields are reached through `Deref` (`state.db`).
#[derive(Clone)]
pub struct AppState(Arc<SharedState>);

impl std::ops::Deref for AppState {
    type Target = SharedState;

    fn deref(&self) -> &SharedState {
        &self.0
    }
}

impl AppState {
    pub fn new(shared: SharedState) -> Self {
        AppState(Arc::new(shared))
    }

    /// The signer of attachment links in what is read now (an answer, an
    /// event, a frame).
    pub fn link_signer(&self) -> crate::attachments::links::Signer {
        self.attachments.signer(self.clock.now())
    }

    /// A copy with some fields replaced (a keyed request's state, whose
    /// `db` carries the idempotency commit hook).
    pub fn modified(&self, change: impl FnOnce(&mut SharedState)) -> AppState {
        let mut shared = (*self.0).clone();
        change(&mut shared);
        AppState::new(shared)
    }
}

// The handles a handler takes by themselves (`State<Db>`, `State<Clock>`,
// `State<Arc<Cursors>>`, `State<Signer>`, `State<Arc<Realtime>>`, …): a handler names what it uses, and only the wiring
// holds the whole state.
impl FromRef<AppState> for Db {
    fn from_ref(state: &AppState) -> Db {
        state.db.clone()
    }
}

impl FromRef<AppState> for Option<crate::redis_conn::RedisConn> {
    fn from_ref(state: &AppState) -> Option<crate::redis_conn::RedisConn> {
        state.redis.clone()
    }
}

impl FromRef<AppState> for crate::time::Clock {
    fn from_ref(state: &AppState) -> crate::time::Clock {
        state.clock.clone()
    }
}

impl FromRef<AppState> for Arc<crate::paging::Cursors> {
    fn from_ref(state: &AppState) -> Arc<crate::paging::Cursors> {
        state.cursors.clone()
    }
}

impl FromRef<AppState> for Arc<crate::realtime::Realtime> {
    fn from_ref(state: &AppState) -> Arc<crate::realtime::Realtime> {
        state.realtime.clone()
    }
}

impl FromRef<AppState> for Arc<crate::auth::access::Access> {
    fn from_ref(state: &AppState) -> Arc<crate::auth::access::Access> {
        state.access.clone()
    }
}

impl FromRef<AppState> for Arc<crate::attachments::Attachments> {
    fn from_ref(state: &AppState) -> Arc<crate::attachments::Attachments> {
        state.attachments.clone()
    }
}

impl FromRef<AppState> for Arc<crate::custom_fields::DefinitionCache> {
    fn from_ref(state: &AppState) -> Arc<crate::custom_fields::DefinitionCache> {
        state.field_definitions.clone()
    }
}

impl FromRef<AppState> for Arc<crate::sla::cache::SlaCache> {
    fn from_ref(state: &AppState) -> Arc<crate::sla::cache::SlaCache> {
        state.sla.clone()
    }
}

impl FromRef<AppState> for Arc<crate::sso::providers::Providers> {
    fn from_ref(state: &AppState) -> Arc<crate::sso::providers::Providers> {
        state.sso_providers.clone()
    }
}

impl FromRef<AppState> for crate::webhooks::guard::AllowPrivate {
    fn from_ref(state: &AppState) -> crate::webhooks::guard::AllowPrivate {
        crate::webhooks::guard::AllowPrivate(state.config.webhook_allow_private)
    }
}

impl FromRef<AppState> for crate::attachments::links::Signer {
    /// Signs the attachment links of what the request answers, as of now.
    fn from_ref(state: &AppState) -> crate::attachments::links::Signer {
        state.link_signer()
    }
}

/// The base URL of the service's links (emails, settings that show one).
#[derive(Clone)]
pub struct PublicUrl(pub Arc<str>);

impl FromRef<AppState> for PublicUrl {
    fn from_ref(state: &AppState) -> PublicUrl {
        PublicUrl(state.public_url.clone())
    }
}

/// The fields of [`AppState`].
#[derive(Clone)]
pub struct SharedState {
    pub config: Arc<Config>,
    pub db: Db,
    /// Shared Redis connection (reconnects by itself); None in embedded mode.
    pub redis: Option<crate::redis_conn::RedisConn>,
    pub access: Arc<crate::auth::access::Access>,
    pub realtime: Arc<crate::realtime::Realtime>,
    /// The outbox's job handlers by kind, and this node's worker slots.
    pub jobs: Arc<crate::outbox::Jobs>,
    /// The base URL used in links (emails, printed demo URL).
    pub public_url: Arc<str>,
    /// Seals and opens list cursors with the service-wide key.
    pub cursors: Arc<crate::paging::Cursors>,
    /// Attachment storage, download links and upload limits.
    pub attachments: Arc<crate::attachments::Attachments>,
    /// Each tenant's SLA policies and calendars, for creating tickets.
    pub sla: Arc<crate::sla::cache::SlaCache>,
    /// The tenants whose new tickets webhooks were last seen to wait for
    /// (a hint for how a plain create is written).
    pub ticket_subscribers: Arc<::tickets::store::subscribers::Subscribers>,
    /// Each tenant's custom field definitions, for validating values.
    pub field_definitions: Arc<crate::custom_fields::DefinitionCache>,
    /// This node's wall clock (see `time::Clock`).
    pub clock: crate::time::Clock,
    /// The identity providers' discovery documents and keys, by issuer.
    pub sso_providers: Arc<crate::sso::providers::Providers>,
    /// The SNS signing certificates SES mail is verified with, by URL.
    pub sns_certificates: Arc<crate::email::sns::Certificates>,
    /// Flips to true when the service is shutting down.
    pub shutdown: watch::Receiver<bool>,
}
