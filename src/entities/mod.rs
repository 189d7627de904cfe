//! Entities group a company's records; `parentId` makes subsidiaries. Each
//! entity has a public widget key per mode for the visitor widget API.

pub mod store;

pub use store::Entity;
pub mod routes;
