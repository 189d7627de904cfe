//! supportdesk: a customer-support desk service. Tickets, live visitor chat,
//! a knowledge base, signed webhooks, API keys with scopes and rate limits.

pub mod accounts;
pub mod app;
pub mod attachments;
pub mod audit;
pub mod auth;
pub mod automations;
pub mod bootstrap;
pub mod changes;
pub mod chat;
pub mod cli;
pub mod companies;
pub mod config;
pub mod console;
pub mod contacts;
pub mod csat;
pub mod custom_fields;
pub mod demo;
pub mod email;
pub mod embedded;
pub mod entities;
pub mod home;
pub mod idempotency;
pub mod jobs;
pub mod kb;
pub mod keys;
pub mod mail;
pub mod mailboxes;
pub mod metrics;
pub mod openapi;
pub mod query_params;
pub mod realtime;
pub mod reports;
pub mod retention;
pub mod roles;
pub mod router;
pub mod sequences;
pub mod settings;
pub mod sla;
pub mod slow_bodies;
pub mod sso;
pub use infra::snapshots;
// The area crates the service re-exports whole, at the paths it names them by.
pub use ::events;
pub mod macros;
pub mod state;
pub mod tags;
pub mod teams;
pub mod telemetry;
pub mod tickets;
pub mod users;
pub mod versions;
pub mod views;
pub mod webhooks;
pub mod widget;

// The vocabulary crate's modules, at the paths the rest of the service and
// its tests name them by (`crate::time::Timestamp`, `supportdesk::error::…`).
pub use vocab::{actor, decoded_from_text, domain, error, event_catalogue, live, text_enum, time};
// The infrastructure crate's modules, at the paths the service and its
// tests name them by (`crate::paging::…`, `supportdesk::ratelimit::…`).
pub use infra::{
    client_address, erasure, extract, generation, outbox, paging, ratelimit, redis_conn, sealed,
    search, validate,
};
// The store crate, as `db` (`crate::db::Query`, `supportdesk::on_db!`).
pub use store::{self as db, on_db};

pub use app::App;
pub use config::Config;
pub use state::AppState;
