//! SQL for custom field values on records: the record's `custom_fields`
//! column (what reads return) and its rows in the values table (what the
//! filters probe), always written together in the caller's transaction,
//! after the caller has locked the record.

use std::collections::BTreeMap;

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Backend, On, Query, Tx};
use crate::error::StoreError;
use crate::model::{
    FieldChange, FieldFilter, FieldPatch, FieldValues, FilterValue, RecordKind, merge,
};

/// The kind of record values belong to, with its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Ticket,
    ChatSession,
}

impl Recorded {
    pub fn record_kind(self) -> RecordKind {
        match self {
            Recorded::Ticket => RecordKind::Ticket,
            Recorded::ChatSession => RecordKind::Chat,
        }
    }

    fn records(self) -> &'static str {
        match self {
            Recorded::Ticket => "tickets",
            Recorded::ChatSession => "chat_sessions",
        }
    }

    fn values(self) -> &'static str {
        match self {
            Recorded::Ticket => "ticket_field_values",
            Recorded::ChatSession => "chat_session_field_values",
        }
    }

    fn owner(self) -> &'static str {
        match self {
            Recorded::Ticket => "ticket_id",
            Recorded::ChatSession => "session_id",
        }
    }
}

/// `values` with its keys sorted: Postgres's JSONB orders keys its own way
/// (shortest first), SQLite keeps the written order.
pub fn sorted(values: FieldValues) -> FieldValues {
    let by_key: BTreeMap<String, Value> = values.into_iter().collect();
    by_key.into_iter().collect()
}

/// The record's values.
pub async fn current<'c>(
    on: impl Into<On<'c>>,
    kind: Recorded,
    record: Uuid,
) -> Result<FieldValues, StoreError> {
    let Json(values): Json<FieldValues> = Query::new(format!(
        "SELECT custom_fields FROM {} WHERE id = $1",
        kind.records()
    ))
    .bind(record)
    .fetch_scalar(on)
    .await?;
    Ok(sorted(values))
}

/// Applies `patch` to the record's values; answers what really changed
/// (nothing written when nothing did).
pub async fn apply(
    tx: &mut Tx,
    tenant: &Tenant,
    kind: Recorded,
    record: Uuid,
    patch: &FieldPatch,
) -> Result<BTreeMap<String, FieldChange>, StoreError> {
    if patch.is_empty() {
        return Ok(BTreeMap::new());
    }
    let before = current(&mut *tx, kind, record).await?;
    let (after, changes) = merge(&before, patch);
    if changes.is_empty() {
        return Ok(changes);
    }
    Query::new(format!(
        "UPDATE {} SET custom_fields = $1 WHERE id = $2",
        kind.records()
    ))
    .bind(Value::Object(sorted(after)))
    .bind(record)
    .execute(&mut *tx)
    .await?;
    let keys: Vec<&String> = changes.keys().collect();
    Query::new(format!(
        "DELETE FROM {} WHERE {} = $1 AND key IN ",
        kind.values(),
        kind.owner()
    ))
    .bind(record)
    .push_bind_list(keys)
    .execute(&mut *tx)
    .await?;
    let rows: Vec<(&String, FilterValue)> = changes
        .iter()
        .filter_map(|(key, change)| change.to.as_ref().map(|v| (key, v)))
        .flat_map(|(key, value)| stored_rows(value).into_iter().map(move |v| (key, v)))
        .collect();
    if rows.is_empty() {
        return Ok(changes);
    }
    let mut insert = Query::new(format!(
        "INSERT INTO {} ({}, company_id, mode, key, text_value, number_value) VALUES ",
        kind.values(),
        kind.owner()
    ))
    .bind(record)
    .bind_tenant(tenant);
    for (i, (key, value)) in rows.into_iter().enumerate() {
        let (text, number) = match value {
            FilterValue::Text(text) => (Some(text), None),
            FilterValue::Number(number) => (None, Some(number)),
        };
        insert = insert
            .push(if i == 0 {
                "($1, $2, $3, "
            } else {
                ", ($1, $2, $3, "
            })
            .push_bind(key)
            .push(", ")
            .push_bind(text)
            .push(", ")
            .push_bind(number)
            .push(")");
    }
    insert.execute(&mut *tx).await?;
    Ok(changes)
}

/// The rows a stored value is probed by: numbers in `number_value`,
/// booleans as `true` / `false`, one row per option of a multiselect.
fn stored_rows(value: &Value) -> Vec<FilterValue> {
    match value {
        Value::Number(n) => n.as_f64().map(FilterValue::Number).into_iter().collect(),
        Value::Bool(b) => vec![FilterValue::Text(b.to_string())],
        Value::String(s) => vec![FilterValue::Text(s.clone())],
        Value::Array(items) => items.iter().flat_map(stored_rows).collect(),
        Value::Null | Value::Object(_) => Vec::new(),
    }
}

/// Whether any record of `kind` holds a value of `key` (one of `options`,
/// when given).
pub(super) async fn in_use(
    tx: &mut Tx,
    tenant: &Tenant,
    kind: Recorded,
    key: &str,
    options: Option<&[String]>,
) -> Result<bool, StoreError> {
    let mut query = Query::new(format!("SELECT 1 FROM {} WHERE ", kind.values()))
        .push_tenant(tenant, "")
        .push(" AND key = ")
        .push_bind(key);
    if let Some(options) = options {
        query = query.push(" AND text_value IN ").push_bind_list(options);
    }
    let found: Option<(i32,)> = query.push(" LIMIT 1").fetch_optional(tx).await?;
    Ok(found.is_some())
}

