//! SQL for custom field definitions (`custom_field_definitions`) and, in
//! `values`, for the values on records. A definition change that would
//! strand values (a new type, a dropped option or record kind still in use)
//! is refused inside the transaction that would make it.

mod values;

pub use values::{
    Recorded, apply, current, filter_placeholders, filter_sql, filter_values, push_filter, sorted,
};

use sqlx::types::Json;

use super::model::{DEFINITIONS_MAX, Definition, FieldType, RecordKind};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::{Backend, Db, On, Query, Tx};
use crate::error::{Refused, StoreError};
use crate::time::Timestamp;
use crate::validate::problem;

const DEFINITION_SELECT: &str = "SELECT key, label, type, applies_to_ticket, applies_to_chat, \
     options, required, visitor_writable, created_at, updated_at FROM custom_field_definitions";

#[derive(sqlx::FromRow)]
struct DefinitionRow {
    key: String,
    label: String,
    #[sqlx(rename = "type")]
    field_type: FieldType,
    applies_to_ticket: bool,
    applies_to_chat: bool,
    options: Json<Vec<String>>,
    required: bool,
    visitor_writable: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<DefinitionRow> for Definition {
    fn from(row: DefinitionRow) -> Self {
        let kinds = [
            (row.applies_to_chat, RecordKind::Chat),
            (row.applies_to_ticket, RecordKind::Ticket),
        ];
        Definition {
            key: row.key,
            label: row.label,
            field_type: row.field_type,
            applies_to: kinds
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, k)| *k)
                .collect(),
            options: row.options.0,
            required: row.required,
            visitor_writable: row.visitor_writable,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// What a definition create or update needs besides its key.
#[derive(Debug, Clone)]
pub struct DefinitionInput {
    pub label: String,
    pub field_type: FieldType,
    pub applies_to: Vec<RecordKind>,
    pub options: Vec<String>,
    pub required: bool,
    pub visitor_writable: bool,
}

/// The tenant's definitions, by key (on the pool, or inside a transaction
/// that decides by them).
pub async fn list<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
) -> Result<Vec<Definition>, StoreError> {
    let rows: Vec<DefinitionRow> = Query::new(DEFINITION_SELECT)
        .push(" WHERE ")
        .push_tenant(tenant, "")
        .fetch_all(on)
        .await?;
    let mut definitions: Vec<Definition> = rows.into_iter().map(Definition::from).collect();
    definitions.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(definitions)
}

/// The definition `key` of the tenant, locked on Postgres until the
/// transaction ends (SQLite's write transaction already excludes writers).
async fn lock(tx: &mut Tx, tenant: &Tenant, key: &str) -> Result<Definition, StoreError> {
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let row: DefinitionRow = Query::new(DEFINITION_SELECT)
        .push(" WHERE key = ")
        .push_bind(key)
        .push(" AND ")
        .push_tenant(tenant, "")
        .push(lock)
        .fetch_one(tx)
        .await?;
    Ok(row.into())
}

/// Creates the definition `key`; 409 when the key exists, 400 on `key`
/// when the company already has `DEFINITIONS_MAX`.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    key: &str,
    input: &DefinitionInput,
    now: Timestamp,
) -> Result<Definition, StoreError> {
    let mut tx = db.begin().await?;
    let count: i64 = Query::new("SELECT COUNT(*) FROM custom_field_definitions WHERE ")
        .push_tenant(tenant, "")
        .fetch_scalar(&mut tx)
        .await?;
    if count >= DEFINITIONS_MAX as i64 {
        let message = format!("a company has at most {DEFINITIONS_MAX} custom fields");
        return Err(StoreError::InvalidReferences(vec![problem("key", message)]));
    }
    Query::new(
        "INSERT INTO custom_field_definitions (company_id, mode, key, label, type, \
         applies_to_ticket, applies_to_chat, options, required, visitor_writable, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)",
    )
    .bind_tenant(tenant)
    .bind(key)
    .bind_definition(input)
    .bind(now)
    .unique_field("key")
    .execute(&mut tx)
    .await?;
    let definition = lock(&mut tx, tenant, key).await?;
    let changes = Changes::created(&definition);
    record(
        &mut tx,
        tenant,
        now,
        Action::CustomFieldCreated,
        key,
        changes,
    )
    .await?;
    tx.commit().await?;
    Ok(definition)
}

