//! `PATCH /tickets/{id}`: the checked change of a PATCH body, and
//! applying it as a PATCH does, which a bulk change does per ticket too.

use std::sync::Arc;

use axum::extract::State;
use serde::Deserialize;
use utoipa::ToSchema;

use super::TicketWrites;
use super::model::{Ticket, TicketStatus, TicketUpdate};
use super::versions::{IfMatch, VersionConflict, Versioned, refused};
use super::{snoozing, store};
use crate::auth::Principal;
use crate::custom_fields::DefinitionCache;
use crate::custom_fields::model::{RecordKind, check_values};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::{Id, Json};
use crate::openapi::schema;
use crate::tags::model::{TagEdit, tag_set};
use crate::teams::routing;
use crate::time::Timestamp;
use crate::validate::{Fields, Patch, ensure, optional_enum, problem, required_id};

/// Only these fields can change; anything else is a 400 rather than
/// silently ignored.
#[derive(Deserialize, ToSchema)]
#[schema(as = UpdateTicket)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateBody {
    #[serde(default)]
    #[schema(schema_with = schema::ticket_status)]
    status: Patch<String>,
    #[serde(default)]
    #[schema(schema_with = schema::ticket_priority)]
    priority: Patch<String>,
    /// A user of the company; null unassigns.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    assigned_to_id: Patch<String>,
    /// A team of the company; null takes the ticket out of its team. An
    /// unassigned ticket moved into a team that routes tickets is assigned
    /// to an online member below capacity.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    team_id: Patch<String>,
    /// Replaces the ticket's tags (normalised as on create).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    tags: Patch<serde_json::Value>,
    /// Sets the values it names (null clears one) and keeps the others.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    custom_fields: Patch<serde_json::Value>,
    /// Tags to add, keeping the others (normalised as on create). With
    /// `removeTags`, one atomic change of the tags alone: not with any
    /// other field (a bulk change's way to tag many tickets).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    add_tags: Patch<serde_json::Value>,
    /// Tags to remove, keeping the others; as `addTags`.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    remove_tags: Patch<serde_json::Value>,
    /// Snoozes the ticket until this instant (RFC 3339, still to come):
    /// it wakes then or at its customer's next reply; null wakes it now.
    #[serde(default)]
    #[schema(value_type = Option<chrono::DateTime<chrono::Utc>>)]
    snoozed_until: Patch<String>,
    /// Resolves or closes a parent whose children are still open (refused
    /// with 409 `open_children` otherwise, unless the company's
    /// `resolveParentsWithOpenChildren` allows it).
    #[serde(default)]
    #[schema(value_type = bool)]
    force: Patch<bool>,
}

/// A checked PATCH body: the change of the ticket's fields (None when it
/// names none of them), its snooze (`Some(None)` wakes it) and `force`.
#[derive(Clone)]
pub(crate) struct PatchChange {
    fields: Option<TicketUpdate>,
    /// `addTags`/`removeTags`: given, they are the whole change.
    tag_edit: Option<TagEdit>,
    snooze: Option<Option<Timestamp>>,
    force: bool,
}

/// Update a ticket
///
/// Status, priority, assignee, team and tags (`tags` replaces the set); each real
/// change is recorded in the timeline and emitted as `ticket.updated`.
/// `snoozedUntil` snoozes the ticket (or, null, wakes it). With
/// `If-Match` on a version the ticket is no longer at, nothing changes: 412
/// `version_conflict` with the changes since.
#[utoipa::path(patch, path = "/tickets/{id}", operation_id = "update_ticket", tag = "Tickets",
    request_body = UpdateBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id"),
        ("If-Match" = Option<String>, Header, description = "The ticket's version the change is based on (its `ETag`, `\"<version>\"`): when the ticket is at another version now, nothing changes and the answer is 412 `version_conflict`. `*` or no header: any version.")),
    responses((status = 200, description = "The updated ticket", body = Ticket,
        headers(("ETag" = String, description = "The ticket's version, `\"<version>\"`: send it back as `If-Match`."))),
        (status = 409, description = "`open_children`: a parent with open children is not \
            resolved or closed without `force`", body = crate::openapi::schema::ErrorBody),
        (status = 412, description = "`version_conflict`: the ticket is no longer at the version `If-Match` named; nothing changed. `details` has a line per change since, `changes` the timeline entries, `currentVersion` the version now.", body = VersionConflict)))]
