//! Companies: the tenants. Active or suspended; shared by both modes.

pub mod store;

pub use store::Company;

crate::text_enum! {
    /// A suspended company's keys, widgets and sockets are refused.
    pub enum CompanyStatus {
        Active = "active",
        Suspended = "suspended",
    }
}

use uuid::Uuid;

use crate::auth::cache::{self, Invalidation};
use crate::error::StoreError;
use crate::state::AppState;

/// Suspends (or reactivates) a company and makes every node apply it to
/// cached keys and open sockets at once, not only after the key cache's 10 s.
pub async fn set_suspended(
    state: &AppState,
    id: Uuid,
    suspended: bool,
) -> Result<Company, StoreError> {
    let company = store::set_suspended(&state.db, id, suspended, state.clock.now()).await?;
    cache::invalidate(state, Invalidation::Company(id)).await;
    if suspended {
        crate::realtime::credentials::company_suspended(&state.realtime.bus, id).await;
    }
    Ok(company)
}
