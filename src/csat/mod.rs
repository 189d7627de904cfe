//! Satisfaction ratings (CSAT): a visitor rates a closed chat or a resolved
//! ticket 1-5 with an optional comment, in the widget (with the visitor
//! token) or through a signed link in the resolution email. Each entity
//! chooses when visitors are asked (`auto`, `manual`, `off`).

pub mod links;
pub mod model;
pub mod notify;
pub mod routes;
pub mod store;
pub mod widget;

pub use model::{CsatMode, Rating, RatingTarget};
