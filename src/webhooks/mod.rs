//! Webhook subscriptions, signing and delivery.

pub mod dispatch;
pub mod routes;
