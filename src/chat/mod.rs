//! chat

pub mod routes;
