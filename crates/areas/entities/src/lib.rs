//! Entities group a company's records; `parentId` makes subsidiaries. Each
//! entity has a public widget key per mode for the visitor widget API, and
//! says when its visitors are asked for a rating (`csat_mode`). An area
//! crate: it depends on the floors below only.

pub mod csat_mode;
pub mod store;

pub use store::Entity;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