pub(crate) async fn update(
    State(state): State<TicketWrites>,
    State(definitions_cache): State<Arc<DefinitionCache>>,
    principal: Principal,
    Id(id): Id,
    IfMatch(expected): IfMatch,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Versioned<Ticket>> {
    let definitions = match &body.custom_fields {
        Patch::Value(_) => {
            crate::custom_fields::definitions(&definitions_cache, &state.db, &principal.tenant)
                .await?
        }
        Patch::Missing | Patch::Null => Default::default(),
    };
    let change = ticket_update(&body, &definitions, state.clock.now())?;
    let db = state.db.acting(principal.actor());
    let ticket = update_one(&state, &db, &principal.tenant, id, change, expected).await?;
    Ok(Versioned(ticket.version, ticket))
}

/// The checked change of a PATCH body (or a bulk change's `changes`), the
/// custom fields against the company's `definitions`.
pub(crate) fn ticket_update(
    body: &UpdateBody,
    definitions: &[crate::custom_fields::model::Definition],
    now: Timestamp,
) -> ApiResult<PatchChange> {
    if !body.add_tags.is_missing() || !body.remove_tags.is_missing() {
        return tag_change(body);
    }
    let no_field = body.status.is_missing()
        && body.priority.is_missing()
        && body.assigned_to_id.is_missing()
        && body.team_id.is_missing()
        && body.tags.is_missing()
        && body.custom_fields.is_missing();
    let nothing_given = no_field && body.snoozed_until.is_missing();
    let (_, status, priority, assigned_to_id, team_id, tags, custom_fields, (snooze, force)) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: status, priority, assignedToId, teamId, tags, customFields, \
             snoozedUntil, addTags, removeTags",
        ),
        patched_enum("status", &body.status),
        patched_enum("priority", &body.priority),
        patched_id("assignedToId", &body.assigned_to_id),
        patched_id("teamId", &body.team_id),
        match &body.tags {
            Patch::Missing => Ok(None),
            Patch::Null => Err(problem("tags", "must not be null")),
            Patch::Value(raw) => tag_set("tags", raw).map(Some),
        },
        match &body.custom_fields {
            Patch::Missing => Ok(Default::default()),
            Patch::Null => Err(vec![problem("customFields", "must not be null")]),
            Patch::Value(raw) => {
                check_values(definitions, RecordKind::Ticket, Some(raw), false, false)
            }
        },
        snoozing::patched(&body.snoozed_until, &body.force, now),
    )
        .all_valid()?;
    let fields = TicketUpdate {
        status,
        priority,
        assigned_to_id,
        team_id,
        tags,
        custom_fields,
    };
    Ok(PatchChange {
        fields: (!no_field).then_some(fields),
        tag_edit: None,
        snooze: (!body.snoozed_until.is_missing()).then_some(snooze),
        force,
    })
}

/// The change of a body giving `addTags` or `removeTags`: the tags alone,
/// so that each ticket's change stays one atomic edit under its lock.
fn tag_change(body: &UpdateBody) -> ApiResult<PatchChange> {
    let others = [
        ("status", body.status.is_missing()),
        ("priority", body.priority.is_missing()),
        ("assignedToId", body.assigned_to_id.is_missing()),
        ("teamId", body.team_id.is_missing()),
        ("tags", body.tags.is_missing()),
        ("customFields", body.custom_fields.is_missing()),
        ("snoozedUntil", body.snoozed_until.is_missing()),
        ("force", body.force.is_missing()),
    ];
    let given: Vec<&str> = others
        .iter()
        .filter(|(_, missing)| !missing)
        .map(|(name, _)| *name)
        .collect();
    if !given.is_empty() {
        return Err(ApiError::invalid_field(
            "addTags",
            format!(
                "addTags and removeTags change the tags alone: send {} in another change",
                given.join(", ")
            ),
        ));
    }
    let tags = |field: &str, value: &Patch<serde_json::Value>| match value {
        Patch::Missing => Ok(Vec::new()),
        Patch::Null => Err(problem(field, "must not be null")),
        Patch::Value(raw) => tag_set(field, raw),
    };
    let (add, remove) = (
        tags("addTags", &body.add_tags),
        tags("removeTags", &body.remove_tags),
    )
        .all_valid()?;
    if let Some(tag) = add.iter().find(|tag| remove.contains(tag)) {
        let message = format!("{tag:?} is also in addTags");
        return Err(ApiError::invalid_field("removeTags", message));
    }
    Ok(PatchChange {
        fields: None,
        tag_edit: Some(TagEdit { add, remove }),
        snooze: None,
        force: false,
    })
}

