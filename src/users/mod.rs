//! Users: the company's agents and admins.

pub mod routes;
