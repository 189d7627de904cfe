//! SSO with OpenID Connect per company: the configuration and the sign-ins
//! in flight are the `supportdesk-sso` crate (re-exported here at the paths
//! the service names them by); the settings routes, the provider's side and
//! the sign-in sequence (which finds or creates the user) live here.

pub use ::sso::{JitRole, SsoConfig, model, store};

pub mod flow;
pub mod oidc;
pub mod providers;
pub mod routes;
mod sign_in;

/// The API path of the provider's callback, as registered with it.
pub const CALLBACK_PATH: &str = "/api/v1/auth/sso/callback";

/// The callback URL to register with the provider.
pub fn callback_url(public_url: &str) -> String {
    format!("{public_url}{CALLBACK_PATH}")
}

/// Where a company's agents start an SSO sign-in.
pub fn start_url(public_url: &str, slug: &str) -> String {
    format!("{public_url}/api/v1/auth/sso/{slug}/start")
}
