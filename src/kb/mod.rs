//! kb

pub mod routes;
