//! SSO: a company's OpenID Connect configuration and the sign-ins in
//! flight between the start and the provider's callback. An area crate: it
//! depends on the floors below and the audit log (a configuration change
//! writes its entry); finding or creating the user and talking to the
//! provider are the service's (`src/sso`).

pub mod model;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;

pub use model::{JitRole, SsoConfig};
