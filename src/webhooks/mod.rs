//! Webhook subscriptions, signing, the SSRF guard and the delivery worker.

pub mod dispatch;
pub mod guard;
pub mod routes;
pub mod signing;
pub mod store;
pub mod worker;
