//! `/organizations`: the companies contacts belong to, by hand or by the
//! domains of their emails; one read shows an organisation's contacts and
//! their tickets.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::fields::{custom_fields, optional, replaced, something};
use super::model::{self, NewOrganization, OrganizationChanges};
use super::store::{self, organizations};
use crate::auth::{Principal, Scope};
use crate::contacts::{Contact, Organization};
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, Deleted, ErrorBody};
use crate::paging::Cursors;
use crate::paging::{After, CursorPage, ListId, ListRequest};
use crate::router::ApiRouter;
use crate::tickets::store::{self as ticket_store, TicketSummary};
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, Patch, required_text};

/// The contacts and tickets an organisation's page shows, newest first.
const RECORDS_SHOWN: i64 = 50;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ContactsRead, routes!(list))
        .route(Scope::ContactsWrite, routes!(create))
        .route(Scope::ContactsRead, routes!(get_one))
        .route(Scope::ContactsWrite, routes!(update))
        .route(Scope::ContactsWrite, routes!(delete))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateOrganization {
    #[schema(schema_with = schema::name, required)]
    name: Option<String>,
    /// Domain names (`example.com`), each one organisation's in the
    /// company and mode; up to 20. The contacts without an organisation
    /// that have an email at one of them join it, now and later.
    #[schema(value_type = Option<Vec<String>>)]
    domains: Option<Value>,
    /// Up to 50 keys with string, number, boolean or null values.
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<Value>,
}

/// Only these fields can change.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateOrganization {
    #[serde(default)]
    #[schema(schema_with = schema::name)]
    name: Patch<String>,
    /// Replaces the domains (null: none); new ones collect their contacts.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    domains: Patch<Value>,
    /// Replaces the custom fields.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    custom_fields: Patch<Value>,
}

/// An organisation with its contacts and their tickets.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrganizationWithRecords {
    #[serde(flatten)]
    organization: Organization,
    /// Its 50 newest contacts, newest first (`GET
    /// /contacts?organizationId=` pages through them all).
    contacts: Vec<Contact>,
    /// The 50 newest tickets of its contacts the key may see, newest first.
    tickets: Vec<TicketSummary>,
}

/// List organisations
#[utoipa::path(get, path = "/organizations", operation_id = "list_organizations",
    tag = "Contacts",
    params(ListRequest),
    responses((status = 200, description = "A page of organisations, newest first",
        body = CursorPage<Organization>)))]
async fn list(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    Query(query): Query<ListRequest>,
) -> ApiResult<Json<CursorPage<Organization>>> {
    let ((page, after),) = (query.check(20, 100),).all_valid()?;
    let list = ListId::new("organizations", &principal.tenant, &());
    let after = cursors.open_after(&list, after.as_deref())?;
    let (rows, total) = organizations::list(&db, &principal.tenant, page, after.as_ref()).await?;
    let position = |organization: &Organization| After {
        created_at: organization.created_at,
        id: organization.id,
    };
    Ok(Json(CursorPage::by_time(
        rows, total, page, &cursors, &list, position,
    )))
}

/// Create an organisation
#[utoipa::path(post, path = "/organizations", operation_id = "create_organization",
    tag = "Contacts",
    request_body = CreateOrganization,
    responses(
        (status = 201, description = "Created", body = Organization),
        (status = 409, description = "A domain is another organisation's", body = ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateOrganization>,
) -> ApiResult<(StatusCode, Json<Organization>)> {
    let (name, domains, custom_fields) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        optional("domains", body.domains.as_ref(), model::domains),
        optional("customFields", body.custom_fields.as_ref(), custom_fields),
    )
        .all_valid()?;
    let new = NewOrganization {
        name,
        domains,
        custom_fields,
    };
    let db = state.db.acting(principal.actor());
    let organization =
        organizations::create(&db, &principal.tenant, new, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(organization)))
}

/// Get an organisation
///
/// With its 50 newest contacts and the 50 newest tickets of its contacts.
#[utoipa::path(get, path = "/organizations/{id}", operation_id = "get_organization",
    tag = "Contacts",
    params(("id" = uuid::Uuid, Path, description = "Organisation id")),
    responses((status = 200, description = "The organisation with its records",
        body = OrganizationWithRecords)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<OrganizationWithRecords>> {
    let tenant = &principal.tenant;
    let organization = organizations::find(&db, tenant, id).await?;
    let contacts = store::of_organization(&db, tenant, id, RECORDS_SHOWN).await?;
    let members = store::ids_of_organization(&db, tenant, id).await?;
    let tickets = ticket_store::of_contacts(&db, tenant, &members, RECORDS_SHOWN).await?;
    Ok(Json(OrganizationWithRecords {
        organization,
        contacts,
        tickets,
    }))
}

/// Update an organisation
#[utoipa::path(patch, path = "/organizations/{id}", operation_id = "update_organization",
    tag = "Contacts",
    request_body = UpdateOrganization,
    params(("id" = uuid::Uuid, Path, description = "Organisation id")),
    responses(
        (status = 200, description = "The updated organisation", body = Organization),
        (status = 409, description = "A domain is another organisation's", body = ErrorBody),
    ))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateOrganization>,
) -> ApiResult<Json<Organization>> {
    let given =
        !(body.name.is_missing() && body.domains.is_missing() && body.custom_fields.is_missing());
    let name = match &body.name {
        Patch::Missing => Ok(None),
        Patch::Null => required_text("name", None, NAME_MAX).map(Some),
        Patch::Value(raw) => required_text("name", Some(raw), NAME_MAX).map(Some),
    };
    let (_, name, domains, custom_fields) = (
        something(given, "name, domains, customFields"),
        name,
        replaced("domains", &body.domains, model::domains),
        replaced("customFields", &body.custom_fields, custom_fields),
    )
        .all_valid()?;
    let changes = OrganizationChanges {
        name,
        domains,
        custom_fields,
    };
    let db = db.acting(principal.actor());
    let organization =
        organizations::update(&db, &principal.tenant, id, changes, clock.now()).await?;
    Ok(Json(organization))
}

/// Delete an organisation
///
/// Its contacts stay, without an organisation.
#[utoipa::path(delete, path = "/organizations/{id}", operation_id = "delete_organization",
    tag = "Contacts",
    params(("id" = uuid::Uuid, Path, description = "Organisation id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Deleted>> {
    organizations::delete(&db, &principal.tenant, id).await?;
    Ok(Json(Deleted { id, deleted: true }))
}
