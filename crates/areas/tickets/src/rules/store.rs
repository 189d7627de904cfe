//! SQL for escalation rules: the tenant's list, the enabled rules of every
//! tenant, the tickets a rule matches (one query per rule), and firing a
//! rule for one ticket in the escalation's own transaction.

use std::collections::HashSet;

use sqlx::types::Json;
use uuid::Uuid;

use super::{Action, Conditions, DEFAULT_STATUSES, NewRule, Rule, reference_problems};
use crate::attachments::links::Signer;
use crate::audit;
use crate::auth::{Mode, Tenant};
use crate::custom_fields::model::FieldFilter;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, On, PassLock, Query, Tx};
use crate::error::StoreError;
use crate::model::{Escalation, Ticket};
use crate::store::escalate_in;
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::{Timestamp, new_id};

const RULE_COLUMNS: &str = "r.id, r.name, r.enabled, r.conditions, r.escalate_to_id, \
     r.escalate_to_team_id, r.reason, r.created_at, r.updated_at";

#[derive(sqlx::FromRow)]
struct RuleRow {
    id: Uuid,
    name: String,
    enabled: bool,
    conditions: Json<Conditions>,
    escalate_to_id: Option<Uuid>,
    escalate_to_team_id: Option<Uuid>,
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
                escalate_to_team_id: row.escalate_to_team_id,
                reason: row.reason,
            },
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

pub(super) async fn list(db: &Db, tenant: &Tenant) -> Result<Vec<Rule>, StoreError> {
    list_on(db, tenant).await
}

async fn list_on<'c>(on: impl Into<On<'c>>, tenant: &Tenant) -> Result<Vec<Rule>, StoreError> {
    let rows: Vec<RuleRow> = Query::new(format!("SELECT {RULE_COLUMNS} FROM escalation_rules r"))
        .push(" WHERE ")
        .push_tenant(tenant, "r")
        .push(" ORDER BY r.position")
        .fetch_all(on)
        .await?;
    Ok(rows.into_iter().map(Rule::from).collect())
}

pub(super) async fn replace(
    db: &Db,
    tenant: &Tenant,
    rules: &[NewRule],
    now: Timestamp,
) -> Result<Vec<Rule>, StoreError> {
    let mut tx = db.begin().await?;
    // Concurrent replacements of one company's lists take turns (SQLite's
    // write transaction already does). NO KEY UPDATE does not block inserts
    // that reference the company.
    if tx.backend() == Backend::Postgres {
        Query::new("SELECT id FROM companies WHERE id = $1 FOR NO KEY UPDATE")
            .bind(tenant.company_id)
            .execute(&mut tx)
            .await?;
    }
    let problems = reference_problems(rules, &known_references(&mut tx, tenant, rules).await?);
    if !problems.is_empty() {
        return Err(StoreError::InvalidReferences(problems));
    }
    let current = list_on(&mut tx, tenant).await?;
    let kept: HashSet<Uuid> = rules.iter().filter_map(|r| r.id).collect();
    for old in current.iter().filter(|r| !kept.contains(&r.id)) {
        Query::new("DELETE FROM escalation_rules WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(old.id)
            .bind_tenant(tenant)
            .execute(&mut tx)
            .await?;
    }
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
                Query::new(
                    "UPDATE escalation_rules SET position = $4, name = $5, enabled = $6, \
                     conditions = $7, escalate_to_id = $8, reason = $9, updated_at = $10, \
                     escalate_to_team_id = $11 WHERE id = $1 AND company_id = $2 AND mode = $3",
                )
                .bind(old.id)
                .bind_tenant(tenant)
                .bind(position)
                .bind(&rule.name)
                .bind(rule.enabled)
                .bind(conditions_json(&rule.conditions)?)
                .bind(rule.action.escalate_to_id)
                .bind(rule.action.reason.as_deref())
                .bind(updated_at)
                .bind(rule.action.escalate_to_team_id)
                .execute(&mut tx)
                .await?;
            }
            None => {
                Query::new(
                    "INSERT INTO escalation_rules (id, company_id, mode, position, name, enabled, \
                     conditions, escalate_to_id, reason, created_at, updated_at, \
                     escalate_to_team_id) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)",
                )
                .bind(new_id())
                .bind_tenant(tenant)
                .bind(position)
                .bind(&rule.name)
                .bind(rule.enabled)
                .bind(conditions_json(&rule.conditions)?)
                .bind(rule.action.escalate_to_id)
                .bind(rule.action.reason.as_deref())
                .bind(now)
                .bind(rule.action.escalate_to_team_id)
                .execute(&mut tx)
                .await?;
            }
        }
    }
    let saved = list_on(&mut tx, tenant).await?;
    let changes = audit::Changes::updated(
        &serde_json::json!({ "rules": current }),
        &serde_json::json!({ "rules": saved }),
    );
    if !changes.is_empty_update() {
        let target = audit::Target::new(audit::TargetType::EscalationRules, tenant.company_id);
        let action = audit::Action::EscalationRulesReplaced;
        audit::record(&mut tx, tenant.company_id, now, action, target, changes).await?;
    }
    tx.commit().await?;
    Ok(saved)
}

