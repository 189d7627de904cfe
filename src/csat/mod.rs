//! Satisfaction ratings (CSAT): a visitor rates a closed chat or a resolved
//! ticket 1-5 with an optional comment, in the widget (with the visitor
//! token) or through a signed link in the resolution email. Each entity
//! chooses when visitors are asked (`auto`, `manual`, `off`). The model, the
//! store and the links are the `supportdesk-csat` crate (re-exported here at
//! the paths the service names them by); asking in a chat, the widget's and
//! the API's routes live here.

pub use ::csat::{CsatMode, Rating, RatingTarget, links, model, store};
pub mod notify;
pub mod routes;
pub mod widget;
