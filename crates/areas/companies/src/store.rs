//! SQL for companies.

use uuid::Uuid;

use super::model::{Company, CompanyStatus};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};

const COLUMNS: &str = "id, name, status, created_at, updated_at";

/// Creates an active company, stamped `now`.
pub async fn create(db: &Db, name: &str, now: Timestamp) -> Result<Company, StoreError> {
    let sql = format!(
        "INSERT INTO companies (id, name, status, created_at, updated_at) \
         VALUES ($1, $2, 'active', $3, $3) RETURNING {COLUMNS}"
    );
    let id = new_id();
    Query::new(sql)
        .bind(id)
        .bind(name)
        .bind(now)
        .fetch_one(db)
        .await
}

pub async fn find(db: &Db, id: Uuid) -> Result<Company, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM companies WHERE id = $1");
    Query::new(sql).bind(id).fetch_one(db).await
}

/// Suspends or reactivates a company, stamped `now`; a change of status
/// writes its audit entry (`company.suspended`, `company.reactivated`).
pub async fn set_suspended(
    db: &Db,
    id: Uuid,
    suspended: bool,
    now: Timestamp,
) -> Result<Company, StoreError> {
    let status = if suspended {
        CompanyStatus::Suspended
    } else {
        CompanyStatus::Active
    };
    let sql = format!(
        "UPDATE companies SET status = $2, updated_at = $3 WHERE id = $1 RETURNING {COLUMNS}"
    );
    let mut tx = db.begin().await?;
    let before: CompanyStatus = Query::new("SELECT status FROM companies WHERE id = $1")
        .bind(id)
        .fetch_scalar(&mut tx)
        .await?;
    let company: Company = Query::new(sql)
        .bind(id)
        .bind(status)
        .bind(now)
        .fetch_one(&mut tx)
        .await?;
    if before != status {
        let action = if suspended {
            Action::CompanySuspended
        } else {
            Action::CompanyReactivated
        };
        let changes = Changes::none()
            .with("before", serde_json::json!({"status": before.as_str()}))
            .with("after", serde_json::json!({"status": status.as_str()}));
        let target = Target::new(TargetType::Company, id);
        crate::audit::record(&mut tx, id, now, action, target, changes).await?;
    }
    tx.commit().await?;
    Ok(company)
}

/// Every company, oldest first (the CLI's listing).
pub async fn list(db: &Db) -> Result<Vec<Company>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM companies ORDER BY created_at, id");
    Query::new(sql).fetch_all(db).await
}

pub async fn count(db: &Db) -> Result<i64, StoreError> {
    Query::new("SELECT COUNT(*) FROM companies")
        .fetch_scalar(db)
        .await
}