/// The stored JSON of a rule's conditions.
fn conditions_json(conditions: &Conditions) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(conditions)
        .map_err(|err| StoreError::Database(sqlx::Error::Encode(Box::new(err))))
}

/// Which of the given ids name the tenant's rules, the company's users and
/// the company's entities.
pub(super) struct Known {
    pub(super) rules: HashSet<Uuid>,
    pub(super) users: HashSet<Uuid>,
    pub(super) entities: HashSet<Uuid>,
    pub(super) teams: HashSet<Uuid>,
}

async fn known_references(
    tx: &mut Tx,
    tenant: &Tenant,
    rules: &[NewRule],
) -> Result<Known, StoreError> {
    let rule_ids: Vec<Uuid> = rules.iter().filter_map(|r| r.id).collect();
    let users: Vec<Uuid> = rules
        .iter()
        .filter_map(|r| r.action.escalate_to_id)
        .collect();
    let teams: Vec<Uuid> = rules
        .iter()
        .filter_map(|r| r.action.escalate_to_team_id)
        .collect();
    let entities: Vec<Uuid> = rules
        .iter()
        .filter_map(|r| r.conditions.entity_id)
        .collect();
    let company = Scope::Company(tenant.company_id);
    Ok(Known {
        rules: existing(
            &mut *tx,
            "escalation_rules",
            Scope::Tenant(tenant),
            &rule_ids,
        )
        .await?,
        users: existing(&mut *tx, "users", company, &users).await?,
        entities: existing(&mut *tx, "entities", company, &entities).await?,
        teams: existing(&mut *tx, "teams", Scope::Tenant(tenant), &teams).await?,
    })
}

/// The subset of `ids` found in `table` for the tenant (`Some`) or the
/// company (`None`: records shared by both modes), in one query.
async fn existing(
    tx: &mut Tx,
    table: &'static str,
    scope: Scope<'_>,
    ids: &[Uuid],
) -> Result<HashSet<Uuid>, StoreError> {
    if ids.is_empty() {
        return Ok(HashSet::new());
    }
    let query = Query::new(format!("SELECT id FROM {table} WHERE "));
    let query = match scope {
        Scope::Tenant(tenant) => query.push_tenant(tenant, ""),
        Scope::Company(company) => query.push("company_id = ").push_bind(company),
    };
    let found: Vec<Uuid> = query
        .push(" AND id IN ")
        .push_bind_list(ids.iter().copied())
        .fetch_column(tx)
        .await?;
    Ok(found.into_iter().collect())
}

/// Whose records a lookup may find.
#[derive(Clone, Copy)]
enum Scope<'a> {
    Tenant(&'a Tenant),
    Company(Uuid),
}

#[derive(sqlx::FromRow)]
struct TenantRuleRow {
    company_id: Uuid,
    mode: Mode,
    #[sqlx(flatten)]
    rule: RuleRow,
}

