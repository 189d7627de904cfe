//! SQL for escalation rules: the tenant's list, the enabled rules of every
//! tenant, the tickets a rule matches (one query per rule), and firing a
//! rule for one ticket in the escalation's own transaction.

use std::collections::HashSet;

use sqlx::AssertSqlSafe;
use sqlx::types::Json;
use uuid::Uuid;

use super::{Action, Conditions, DEFAULT_STATUSES, NewRule, Rule};
use crate::auth::{Mode, Tenant};
use crate::db::{Backend, Db, Tx};
use crate::error::StoreError;
use crate::tickets::model::Escalation;
use crate::tickets::store::escalate_in;
use crate::time::{Timestamp, new_id};
use crate::{on_db, on_tx};

const RULE_COLUMNS: &str = "r.id, r.name, r.enabled, r.conditions, r.escalate_to_id, r.reason, \
     r.created_at, r.updated_at";

#[derive(sqlx::FromRow)]
struct RuleRow {
    id: Uuid,
    name: String,
    enabled: bool,
    conditions: Json<Conditions>,
    escalate_to_id: Uuid,
    reason: Option<String>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<RuleRow> for Rule {
    fn from(row: RuleRow) -> Self {
        Rule {
            id: row.id,
            name: row.name,
            enabled: row.enabled,
            conditions: row.conditions.0,
            action: Action {
                escalate_to_id: row.escalate_to_id,
                reason: row.reason,
            },
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

pub(super) async fn list(db: &Db, tenant: &Tenant) -> Result<Vec<Rule>, StoreError> {
    let sql = format!(
        "SELECT {RULE_COLUMNS} FROM escalation_rules r \
         WHERE r.company_id = $1 AND r.mode = $2 ORDER BY r.position"
    );
    let rows = on_db!(db, c => sqlx::query_as::<_, RuleRow>(AssertSqlSafe(sql))
        .bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_all(c).await?);
    Ok(rows.into_iter().map(Rule::from).collect())
}

async fn list_in(tx: &mut Tx, tenant: &Tenant) -> Result<Vec<Rule>, StoreError> {
    let sql = format!(
        "SELECT {RULE_COLUMNS} FROM escalation_rules r \
         WHERE r.company_id = $1 AND r.mode = $2 ORDER BY r.position"
    );
    let rows = on_tx!(tx, c => sqlx::query_as::<_, RuleRow>(AssertSqlSafe(sql))
        .bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_all(c).await?);
    Ok(rows.into_iter().map(Rule::from).collect())
}

pub(super) async fn replace(
    db: &Db,
    tenant: &Tenant,
    rules: &[NewRule],
) -> Result<Vec<Rule>, StoreError> {
    let mut tx = db.begin().await?;
    // Concurrent replacements of one company's lists take turns (SQLite's
    // write transaction already does). NO KEY UPDATE does not block inserts
    // that reference the company.
    if tx.backend() == Backend::Postgres {
        on_tx!(&mut tx, c => sqlx::query(
            "SELECT id FROM companies WHERE id = $1 FOR NO KEY UPDATE")
            .bind(tenant.company_id).fetch_optional(c).await?.is_some());
    }
    let current = list_in(&mut tx, tenant).await?;
    for (i, rule) in rules.iter().enumerate() {
        if let Some(id) = rule.id
            && !current.iter().any(|r| r.id == id)
        {
            return Err(StoreError::InvalidReference {
                field: format!("rules[{i}].id"),
                message: "is not an escalation rule of this company and mode".into(),
            });
        }
    }
    let kept: HashSet<Uuid> = rules.iter().filter_map(|r| r.id).collect();
    for old in current.iter().filter(|r| !kept.contains(&r.id)) {
        on_tx!(&mut tx, c => sqlx::query(
            "DELETE FROM escalation_rules WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(old.id).bind(tenant.company_id).bind(tenant.mode.as_str())
            .execute(c).await?.rows_affected());
    }
    let now = Timestamp::now();
    for (position, rule) in rules.iter().enumerate() {
        let position = position as i64;
        let old = rule.id.and_then(|id| current.iter().find(|r| r.id == id));
        match old {
            Some(old) => {
                let changed = old.name != rule.name
                    || old.enabled != rule.enabled
                    || old.conditions != rule.conditions
                    || old.action != rule.action;
                let updated_at = if changed { now } else { old.updated_at };
                on_tx!(&mut tx, c => sqlx::query(
                    "UPDATE escalation_rules SET position = $4, name = $5, enabled = $6, \
                     conditions = $7, escalate_to_id = $8, reason = $9, updated_at = $10 \
                     WHERE id = $1 AND company_id = $2 AND mode = $3")
                    .bind(old.id)
                    .bind(tenant.company_id)
                    .bind(tenant.mode.as_str())
                    .bind(position)
                    .bind(&rule.name)
                    .bind(rule.enabled)
                    .bind(Json(&rule.conditions))
                    .bind(rule.action.escalate_to_id)
                    .bind(&rule.action.reason)
                    .bind(updated_at)
                    .execute(c)
                    .await?
                    .rows_affected());
            }
            None => {
                on_tx!(&mut tx, c => sqlx::query(
                    "INSERT INTO escalation_rules (id, company_id, mode, position, name, enabled, \
                     conditions, escalate_to_id, reason, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)")
                    .bind(new_id())
                    .bind(tenant.company_id)
                    .bind(tenant.mode.as_str())
                    .bind(position)
                    .bind(&rule.name)
                    .bind(rule.enabled)
                    .bind(Json(&rule.conditions))
                    .bind(rule.action.escalate_to_id)
                    .bind(&rule.action.reason)
                    .bind(now)
                    .execute(c)
                    .await?
                    .rows_affected());
            }
        }
    }
    let saved = list_in(&mut tx, tenant).await?;
    tx.commit().await?;
    Ok(saved)
}

/// Which of the given ids name the tenant's rules, the company's users and
/// the company's entities.
pub(super) struct Known {
    pub rules: HashSet<Uuid>,
    pub users: HashSet<Uuid>,
    pub entities: HashSet<Uuid>,
}

pub(super) async fn known_references(
    db: &Db,
    tenant: &Tenant,
    rules: &[Uuid],
    users: &[Uuid],
    entities: &[Uuid],
) -> Result<Known, StoreError> {
    let company = tenant.company_id;
    Ok(Known {
        rules: existing(db, "escalation_rules", Some(tenant.mode), company, rules).await?,
        users: existing(db, "users", None, company, users).await?,
        entities: existing(db, "entities", None, company, entities).await?,
    })
}

/// The subset of `ids` found in `table` for the company (and mode), in one
/// query.
async fn existing(
    db: &Db,
    table: &'static str,
    mode: Option<Mode>,
    company_id: Uuid,
    ids: &[Uuid],
) -> Result<HashSet<Uuid>, StoreError> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let first = if mode.is_some() { 3 } else { 2 };
    let placeholders: Vec<String> = (0..ids.len()).map(|i| format!("${}", first + i)).collect();
    let mode_clause = if mode.is_some() { " AND mode = $2" } else { "" };
    let sql = format!(
        "SELECT id FROM {table} WHERE company_id = $1{mode_clause} AND id IN ({})",
        placeholders.join(", ")
    );
    let found = on_db!(db, c => {
        let mut q = sqlx::query_scalar::<_, Uuid>(AssertSqlSafe(sql)).bind(company_id);
        if let Some(mode) = mode {
            q = q.bind(mode.as_str());
        }
        for id in ids {
            q = q.bind(*id);
        }
        q.fetch_all(c).await?
    });
    Ok(found.into_iter().collect())
}

#[derive(sqlx::FromRow)]
struct TenantRuleRow {
    company_id: Uuid,
    mode: String,
    #[sqlx(flatten)]
    rule: RuleRow,
}

/// Every enabled rule of every active company, by tenant and in list order,
/// whose target is (still) a user of the rule's company.
pub(super) async fn enabled_rules(db: &Db) -> Result<Vec<(Tenant, Rule)>, StoreError> {
    let sql = format!(
        "SELECT r.company_id, r.mode, {RULE_COLUMNS} FROM escalation_rules r \
         JOIN companies co ON co.id = r.company_id \
         JOIN users u ON u.id = r.escalate_to_id AND u.company_id = r.company_id \
         WHERE r.enabled AND co.status = 'active' \
         ORDER BY r.company_id, r.mode, r.position"
    );
    let rows = on_db!(db, c => sqlx::query_as::<_, TenantRuleRow>(AssertSqlSafe(sql))
        .fetch_all(c).await?);
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let mode = Mode::parse(&row.mode)?;
            let tenant = Tenant {
                company_id: row.company_id,
                mode,
            };
            Some((tenant, Rule::from(row.rule)))
        })
        .collect())
}

/// A value bound to a rule's query, in placeholder order.
enum Bind {
    Id(Uuid),
    Text(String),
    Time(Timestamp),
}

macro_rules! bind_all {
    ($query:expr, $binds:expr) => {{
        let mut q = $query;
        for bind in $binds {
            q = match bind {
                Bind::Id(v) => q.bind(*v),
                Bind::Text(v) => q.bind(v.clone()),
                Bind::Time(v) => q.bind(*v),
            };
        }
        q
    }};
}

/// `FROM tickets t WHERE …`: the tickets of `tenant` that satisfy the
/// rule's conditions at `now` and that the rule has not fired for.
fn match_clause(tenant: &Tenant, rule: &Rule, now: Timestamp) -> (String, Vec<Bind>) {
    let mut sql = String::from(" FROM tickets t WHERE t.company_id = $1 AND t.mode = $2");
    let mut binds = vec![
        Bind::Id(tenant.company_id),
        Bind::Text(tenant.mode.as_str().to_string()),
    ];
    let c = &rule.conditions;
    let default_statuses: Vec<String> = DEFAULT_STATUSES.iter().map(|s| s.to_string()).collect();
    let statuses = c.statuses.as_ref().unwrap_or(&default_statuses);
    for (column, values) in [
        ("status", Some(statuses)),
        ("priority", c.priorities.as_ref()),
    ] {
        if let Some(values) = values {
            let list: Vec<String> = values
                .iter()
                .map(|v| push(&mut binds, Bind::Text(v.clone())))
                .collect();
            sql.push_str(&format!(" AND t.{column} IN ({})", list.join(", ")));
        }
    }
    if let Some(entity) = c.entity_id {
        let p = push(&mut binds, Bind::Id(entity));
        sql.push_str(&format!(" AND t.entity_id = {p}"));
    }
    match c.unassigned {
        Some(true) => sql.push_str(" AND t.assigned_to_id IS NULL"),
        Some(false) => sql.push_str(" AND t.assigned_to_id IS NOT NULL"),
        None => {}
    }
    for (column, minutes) in [
        ("created_at", c.minutes_since_created),
        ("updated_at", c.minutes_since_last_activity),
    ] {
        if let Some(minutes) = minutes {
            let p = push(&mut binds, Bind::Time(minutes_before(now, minutes)));
            sql.push_str(&format!(" AND t.{column} <= {p}"));
        }
    }
    let p = push(&mut binds, Bind::Id(rule.id));
    sql.push_str(&format!(
        " AND NOT EXISTS (SELECT 1 FROM escalation_rule_firings f \
         WHERE f.rule_id = {p} AND f.ticket_id = t.id)"
    ));
    (sql, binds)
}

/// Adds `bind` and returns its placeholder.
fn push(binds: &mut Vec<Bind>, bind: Bind) -> String {
    binds.push(bind);
    format!("${}", binds.len())
}

fn minutes_before(now: Timestamp, minutes: i64) -> Timestamp {
    let delta = chrono::TimeDelta::try_minutes(minutes).unwrap_or(chrono::TimeDelta::MAX);
    Timestamp::from_datetime(
        now.0
            .checked_sub_signed(delta)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC),
    )
}

