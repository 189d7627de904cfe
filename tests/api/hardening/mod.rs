//! Hardening: the OpenAPI document, fault tests (dependency outages,
//! delivery faults, hostile clients), security review items (tenant
//! isolation on routes and in request bodies, no secrets in the log, no
//! NUL characters stored).

mod client_gone;
mod delivery_faults;
mod hostile_clients;
mod log_secrets;
mod nul_bodies;
mod openapi;
mod openapi_strings;
mod outages;
mod procs;
mod slow_bodies;
mod statement_timeout;
mod tenant_bodies;
mod tenant_records;
pub(crate) mod tenant_routes;
