//! A company (a tenant) and its standing.

use serde::Serialize;
use uuid::Uuid;

use crate::time::Timestamp;

crate::text_enum! {
    /// A suspended company's keys, widgets and sockets are refused.
    pub enum CompanyStatus {
        Active = "active",
        Suspended = "suspended",
    }
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct Company {
    pub id: Uuid,
    pub name: String,
    pub status: CompanyStatus,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}
