//! supportdesk: a customer-support desk service. Tickets, live visitor chat,
//! a knowledge base, signed webhooks, API keys with scopes and rate limits.

pub mod app;
pub mod auth;
pub mod bootstrap;
pub mod changes;
pub mod chat;
pub mod cli;
pub mod companies;
pub mod config;
pub mod custom_fields;
pub mod db;
pub mod demo;
pub mod domain;
pub mod entities;
pub mod error;
pub mod event_catalogue;
pub mod events;
pub mod extract;
pub mod idempotency;
pub mod jobs;
pub mod kb;
pub mod keys;
pub mod mail;
pub mod openapi;
pub mod outbox;
pub mod paging;
pub mod ratelimit;
pub mod realtime;
pub mod reports;
pub mod retention;
pub mod router;
pub mod search;
pub mod settings;
pub mod state;
pub mod tags;
pub mod telemetry;
pub mod tickets;
pub mod time;
pub mod users;
pub mod validate;
pub mod webhooks;
pub mod widget;

pub use app::App;
pub use config::Config;
pub use state::AppState;
