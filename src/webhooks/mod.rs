//! Webhook subscriptions, signing, the SSRF guard and the delivery job.

pub mod dispatch;
pub mod guard;
pub mod routes;
pub mod signing;
pub mod store;
pub mod worker;

/// The outbox job kind that sends one attempt of a delivery.
pub const JOB_KIND: &str = "webhook.delivery";