/// Writes the audit entry of `action` on definition `key` in `tx` (a
/// definition has no id: the entry names its key); an update that changed
/// nothing writes none.
async fn record(
    tx: &mut Tx,
    tenant: &Tenant,
    now: Timestamp,
    action: Action,
    key: &str,
    changes: Changes,
) -> Result<(), StoreError> {
    if action == Action::CustomFieldUpdated && changes.is_empty_update() {
        return Ok(());
    }
    let target = Target {
        kind: TargetType::CustomField,
        id: None,
    };
    let changes = changes.with("key", serde_json::Value::from(key));
    crate::audit::record(tx, tenant.company_id, now, action, target, changes).await
}

/// Replaces everything but the key. Refused (409) while records hold
/// values that the new definition would not accept: another type, a
/// removed option, a record kind it no longer applies to.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    key: &str,
    input: &DefinitionInput,
    now: Timestamp,
) -> Result<Definition, Refused> {
    let mut tx = db.begin().await?;
    let current = lock(&mut tx, tenant, key).await?;
    for kind in [Recorded::Ticket, Recorded::ChatSession] {
        let record_kind = kind.record_kind();
        let still_applies = input.applies_to.contains(&record_kind);
        if current.applies_to(record_kind)
            && !still_applies
            && values::in_use(&mut tx, tenant, kind, key, None).await?
        {
            return Err(Refused::InUse(format!(
                "{kind} records hold values of {key:?}: it must keep applying to them"
            )));
        }
        if input.field_type != current.field_type
            && values::in_use(&mut tx, tenant, kind, key, None).await?
        {
            return Err(Refused::InUse(format!(
                "records hold values of {key:?}: its type cannot change"
            )));
        }
        if input.field_type == current.field_type && current.field_type.has_options() {
            let removed: Vec<String> = current
                .options
                .iter()
                .filter(|o| !input.options.contains(o))
                .cloned()
                .collect();
            if !removed.is_empty()
                && values::in_use(&mut tx, tenant, kind, key, Some(&removed)).await?
            {
                return Err(Refused::InUse(format!(
                    "records hold removed options of {key:?}; change those values first"
                )));
            }
        }
    }
    Query::new(
        "UPDATE custom_field_definitions SET label = $4, type = $5, applies_to_ticket = $6, \
         applies_to_chat = $7, options = $8, required = $9, visitor_writable = $10, \
         updated_at = $11 WHERE company_id = $1 AND mode = $2 AND key = $3",
    )
    .bind_tenant(tenant)
    .bind(key)
    .bind_definition(input)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let definition = lock(&mut tx, tenant, key).await?;
    let changes = Changes::updated(&current, &definition);
    record(
        &mut tx,
        tenant,
        now,
        Action::CustomFieldUpdated,
        key,
        changes,
    )
    .await?;
    tx.commit().await?;
    Ok(definition)
}

/// Deletes the definition and, in the same transaction, its values from
/// every ticket and chat session of the tenant, stamped `now`.
pub async fn delete(db: &Db, tenant: &Tenant, key: &str, now: Timestamp) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let before = lock(&mut tx, tenant, key).await?;
    Query::new(
        "DELETE FROM custom_field_definitions WHERE key = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(key)
    .bind_tenant(tenant)
    .execute_or_not_found(&mut tx)
    .await?;
    for kind in [Recorded::Ticket, Recorded::ChatSession] {
        values::remove_key(&mut tx, tenant, kind, key).await?;
    }
    let changes = Changes::deleted(&before);
    record(
        &mut tx,
        tenant,
        now,
        Action::CustomFieldDeleted,
        key,
        changes,
    )
    .await?;
    tx.commit().await
}

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.record_kind().as_str())
    }
}

/// Binds a definition's columns in the order both writes list them: label,
/// type, applies_to_ticket, applies_to_chat, options, required,
/// visitor_writable.
trait BindDefinition {
    fn bind_definition(self, input: &DefinitionInput) -> Self;
}

impl BindDefinition for Query {
    fn bind_definition(self, input: &DefinitionInput) -> Self {
        self.bind(input.label.clone())
            .bind(input.field_type)
            .bind(input.applies_to.contains(&RecordKind::Ticket))
            .bind(input.applies_to.contains(&RecordKind::Chat))
            .bind(serde_json::json!(input.options))
            .bind(input.required)
            .bind(input.visitor_writable)
    }
}
