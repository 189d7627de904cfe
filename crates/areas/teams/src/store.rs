//! SQL for teams, their members and entities, and the default team of an
//! entity. Every query filters on the tenant (company and mode); members
//! and entities are checked to be the company's in the writing transaction.

use std::collections::HashMap;

use uuid::Uuid;

use super::model::{NewTeam, Routing, RoutingMode, Team, TeamPatch};
use super::recorded::record;
use crate::audit::{Action, Changes};
use crate::auth::Tenant;
use crate::db::{Backend, Db, On, Query, Table, Tx};
use crate::error::{FieldError, StoreError};
use crate::time::{Timestamp, new_id};
use crate::validate::problem;

const COLUMNS: &str = "id, name, routing_mode, chat_capacity, ticket_capacity, include_tickets, \
     created_at, updated_at";

#[derive(sqlx::FromRow)]
struct TeamRow {
    id: Uuid,
    name: String,
    routing_mode: RoutingMode,
    chat_capacity: i64,
    ticket_capacity: i64,
    include_tickets: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl TeamRow {
    fn routing(&self) -> Routing {
        Routing {
            mode: self.routing_mode,
            chat_capacity: self.chat_capacity,
            ticket_capacity: self.ticket_capacity,
            include_tickets: self.include_tickets,
        }
    }
}

/// Creates a team; members must be users and entities entities of the
/// company. Stamped `now`.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: &NewTeam,
    now: Timestamp,
) -> Result<Team, StoreError> {
    let mut tx = db.begin().await?;
    ensure_company_ids(&mut tx, tenant, Table::Users, "memberIds", &new.member_ids).await?;
    ensure_company_ids(
        &mut tx,
        tenant,
        Table::Entities,
        "entityIds",
        &new.entity_ids,
    )
    .await?;
    let id = new_id();
    Query::new(
        "INSERT INTO teams (id, company_id, mode, name, routing_mode, chat_capacity, \
         ticket_capacity, include_tickets, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.name.as_str())
    .bind(new.routing.mode)
    .bind(new.routing.chat_capacity)
    .bind(new.routing.ticket_capacity)
    .bind(new.routing.include_tickets)
    .bind(now)
    .execute(&mut tx)
    .await?;
    replace_links(&mut tx, id, Link::Members, &new.member_ids).await?;
    replace_links(&mut tx, id, Link::Entities, &new.entity_ids).await?;
    let team = load(&mut tx, tenant, id, "").await?;
    record(
        &mut tx,
        tenant,
        id,
        now,
        Action::TeamCreated,
        Changes::created(&team),
    )
    .await?;
    tx.commit().await?;
    Ok(team)
}

pub async fn find(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Team, StoreError> {
    load(db, tenant, id, "").await
}

/// The tenant's teams, oldest first (a company has a handful).
pub async fn list(db: &Db, tenant: &Tenant) -> Result<Vec<Team>, StoreError> {
    let rows: Vec<TeamRow> = Query::new(format!("SELECT {COLUMNS} FROM teams WHERE "))
        .push_tenant(tenant, "")
        .push(" ORDER BY created_at, id")
        .fetch_all(db)
        .await?;
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let mut members = links_of_each(db, Link::Members, &ids).await?;
    let mut entities = links_of_each(db, Link::Entities, &ids).await?;
    let mut queues = queue_lengths(db, &ids).await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let id = row.id;
            assemble(
                row,
                members.remove(&id).unwrap_or_default(),
                entities.remove(&id).unwrap_or_default(),
                queues.remove(&id).unwrap_or_default(),
            )
        })
        .collect())
}

