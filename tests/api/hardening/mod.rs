//! Hardening: the OpenAPI document, fault tests (dependency outages,
//! delivery faults, hostile clients), security review items.

mod delivery_faults;
mod hostile_clients;
mod openapi;
mod outages;
mod procs;
mod security;
