//! Webhook subscriptions, signing and dispatch are the `supportdesk-webhooks`
//! crate (re-exported here at the paths the service names them by); the SSRF
//! guard, the delivery job and the routes live here.

pub use ::webhooks::{JOB_KIND, dispatch, signing, store};
pub mod guard;
pub mod routes;
pub mod worker;