/// Removes `key` from every record of the tenant that holds it.
pub(super) async fn remove_key(
    tx: &mut Tx,
    tenant: &Tenant,
    kind: Recorded,
    key: &str,
) -> Result<(), StoreError> {
    let without = match tx.backend() {
        Backend::Postgres => "custom_fields - $1",
        // Keys are `[a-z][a-z0-9_]*`: safe in a JSON path.
        Backend::Sqlite => "json_remove(custom_fields, '$.' || $1)",
    };
    Query::new(format!(
        "UPDATE {records} SET custom_fields = {without} WHERE id IN (SELECT {owner} FROM {values} \
         WHERE company_id = $2 AND mode = $3 AND key = $1)",
        records = kind.records(),
        owner = kind.owner(),
        values = kind.values(),
    ))
    .bind(key)
    .bind_tenant(tenant)
    .execute(&mut *tx)
    .await?;
    Query::new(format!(
        "DELETE FROM {} WHERE company_id = $2 AND mode = $3 AND key = $1",
        kind.values()
    ))
    .bind(key)
    .bind_tenant(tenant)
    .execute(&mut *tx)
    .await
}

/// Adds `filter` to a list query as one EXISTS probe of the values table
/// per condition (`record_id` is the listed record's id column, `t.id`).
pub fn push_filter(
    mut query: Query,
    kind: Recorded,
    record_id: &str,
    filter: &FieldFilter,
) -> Query {
    let sql = filter_text(kind, record_id, filter, |value| match value {
        FilterValue::Text(text) => query.placeholder_for(text.clone()),
        FilterValue::Number(number) => query.placeholder_for(*number),
    });
    query.push(&sql)
}

/// The text `push_filter` adds, for a query written as text with numbered
/// placeholders: each condition takes two, its key then its value, from
/// `$first` on; the caller binds them in that order (`filter_values`).
pub fn filter_sql(kind: Recorded, record_id: &str, filter: &FieldFilter, first: usize) -> String {
    let mut next = first;
    filter_text(kind, record_id, filter, |_| {
        next += 1;
        format!("${}", next - 1)
    })
}

/// How many placeholders `filter_sql` uses.
pub fn filter_placeholders(filter: &FieldFilter) -> usize {
    filter.conditions.len() * 2
}

/// The values `filter_sql`'s placeholders take, in order.
pub fn filter_values(filter: &FieldFilter) -> Vec<crate::db::Value> {
    filter
        .conditions
        .iter()
        .flat_map(|condition| {
            let value = match &condition.value {
                FilterValue::Text(text) => crate::db::Value::from(text.clone()),
                FilterValue::Number(number) => crate::db::Value::from(*number),
            };
            [crate::db::Value::from(condition.key.clone()), value]
        })
        .collect()
}

fn filter_text(
    kind: Recorded,
    record_id: &str,
    filter: &FieldFilter,
    mut placeholder: impl FnMut(&FilterValue) -> String,
) -> String {
    let mut sql = String::new();
    for condition in &filter.conditions {
        let key = placeholder(&FilterValue::Text(condition.key.clone()));
        let value = placeholder(&condition.value);
        let column = match condition.value {
            FilterValue::Text(_) => "text_value",
            FilterValue::Number(_) => "number_value",
        };
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM {values} v WHERE v.{owner} = {record_id} \
             AND v.key = {key} AND v.{column} {op} {value})",
            values = kind.values(),
            owner = kind.owner(),
            op = condition.operator.sql(),
        ));
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldCondition, Operator};

    fn filter() -> FieldFilter {
        FieldFilter {
            conditions: vec![
                FieldCondition {
                    key: "plan".into(),
                    operator: Operator::Eq,
                    value: FilterValue::Text("pro".into()),
                },
                FieldCondition {
                    key: "order_total".into(),
                    operator: Operator::Gte,
                    value: FilterValue::Number(100.0),
                },
            ],
        }
    }

    #[test]
    fn numbered_text_is_the_list_filters_text() {
        let listed = push_filter(
            Query::new("SELECT t.id FROM tickets t WHERE t.id = ").push_bind(Uuid::nil()),
            Recorded::Ticket,
            "t.id",
            &filter(),
        );
        let numbered = filter_sql(Recorded::Ticket, "t.id", &filter(), 2);
        assert_eq!(
            listed.sql(),
            format!("SELECT t.id FROM tickets t WHERE t.id = $1{numbered}")
        );
        assert_eq!(
            numbered,
            " AND EXISTS (SELECT 1 FROM ticket_field_values v WHERE v.ticket_id = t.id \
             AND v.key = $2 AND v.text_value = $3) \
             AND EXISTS (SELECT 1 FROM ticket_field_values v WHERE v.ticket_id = t.id \
             AND v.key = $4 AND v.number_value >= $5)"
        );
        assert_eq!(filter_placeholders(&filter()), 4);
        assert_eq!(filter_values(&filter()).len(), 4);
    }
}
