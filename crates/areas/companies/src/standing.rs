//! Whether a company may be served: a suspended company's widget, visitor
//! and rating requests are refused with the same 403 its keys get.

use super::model::CompanyStatus;
use super::store;
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::{ApiError, ApiResult};

/// Ok when `tenant`'s company is active; 403 `account_suspended` when not.
pub async fn ensure_active(db: &Db, tenant: &Tenant) -> ApiResult<()> {
    let company = store::find(db, tenant.company_id).await?;
    if company.status != CompanyStatus::Active {
        return Err(ApiError::account_suspended());
    }
    Ok(())
}