/// The rule's query: up to `limit` ids of the tickets it matches now and
/// has not fired for, oldest first.
pub(super) async fn matching_tickets(
    db: &Db,
    tenant: &Tenant,
    rule: &Rule,
    now: Timestamp,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    let (clause, binds) = match_clause(tenant, rule, now);
    let sql = format!("SELECT t.id{clause} ORDER BY t.created_at, t.id LIMIT {limit}");
    Ok(on_db!(db, c => bind_all!(
        sqlx::query_scalar::<_, Uuid>(AssertSqlSafe(sql)), &binds)
        .fetch_all(c).await?))
}

/// Fires `rule` for one ticket, in one transaction: checks (with the ticket
/// locked) that it still matches, records the firing (the primary key
/// refuses a second one, from any node), and escalates it as the API does,
/// marked automatic with the rule's id. False when it no longer matches or
/// has already fired.
pub(super) async fn fire(
    db: &Db,
    tenant: &Tenant,
    rule: &Rule,
    ticket_id: Uuid,
) -> Result<bool, StoreError> {
    let now = Timestamp::now();
    let mut tx = db.begin().await?;
    let (clause, mut binds) = match_clause(tenant, rule, now);
    binds.push(Bind::Id(ticket_id));
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE OF t",
        Backend::Sqlite => "",
    };
    let sql = format!("SELECT t.id{clause} AND t.id = ${}{lock}", binds.len());
    let still = on_tx!(&mut tx, c => bind_all!(
        sqlx::query_scalar::<_, Uuid>(AssertSqlSafe(sql)), &binds)
        .fetch_optional(c).await?);
    if still.is_none() {
        return Ok(false);
    }
    let recorded = on_tx!(&mut tx, c => sqlx::query(
        "INSERT INTO escalation_rule_firings (rule_id, ticket_id, fired_at) VALUES ($1, $2, $3) \
         ON CONFLICT (rule_id, ticket_id) DO NOTHING")
        .bind(rule.id).bind(ticket_id).bind(now)
        .execute(c).await?.rows_affected());
    if recorded == 0 {
        return Ok(false);
    }
    let escalation = Escalation {
        to_user: rule.action.escalate_to_id,
        reason: rule.action.reason.clone(),
        automatic: true,
        rule_id: Some(rule.id),
    };
    escalate_in(&mut tx, tenant, ticket_id, &escalation).await?;
    tx.commit().await?;
    Ok(true)
}

