//! Webhook subscriptions and their signing secrets (`store`, `signing`),
//! and the queueing of an event's deliveries to the subscribed hooks inside
//! the transaction that records it (`dispatch`). The delivery job, the SSRF
//! guard and the routes stay with the service. An area crate: it depends on
//! the floors below and the audit log (each change writes its entry).

pub mod dispatch;
pub mod signing;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;

/// The outbox job kind that sends one attempt of a delivery.
pub const JOB_KIND: &str = "webhook.delivery";