/// Applies a PATCH under the team's row lock; answers the team before and
/// after.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    patch: &TeamPatch,
    now: Timestamp,
) -> Result<(Team, Team), StoreError> {
    let mut tx = db.begin().await?;
    let row_lock = lock(tx.backend());
    let before = load(&mut tx, tenant, id, row_lock).await?;
    if let Some(members) = &patch.member_ids {
        ensure_company_ids(&mut tx, tenant, Table::Users, "memberIds", members).await?;
        replace_links(&mut tx, id, Link::Members, members).await?;
    }
    if let Some(entities) = &patch.entity_ids {
        ensure_company_ids(&mut tx, tenant, Table::Entities, "entityIds", entities).await?;
        replace_links(&mut tx, id, Link::Entities, entities).await?;
    }
    let routing = patch.routing.apply(before.routing);
    Query::new(
        "UPDATE teams SET name = $4, routing_mode = $5, chat_capacity = $6, \
         ticket_capacity = $7, include_tickets = $8, updated_at = $9 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(patch.name.as_deref().unwrap_or(&before.name))
    .bind(routing.mode)
    .bind(routing.chat_capacity)
    .bind(routing.ticket_capacity)
    .bind(routing.include_tickets)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let after = load(&mut tx, tenant, id, "").await?;
    let changes = Changes::updated(&before, &after);
    record(&mut tx, tenant, id, now, Action::TeamUpdated, changes).await?;
    tx.commit().await?;
    Ok((before, after))
}

/// Deletes a team, stamped `now`: its sessions and tickets keep their
/// assignee and lose their team (so queued chats leave the queue
/// unassigned).
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let before = load(&mut tx, tenant, id, "").await?;
    Query::new("DELETE FROM teams WHERE id = $1 AND ")
        .bind(id)
        .push_tenant(tenant, "")
        .execute_or_not_found(&mut tx)
        .await?;
    record(
        &mut tx,
        tenant,
        id,
        now,
        Action::TeamDeleted,
        Changes::deleted(&before),
    )
    .await?;
    tx.commit().await
}

/// The teams the user is a member of, in the tenant.
pub async fn teams_of_member(
    db: &Db,
    tenant: &Tenant,
    user_id: Uuid,
) -> Result<Vec<Uuid>, StoreError> {
    Query::new(
        "SELECT t.id FROM teams t JOIN team_members m ON m.team_id = t.id WHERE m.user_id = ",
    )
    .push_bind(user_id)
    .push(" AND ")
    .push_tenant(tenant, "t")
    .fetch_column(db)
    .await
}

/// The entity's default team in the tenant's mode, if any.
pub async fn default_team<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    entity_id: Uuid,
) -> Result<Option<Uuid>, StoreError> {
    Ok(Query::new(
        "SELECT d.team_id FROM entity_default_teams d JOIN teams t ON t.id = d.team_id \
         WHERE d.entity_id = $1 AND d.mode = $2 AND t.company_id = $3",
    )
    .bind(entity_id)
    .bind(tenant.mode.as_str())
    .bind(tenant.company_id)
    .fetch_column(on)
    .await?
    .pop())
}

/// Sets (or, with `None`, clears) the entity's default team for the
/// tenant's mode; the entity is the caller's to check.
pub async fn set_default_team(
    db: &Db,
    tenant: &Tenant,
    entity_id: Uuid,
    team_id: Option<Uuid>,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    Query::new("DELETE FROM entity_default_teams WHERE entity_id = $1 AND mode = $2")
        .bind(entity_id)
        .bind(tenant.mode.as_str())
        .execute(&mut tx)
        .await?;
    if let Some(team) = team_id {
        ensure_team(&mut tx, tenant, team, "defaultTeamId").await?;
        Query::new(
            "INSERT INTO entity_default_teams (entity_id, mode, team_id) VALUES ($1, $2, $3)",
        )
        .bind(entity_id)
        .bind(tenant.mode.as_str())
        .bind(team)
        .execute(&mut tx)
        .await?;
    }
    tx.commit().await
}

/// `team` must be a team of the tenant: a 400 on `field` otherwise.
pub async fn ensure_team<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    team: Uuid,
    field: &str,
) -> Result<(), StoreError> {
    let found: Vec<Uuid> = Query::new("SELECT id FROM teams WHERE id = $1 AND ")
        .bind(team)
        .push_tenant(tenant, "")
        .fetch_column(on)
        .await?;
    if found.is_empty() {
        return Err(StoreError::InvalidReference {
            field: field.to_string(),
            message: "must be a team of this company (in the key's mode)".into(),
        });
    }
    Ok(())
}

/// The row lock a read-then-write takes on Postgres; SQLite's write
/// transaction (`BEGIN IMMEDIATE`) already excludes other writers.
pub fn lock(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    }
}

async fn load<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
    suffix: &str,
) -> Result<Team, StoreError> {
    let mut on = on.into();
    let row: TeamRow = Query::new(format!("SELECT {COLUMNS} FROM teams WHERE id = $1 AND "))
        .bind(id)
        .push_tenant(tenant, "")
        .push(suffix)
        .fetch_one(on.reborrow())
        .await?;
    let members = links_of(on.reborrow(), Link::Members, id).await?;
    let entities = links_of(on.reborrow(), Link::Entities, id).await?;
    let queue = queue_length(on, id).await?;
    Ok(assemble(row, members, entities, queue))
}

