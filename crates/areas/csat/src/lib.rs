//! Satisfaction ratings (CSAT): what a rating is and the rules a submission
//! must pass (`model`), the ratings and the requests for them (`store`), and
//! the signed links in resolution emails (`links`). An area crate: it
//! depends on the floors below, the entities, the event log and the mail
//! queue only.

pub mod links;
pub mod model;
pub mod store;

pub use model::{CsatMode, Rating, RatingTarget};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::events;
pub(crate) use ::mail;