/// Held while a node runs a pass. On Postgres it is a transaction holding
/// `pg_try_advisory_xact_lock`: released when the pass ends, or by the
/// rollback if the task is dropped or the connection dies.
pub(super) struct PassLock(Option<Tx>);

/// The key of the advisory lock ("SDRULES1").
const PASS_LOCK_KEY: i64 = 0x5344_5255_4c45_5331;

/// The pass lock, or None when another node is running a pass. SQLite (one
/// node) needs none: firings are unique anyway.
pub(super) async fn lock_pass(db: &Db) -> Result<Option<PassLock>, StoreError> {
    if db.backend() == Backend::Sqlite {
        return Ok(Some(PassLock(None)));
    }
    let mut tx = db.begin().await?;
    let locked = on_tx!(&mut tx, c => sqlx::query_scalar::<_, bool>(
        "SELECT pg_try_advisory_xact_lock($1)")
        .bind(PASS_LOCK_KEY).fetch_one(c).await?);
    Ok(locked.then_some(PassLock(Some(tx))))
}

impl PassLock {
    pub(super) async fn release(self) {
        if let Some(tx) = self.0
            && let Err(err) = tx.commit().await
        {
            tracing::warn!(error = %err, "releasing the escalation rules lock");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(conditions: Conditions) -> Rule {
        Rule {
            id: Uuid::now_v7(),
            name: "r".into(),
            enabled: true,
            conditions,
            action: Action {
                escalate_to_id: Uuid::now_v7(),
                reason: None,
            },
            created_at: Timestamp::now(),
            updated_at: Timestamp::now(),
        }
    }

    fn tenant() -> Tenant {
        Tenant {
            company_id: Uuid::now_v7(),
            mode: Mode::Test,
        }
    }

    #[test]
    fn clause_binds_every_condition_in_order() {
        let conditions = Conditions {
            priorities: Some(vec!["HIGH".into(), "URGENT".into()]),
            entity_id: Some(Uuid::now_v7()),
            unassigned: Some(true),
            minutes_since_created: Some(30),
            minutes_since_last_activity: Some(0),
            ..Default::default()
        };
        let (sql, binds) = match_clause(&tenant(), &rule(conditions), Timestamp::now());
        assert_eq!(
            sql,
            " FROM tickets t WHERE t.company_id = $1 AND t.mode = $2 \
             AND t.status IN ($3, $4) AND t.priority IN ($5, $6) AND t.entity_id = $7 \
             AND t.assigned_to_id IS NULL AND t.created_at <= $8 AND t.updated_at <= $9 \
             AND NOT EXISTS (SELECT 1 FROM escalation_rule_firings f \
             WHERE f.rule_id = $10 AND f.ticket_id = t.id)"
        );
        assert_eq!(binds.len(), 10);
    }

    #[test]
    fn minutes_count_back_from_now() {
        let now = Timestamp::now();
        let before = minutes_before(now, 90);
        assert_eq!((now.0 - before.0).num_minutes(), 90);
        assert_eq!(minutes_before(now, 0), now);
    }
}
