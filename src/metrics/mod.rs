//! Prometheus metrics (docs/operations.md, "Metrics"): the recorder, the
//! names and the recording calls come from the infrastructure crate
//! (`infra::metrics`); the parts that know the service live here: the
//! per-route HTTP series (`http`), the gauges sampled from the store
//! (`sample`) and the `/metrics` listener (`server`).

pub mod http;
pub mod sample;
pub mod server;

pub use infra::metrics::*;
