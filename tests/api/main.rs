//! The integration suite: one test binary, a module per area, every test run
//! on every configured backend (see `support`).

mod support;

mod access;
mod accounts;
mod actors;
mod agents;
mod attachments;
mod audit;
mod automations;
mod bus;
mod changes;
mod chat;
mod cluster;
mod contacts;
mod csat;
mod custom_fields;
mod demo;
mod email;
mod first_start;
mod hardening;
mod idempotency;
mod kb;
mod metrics;
mod newcomer;
mod outbound;
mod paging;
mod platform;
mod productivity;
mod relations;
mod roles;
mod rules;
mod search;
mod sla;
mod sso;
mod tags;
mod teams;
mod tickets;
mod widget;