/// Every enabled rule of every active company, by tenant and in list order,
/// whose person target (if any) is still a user of the rule's company and
/// which still has a target (a deleted team clears its rules' team target).
pub async fn enabled_rules(db: &Db) -> Result<Vec<(Tenant, Rule)>, StoreError> {
    let sql = format!(
        "SELECT r.company_id, r.mode, {RULE_COLUMNS} FROM escalation_rules r \
         JOIN companies co ON co.id = r.company_id \
         WHERE r.enabled AND co.status = 'active' \
         AND (r.escalate_to_id IS NOT NULL OR r.escalate_to_team_id IS NOT NULL) \
         AND (r.escalate_to_id IS NULL OR EXISTS (SELECT 1 FROM users u \
              WHERE u.id = r.escalate_to_id AND u.company_id = r.company_id)) \
         ORDER BY r.company_id, r.mode, r.position"
    );
    let rows: Vec<TenantRuleRow> = Query::new(sql).fetch_all(db).await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let tenant = Tenant::new(row.company_id, row.mode);
            (tenant, Rule::from(row.rule))
        })
        .collect())
}

/// `FROM tickets t WHERE …`: the tickets of `tenant` that satisfy the
/// rule's conditions now and that the rule has not fired for. "Now" is the
/// database's clock, so every node judges a ticket's age alike.
/// `fields` is the rule's custom field condition as checked at this pass.
fn match_clause(
    select: &str,
    tenant: &Tenant,
    rule: &Rule,
    fields: &FieldFilter,
    backend: Backend,
) -> Query {
    let mut query = Query::new(select)
        .push(" FROM tickets t WHERE ")
        .push_tenant(tenant, "t");
    let c = &rule.conditions;
    let statuses = c.statuses.as_deref().unwrap_or(DEFAULT_STATUSES);
    query = query
        .push(" AND t.status IN ")
        .push_bind_list(statuses.iter().copied());
    if let Some(priorities) = &c.priorities {
        query = query
            .push(" AND t.priority IN ")
            .push_bind_list(priorities.iter().copied());
    }
    if let Some(entity) = c.entity_id {
        query = query.push(" AND t.entity_id = ").push_bind(entity);
    }
    match c.unassigned {
        Some(true) => query = query.push(" AND t.assigned_to_id IS NULL"),
        Some(false) => query = query.push(" AND t.assigned_to_id IS NOT NULL"),
        None => {}
    }
    for (column, minutes) in [
        ("created_at", c.minutes_since_created),
        ("updated_at", c.minutes_since_last_activity),
    ] {
        if let Some(minutes) = minutes {
            let back = query.placeholder_for(minutes.saturating_mul(-60_000));
            query = query.push(&format!(
                " AND t.{column} <= {}",
                backend.now_plus_sql(&back)
            ));
        }
    }
    query = tag_store::push_filter(query, Tagged::Ticket, "t.id", &c.tag_filter());
    query = field_store::push_filter(query, Recorded::Ticket, "t.id", fields);
    query
        .push(
            " AND NOT EXISTS (SELECT 1 FROM escalation_rule_firings f \
             WHERE f.rule_id = ",
        )
        .push_bind(rule.id)
        .push(" AND f.ticket_id = t.id)")
}

/// The rule's query: up to `limit` ids of the tickets it matches now and
/// has not fired for, oldest first.
pub async fn matching_tickets(
    db: &Db,
    tenant: &Tenant,
    rule: &Rule,
    fields: &FieldFilter,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    match_clause("SELECT t.id", tenant, rule, fields, db.backend())
        .push(&format!(" ORDER BY t.created_at, t.id LIMIT {limit}"))
        .fetch_column(db)
        .await
}

/// Fires `rule` for one ticket, in one transaction: checks (with the ticket
/// locked) that it still matches, records the firing (the primary key
/// refuses a second one, from any node), and escalates it as the API does,
/// marked automatic with the rule's id. `None` when it no longer matches or
/// has already fired; else the escalated ticket.
pub async fn fire(
    db: &Db,
    tenant: &Tenant,
    rule: &Rule,
    fields: &FieldFilter,
    ticket_id: Uuid,
    now: Timestamp,
    signer: &Signer,
) -> Result<Option<Ticket>, StoreError> {
    let mut tx = db.begin().await?;
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE OF t",
        Backend::Sqlite => "",
    };
    let still: Option<(Uuid,)> = match_clause("SELECT t.id", tenant, rule, fields, tx.backend())
        .push(" AND t.id = ")
        .push_bind(ticket_id)
        .push(lock)
        .fetch_optional(&mut tx)
        .await?;
    if still.is_none() {
        return Ok(None);
    }
    let recorded = Query::new(
        "INSERT INTO escalation_rule_firings (rule_id, ticket_id, fired_at) VALUES ($1, $2, $3) \
         ON CONFLICT (rule_id, ticket_id) DO NOTHING",
    )
    .bind(rule.id)
    .bind(ticket_id)
    .bind(now)
    .rows_affected(&mut tx)
    .await?;
    if recorded == 0 {
        return Ok(None);
    }
    let escalation = Escalation {
        to_user: rule.action.escalate_to_id,
        to_team: rule.action.escalate_to_team_id,
        reason: rule.action.reason.clone(),
        automatic: true,
        rule_id: Some(rule.id),
    };
    let ticket = escalate_in(&mut tx, tenant, ticket_id, &escalation, now, signer).await?;
    tx.commit().await?;
    Ok(Some(ticket))
}

