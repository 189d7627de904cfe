//! Hardening: the OpenAPI document, security review items, fault tests.

mod openapi;