fn assemble(row: TeamRow, member_ids: Vec<Uuid>, entity_ids: Vec<Uuid>, queue: i64) -> Team {
    Team {
        routing: row.routing(),
        id: row.id,
        name: row.name,
        member_ids,
        entity_ids,
        queue_length: queue,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

/// The entities of team `team` (none when it has none or is gone), whose
/// channels serve as the team's.
pub async fn entities_of<'c>(on: impl Into<On<'c>>, team: Uuid) -> Result<Vec<Uuid>, StoreError> {
    links_of(on, Link::Entities, team).await
}

/// The active sessions of the team waiting for an agent.
pub const QUEUED: &str = "status = 'ACTIVE' AND assignee_id IS NULL";

async fn queue_length<'c>(on: impl Into<On<'c>>, team: Uuid) -> Result<i64, StoreError> {
    Query::new(format!(
        "SELECT COUNT(*) FROM chat_sessions WHERE team_id = $1 AND {QUEUED}"
    ))
    .bind(team)
    .fetch_scalar(on)
    .await
}

async fn queue_lengths(db: &Db, teams: &[Uuid]) -> Result<HashMap<Uuid, i64>, StoreError> {
    if teams.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<(Uuid, i64)> = Query::new(format!(
        "SELECT team_id, COUNT(*) FROM chat_sessions WHERE {QUEUED} AND team_id IN "
    ))
    .push_bind_list(teams.iter().copied())
    .push(" GROUP BY team_id")
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().collect())
}

/// A team's link table: members or entities.
#[derive(Clone, Copy)]
enum Link {
    Members,
    Entities,
}

impl Link {
    fn table(self) -> &'static str {
        match self {
            Link::Members => "team_members",
            Link::Entities => "team_entities",
        }
    }

    fn column(self) -> &'static str {
        match self {
            Link::Members => "user_id",
            Link::Entities => "entity_id",
        }
    }
}

async fn links_of<'c>(
    on: impl Into<On<'c>>,
    link: Link,
    team: Uuid,
) -> Result<Vec<Uuid>, StoreError> {
    let mut ids: Vec<Uuid> = Query::new(format!(
        "SELECT {} FROM {} WHERE team_id = $1",
        link.column(),
        link.table()
    ))
    .bind(team)
    .fetch_column(on)
    .await?;
    ids.sort();
    Ok(ids)
}

async fn links_of_each(
    db: &Db,
    link: Link,
    teams: &[Uuid],
) -> Result<HashMap<Uuid, Vec<Uuid>>, StoreError> {
    let mut links: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    if teams.is_empty() {
        return Ok(links);
    }
    let rows: Vec<(Uuid, Uuid)> = Query::new(format!(
        "SELECT team_id, {} FROM {} WHERE team_id IN ",
        link.column(),
        link.table()
    ))
    .push_bind_list(teams.iter().copied())
    .fetch_all(db)
    .await?;
    for (team, id) in rows {
        links.entry(team).or_default().push(id);
    }
    for ids in links.values_mut() {
        ids.sort();
    }
    Ok(links)
}

async fn replace_links(
    tx: &mut Tx,
    team: Uuid,
    link: Link,
    ids: &[Uuid],
) -> Result<(), StoreError> {
    Query::new(format!("DELETE FROM {} WHERE team_id = $1", link.table()))
        .bind(team)
        .execute(&mut *tx)
        .await?;
    for id in ids {
        Query::new(format!(
            "INSERT INTO {} (team_id, {}) VALUES ($1, $2)",
            link.table(),
            link.column()
        ))
        .bind(team)
        .bind(*id)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// Every id must name a record of `table` in the company: one 400 on
/// `field` naming the first that does not.
async fn ensure_company_ids(
    tx: &mut Tx,
    tenant: &Tenant,
    table: Table,
    field: &str,
    ids: &[Uuid],
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    let name = match table {
        Table::Users => "users",
        Table::Entities => "entities",
    };
    let found: Vec<Uuid> = Query::new(format!("SELECT id FROM {name} WHERE company_id = "))
        .push_bind(tenant.company_id)
        .push(" AND id IN ")
        .push_bind_list(ids.iter().copied())
        .fetch_column(&mut *tx)
        .await?;
    let missing: Vec<FieldError> = ids
        .iter()
        .filter(|id| !found.contains(id))
        .take(1)
        .map(|id| {
            let what = match table {
                Table::Users => "a user",
                Table::Entities => "an entity",
            };
            problem(field, format!("{id} is not {what} of this company"))
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(StoreError::InvalidReferences(missing))
    }
}
