//! Hardening: the OpenAPI document, fault tests, security review items.

mod faults;
mod openapi;
mod procs;
mod security;