/// The key of the pass's advisory lock ("SDRULES1").
const PASS_LOCK_KEY: i64 = 0x5344_5255_4c45_5331;

/// The pass lock, or None when another node is running a pass. SQLite (one
/// node) needs none: firings are unique anyway.
pub async fn lock_pass(db: &Db) -> Result<Option<PassLock>, StoreError> {
    PassLock::try_take(db, PASS_LOCK_KEY, "escalation rules").await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom_fields::model::{FieldCondition, FilterValue, Operator};
    use crate::model::Priority;

    fn rule(conditions: Conditions) -> Rule {
        Rule {
            id: Uuid::now_v7(),
            name: "r".into(),
            enabled: true,
            conditions,
            action: Action {
                escalate_to_id: Some(Uuid::now_v7()),
                escalate_to_team_id: None,
                reason: None,
            },
            created_at: Timestamp::now(),
            updated_at: Timestamp::now(),
        }
    }

    fn tenant() -> Tenant {
        Tenant::new(Uuid::now_v7(), Mode::Test)
    }

    #[test]
    fn custom_field_conditions_probe_the_values_as_the_list_filters_do() {
        let fields = FieldFilter {
            conditions: vec![FieldCondition {
                key: "order_total".into(),
                operator: Operator::Gte,
                value: FilterValue::Number(100.0),
            }],
        };
        let query = match_clause(
            "SELECT t.id",
            &tenant(),
            &rule(Conditions {
                custom_fields: Some(serde_json::json!({"order_total": {"gte": 100}})),
                ..Default::default()
            }),
            &fields,
            Backend::Sqlite,
        );
        assert_eq!(
            query.sql(),
            "SELECT t.id FROM tickets t WHERE t.company_id = $1 AND t.mode = $2 \
             AND t.status IN ($3, $4) \
             AND EXISTS (SELECT 1 FROM ticket_field_values v WHERE v.ticket_id = t.id \
             AND v.key = $5 AND v.number_value >= $6) \
             AND NOT EXISTS (SELECT 1 FROM escalation_rule_firings f \
             WHERE f.rule_id = $7 AND f.ticket_id = t.id)"
        );
    }

    #[test]
    fn clause_binds_every_condition_in_order() {
        let conditions = Conditions {
            priorities: Some(vec![Priority::High, Priority::Urgent]),
            entity_id: Some(Uuid::now_v7()),
            unassigned: Some(true),
            minutes_since_created: Some(30),
            minutes_since_last_activity: Some(0),
            ..Default::default()
        };
        let query = match_clause(
            "SELECT t.id",
            &tenant(),
            &rule(conditions),
            &FieldFilter::default(),
            Backend::Postgres,
        );
        let ago =
            |n| format!("date_trunc('milliseconds', now() + ${n} * interval '1 millisecond')");
        assert_eq!(
            query.sql(),
            format!(
                "SELECT t.id FROM tickets t WHERE t.company_id = $1 AND t.mode = $2 \
                 AND t.status IN ($3, $4) AND t.priority IN ($5, $6) AND t.entity_id = $7 \
                 AND t.assigned_to_id IS NULL AND t.created_at <= {} AND t.updated_at <= {} \
                 AND NOT EXISTS (SELECT 1 FROM escalation_rule_firings f \
                 WHERE f.rule_id = $10 AND f.ticket_id = t.id)",
                ago(8),
                ago(9)
            )
        );
    }
}
