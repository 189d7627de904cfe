//! Users: the company's agents and admins, shared by both modes. Tickets are
//! assigned to users; chat agents are users. An area crate: it depends on
//! the floors below, the event log, roles (the role a user holds) and the
//! audit log (each change writes its entry).

pub mod credentials;
pub mod model;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
pub(crate) use ::events;
pub(crate) use ::roles;

pub use model::Role;
pub use store::User;
