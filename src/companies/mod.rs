//! Companies: the tenants. Active or suspended; shared by both modes.

pub mod store;

pub use store::Company;
