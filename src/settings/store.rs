//! SQL for the company profile: `companies.name`, and the other settings in
//! the `companies.settings` JSON object (keys this service does not know
//! are kept as they are).

use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::types::Json;
use uuid::Uuid;

use super::DEFAULT_TIMEZONE;
use super::retention::{DATA_RETENTION, DataRetention, RetentionPatch};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::db::{Backend, Db, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

/// The company profile as `/settings` shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompanySettings {
    pub id: Uuid,
    pub name: String,
    /// IANA name; for clients (dashboards) to show times in. The API itself
    /// answers in UTC.
    pub timezone: String,
    /// Whether every agent must sign in with a second factor: an agent
    /// without one may only set it up until they have.
    pub require_two_factor: bool,
    /// Whether an agent's reply to an unassigned ticket or chat assigns it
    /// to them (default false).
    pub assign_on_reply: bool,
    /// Whether a parent ticket may be resolved or closed while a child is
    /// still open without `force` (default false).
    pub resolve_parents_with_open_children: bool,
    /// Days the audit log keeps an entry; null keeps every entry.
    pub audit_retention_days: Option<u32>,
    /// Days closed tickets, closed chats and contacts with nothing left
    /// are kept; a null keeps them.
    pub data_retention: DataRetention,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A PATCH: `None` keeps a value.
#[derive(Debug, Clone, Default)]
pub struct SettingsUpdate {
    pub name: Option<String>,
    pub timezone: Option<String>,
    pub require_two_factor: Option<bool>,
    pub assign_on_reply: Option<bool>,
    pub resolve_parents_with_open_children: Option<bool>,
    /// `Some(None)` keeps every entry.
    pub audit_retention_days: Option<Option<u32>>,
    pub data_retention: Option<RetentionPatch>,
}

#[derive(sqlx::FromRow)]
struct CompanyRow {
    id: Uuid,
    name: String,
    settings: Json<Map<String, Value>>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<CompanyRow> for CompanySettings {
    fn from(row: CompanyRow) -> Self {
        let timezone = row
            .settings
            .get("timezone")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_TIMEZONE)
            .to_string();
        let require_two_factor = requires_two_factor(&row.settings);
        let assign_on_reply = flag(&row.settings, ASSIGN_ON_REPLY);
        let resolve_parents_with_open_children = flag(&row.settings, RESOLVE_PARENTS);
        let audit_retention_days = retention_days(&row.settings);
        let data_retention = DataRetention::of_settings(&row.settings);
        CompanySettings {
            id: row.id,
            name: row.name,
            timezone,
            require_two_factor,
            assign_on_reply,
            resolve_parents_with_open_children,
            audit_retention_days,
            data_retention,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// Whether the `companies.settings` object `settings` asks every agent for
/// a second factor.
pub fn requires_two_factor(settings: &Map<String, Value>) -> bool {
    settings
        .get(REQUIRE_TWO_FACTOR)
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The settings key of `require_two_factor`.
pub const REQUIRE_TWO_FACTOR: &str = "requireTwoFactor";

/// The settings key of `assign_on_reply`.
pub const ASSIGN_ON_REPLY: &str = "assignOnReply";

/// The settings key of `resolve_parents_with_open_children`.
pub const RESOLVE_PARENTS: &str = "resolveParentsWithOpenChildren";
/// The settings key of `audit_retention_days`.
pub const AUDIT_RETENTION_DAYS: &str = "auditRetentionDays";

/// The audit retention in `settings`, if the company set one.
fn retention_days(settings: &Map<String, Value>) -> Option<u32> {
    settings
        .get(AUDIT_RETENTION_DAYS)
        .and_then(Value::as_u64)
        .and_then(|days| u32::try_from(days).ok())
        .filter(|days| *days > 0)
}

/// Every company that keeps its audit entries for a number of days, with
/// that number: what the retention pass prunes.
pub async fn audit_retentions(db: &Db) -> Result<Vec<(Uuid, u32)>, StoreError> {
    companies_with(db, retention_days).await
}

/// Every company that deletes some of its records after a time, with its
/// policy: what the retention pass deletes.
pub async fn data_retentions(db: &Db) -> Result<Vec<(Uuid, DataRetention)>, StoreError> {
    companies_with(db, |settings| {
        Some(DataRetention::of_settings(settings)).filter(|policy| !policy.keeps_everything())
    })
    .await
}

/// Every company whose settings hold a policy `of` finds, with it, in id
/// order (a pass over every company reads them all at once).
async fn companies_with<T>(
    db: &Db,
    of: impl Fn(&Map<String, Value>) -> Option<T>,
) -> Result<Vec<(Uuid, T)>, StoreError> {
    let rows: Vec<(Uuid, Json<Map<String, Value>>)> =
        Query::new("SELECT id, settings FROM companies ORDER BY id")
            .fetch_all(db)
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, settings)| of(&settings).map(|policy| (id, policy)))
        .collect())
}

/// A boolean setting, false when absent.
fn flag(settings: &Map<String, Value>, key: &str) -> bool {
    settings.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Whether the company assigns an unassigned ticket or chat to the agent
/// who replies to it; false for a company that does not exist.
pub async fn assigns_on_reply(db: &Db, company_id: Uuid) -> Result<bool, StoreError> {
    flag_of(db, company_id, ASSIGN_ON_REPLY).await
}

/// Whether the company lets a parent ticket be resolved or closed while a
/// child is open; false for a company that does not exist.
pub async fn resolves_parents_with_open_children(
    db: &Db,
    company_id: Uuid,
) -> Result<bool, StoreError> {
    flag_of(db, company_id, RESOLVE_PARENTS).await
}

/// The company's boolean setting `key`; false when absent.
async fn flag_of(db: &Db, company_id: Uuid, key: &str) -> Result<bool, StoreError> {
    let settings: Option<(Json<Map<String, Value>>,)> =
        Query::new("SELECT settings FROM companies WHERE id = $1")
            .bind(company_id)
            .fetch_optional(db)
            .await?;
    Ok(settings.is_some_and(|(settings,)| flag(&settings, key)))
}

const COLUMNS: &str = "id, name, settings, created_at, updated_at";

pub async fn find(db: &Db, company_id: Uuid) -> Result<CompanySettings, StoreError> {
    let row: CompanyRow = Query::new(format!("SELECT {COLUMNS} FROM companies WHERE id = $1"))
        .bind(company_id)
        .fetch_one(db)
        .await?;
    Ok(row.into())
}

/// Applies a PATCH; `updatedAt` moves (to `now`) only when a value really
/// changes.
pub async fn update(
    db: &Db,
    company_id: Uuid,
    update: SettingsUpdate,
    now: Timestamp,
) -> Result<CompanySettings, StoreError> {
    let mut tx = db.begin().await?;
    let lock = match tx.backend() {
        Backend::Postgres => " FOR NO KEY UPDATE",
        Backend::Sqlite => "",
    };
    let row: CompanyRow = Query::new(format!(
        "SELECT {COLUMNS} FROM companies WHERE id = $1{lock}"
    ))
    .bind(company_id)
    .fetch_one(&mut tx)
    .await?;
    let mut settings = row.settings.0.clone();
    let current = CompanySettings::from(row);
    let name = update.name.unwrap_or_else(|| current.name.clone());
    if let Some(timezone) = &update.timezone {
        settings.insert("timezone".into(), Value::String(timezone.clone()));
    }
    if let Some(required) = update.require_two_factor {
        settings.insert(REQUIRE_TWO_FACTOR.into(), Value::Bool(required));
    }
    if let Some(assign) = update.assign_on_reply {
        settings.insert(ASSIGN_ON_REPLY.into(), Value::Bool(assign));
    }
    if let Some(allow) = update.resolve_parents_with_open_children {
        settings.insert(RESOLVE_PARENTS.into(), Value::Bool(allow));
    }
    match update.audit_retention_days {
        Some(Some(days)) => {
            settings.insert(AUDIT_RETENTION_DAYS.into(), Value::from(days));
        }
        Some(None) => {
            settings.remove(AUDIT_RETENTION_DAYS);
        }
        None => {}
    }
    let data_retention = update
        .data_retention
        .map(|patch| current.data_retention.patched(&patch));
    if let Some(policy) = data_retention {
        settings.insert(DATA_RETENTION.into(), serde_json::json!(policy));
    }
    let unchanged = name == current.name
        && update
            .timezone
            .as_ref()
            .is_none_or(|tz| *tz == current.timezone)
        && update
            .require_two_factor
            .is_none_or(|required| required == current.require_two_factor)
        && update
            .assign_on_reply
            .is_none_or(|assign| assign == current.assign_on_reply)
        && update
            .resolve_parents_with_open_children
            .is_none_or(|allow| allow == current.resolve_parents_with_open_children)
        && update
            .audit_retention_days
            .is_none_or(|days| days == current.audit_retention_days)
        && data_retention.is_none_or(|policy| policy == current.data_retention);
    if unchanged {
        tx.commit().await?;
        return Ok(current);
    }
    let sql = format!(
        "UPDATE companies SET name = $2, settings = $3, updated_at = $4 WHERE id = $1 \
         RETURNING {COLUMNS}"
    );
    let row: CompanyRow = Query::new(sql)
        .bind(company_id)
        .bind(&name)
        .bind(Value::Object(settings))
        .bind(now)
        .fetch_one(&mut tx)
        .await?;
    let updated = CompanySettings::from(row);
    let target = Target::new(TargetType::Settings, company_id);
    let changes = Changes::updated(&current, &updated);
    crate::audit::record(
        &mut tx,
        company_id,
        now,
        Action::SettingsUpdated,
        target,
        changes,
    )
    .await?;
    tx.commit().await?;
    Ok(updated)
}
