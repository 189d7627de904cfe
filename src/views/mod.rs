//! Saved views: the model and the store are the tickets crate's
//! (`tickets::views`, re-exported here); `/views` (list, create, get,
//! update, delete) and a view's tickets live here, its filters checked and
//! read by the ticket list's own parser (`filters`).

pub use ::tickets::views::{MAX_VIEWS, NewView, Sort, View, Visibility, store};
mod filters;
pub mod routes;