/// Applies `update` to the ticket `id` as a PATCH does (the rating link of
/// a resolution, routing after a move into a team), by `db`'s actor;
/// `expected`: the version `If-Match` named.
pub(crate) async fn update_one(
    state: &TicketWrites,
    db: &crate::db::Db,
    tenant: &crate::auth::Tenant,
    id: uuid::Uuid,
    change: PatchChange,
    expected: Option<i64>,
) -> ApiResult<Ticket> {
    if let Some(edit) = change.tag_edit {
        let (now, signer) = (state.clock.now(), state.link_signer());
        let edited = store::edit_tags_at(db, tenant, id, edit, expected, now, &signer).await;
        return match edited {
            Ok(ticket) => Ok(ticket),
            Err(error) => Err(refused(&state.db, tenant, id, expected, error).await),
        };
    }
    let status = change.fields.as_ref().and_then(|fields| fields.status);
    snoozing::ensure_children_closed(state, tenant, id, status, change.force).await?;
    let (ticket, expected) = match change.fields {
        // The fields' change checked `If-Match`; the snooze after it is
        // part of the same request.
        Some(fields) => (
            Some(update_fields(state, db, tenant, id, fields, expected).await?),
            None,
        ),
        None => (None, expected),
    };
    match (change.snooze, ticket) {
        (Some(until), _) => match snoozing::snooze(state, db, tenant, id, until, expected).await {
            Ok(ticket) => Ok(ticket),
            Err(error) => Err(refused(&state.db, tenant, id, expected, error).await),
        },
        (None, Some(ticket)) => Ok(ticket),
        // A checked change names a field or a snooze.
        (None, None) => Err(crate::error::ApiError::internal()),
    }
}

/// Applies the change of the ticket's fields, with `If-Match`'s version.
async fn update_fields(
    state: &TicketWrites,
    db: &crate::db::Db,
    tenant: &crate::auth::Tenant,
    id: uuid::Uuid,
    update: TicketUpdate,
    expected: Option<i64>,
) -> ApiResult<Ticket> {
    let moved_into_team = matches!(update.team_id, Some(Some(_)));
    // Signed before the change: the store adds it to the resolution email
    // only if the ticket becomes RESOLVED in an entity asking automatically.
    let rating_link = match update.status {
        Some(TicketStatus::Resolved) => {
            let now = state.clock.now();
            Some(crate::csat::notify::ticket_link(&state.db, &state.public_url, now, id).await?)
        }
        _ => None,
    };
    let ticket = store::update_with_rating_link(
        db,
        tenant,
        id,
        update,
        rating_link.as_deref(),
        expected,
        state.clock.now(),
        &state.link_signer(),
    )
    .await;
    let ticket = match ticket {
        Ok(ticket) => ticket,
        Err(error) => return Err(refused(&state.db, tenant, id, expected, error).await),
    };
    Ok(match moved_into_team {
        true => routing::route_ticket(&state.routing, tenant, ticket).await,
        false => ticket,
    })
}

/// A PATCH id field: absent keeps, null clears, a value must be an id.
fn patched_id(
    field: &str,
    value: &Patch<String>,
) -> Result<Option<Option<uuid::Uuid>>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(raw) => required_id(field, Some(raw)).map(|id| Some(Some(id))),
    }
}

/// A PATCH enum field: may be absent, not null.
fn patched_enum<E>(field: &str, value: &Patch<String>) -> Result<Option<E>, FieldError>
where
    E: std::str::FromStr<Err = crate::domain::UnknownValue>,
{
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Err(problem(field, "must not be null")),
        Patch::Value(raw) => optional_enum(field, Some(raw)),
    }
}
