//! Saved views: a named ticket list (the list's filters and its order)
//! an agent keeps for themselves (`personal`) or for every agent of the
//! tenant (`shared`). The filters are checked on write by the same parser
//! the ticket list uses and kept in its canonical form, so reading a view's
//! tickets is the ticket list with those filters.

pub mod store;

use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

pub use crate::macros::Visibility;
use crate::time::Timestamp;

crate::text_enum! {
    /// The order of a view's tickets, as the list's `order` parameter.
    pub enum Sort {
        Newest = "newest",
        SlaDue = "sla_due",
    }
}

/// At most this many views per company and mode.
pub const MAX_VIEWS: i64 = 1_000;

/// A saved view as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct View {
    pub id: Uuid,
    pub name: String,
    /// `personal` (its owner alone sees and uses it) or `shared`.
    #[schema(value_type = String, example = "shared")]
    pub visibility: Visibility,
    /// The agent a personal view belongs to; null for a shared one.
    pub owner_id: Option<Uuid>,
    /// The ticket list's filters, by their query parameter names, in
    /// canonical form (`tag`/`anyTag` as lists of normalised tags).
    #[schema(value_type = Object)]
    pub filters: Map<String, Value>,
    /// `newest` or `sla_due`.
    #[schema(value_type = String, example = "newest")]
    pub sort: Sort,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A view to write: its filters already checked and canonical.
#[derive(Debug, Clone)]
pub struct NewView {
    pub name: String,
    pub visibility: Visibility,
    /// Set exactly when `visibility` is personal.
    pub owner_id: Option<Uuid>,
    pub filters: Map<String, Value>,
    pub sort: Sort,
}
