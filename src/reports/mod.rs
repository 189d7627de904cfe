//! reports

pub mod routes;
