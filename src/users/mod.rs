//! Users: the company's agents and admins, shared by both modes. Tickets are
//! assigned to users; chat agents are users.

pub mod model;
pub mod routes;
pub mod store;

pub use model::Role;
pub use store::User;
