//! `/contacts`: the people the desk talks to. Created by hand here, or
//! matched and created from the tickets and chats they open; listed with
//! search and cursor paging; read with their tickets and chats; merged.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::fields::{custom_fields, optional, patched_text, replaced, something};
use super::model::{self, ContactChanges, NOTES_MAX, NewContact, PHONE_MAX};
use super::store::{self, ContactFilter};
use crate::auth::{Principal, Scope};
use crate::chat::store::{self as chat_store, SessionSummary};
use crate::contacts::Contact;
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::{Deleted, ErrorBody};
use crate::paging::Cursors;
use crate::paging::{After, CursorPage, ListId, ListRequest};
use crate::router::ApiRouter;
use crate::sequences::contacts as sequence;
use crate::tags::model::tag_set;
use crate::tickets::store::{self as ticket_store, TicketSummary};
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, Patch, optional_id, optional_text, required_id};

/// The tickets and chats a contact's page shows, newest first.
const RECORDS_SHOWN: i64 = 50;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ContactsRead, routes!(list))
        .route(Scope::ContactsWrite, routes!(create))
        .route(Scope::ContactsRead, routes!(get_one))
        .route(Scope::ContactsWrite, routes!(update))
        .route(Scope::ContactsWrite, routes!(delete))
        .route(Scope::ContactsWrite, routes!(merge))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateContact {
    #[schema(value_type = Option<String>, max_length = 255)]
    name: Option<String>,
    /// Email addresses, each held by one contact of the company and mode
    /// (case ignored); up to 20.
    #[schema(value_type = Option<Vec<String>>)]
    emails: Option<Value>,
    #[schema(value_type = Option<String>, max_length = 64)]
    phone: Option<String>,
    /// The customer's own user id, as a verified widget identity names it;
    /// held by one contact.
    #[schema(value_type = Option<String>, max_length = 255)]
    external_id: Option<String>,
    /// An organisation of the company and mode; without one, the
    /// organisation of an email's domain, if any.
    #[schema(value_type = Option<uuid::Uuid>)]
    organization_id: Option<String>,
    /// Up to 50 keys with string, number, boolean or null values.
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<Value>,
    /// Normalised as a ticket's tags.
    #[schema(value_type = Option<Vec<String>>)]
    tags: Option<Value>,
    #[schema(value_type = Option<String>, max_length = 10000)]
    notes: Option<String>,
}

/// Only these fields can change; null clears one (an array or an object
/// becomes empty).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateContact {
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 255)]
    name: Patch<String>,
    /// Replaces the contact's emails.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    emails: Patch<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 64)]
    phone: Patch<String>,
    /// Replaces the contact's identities with this one.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 255)]
    external_id: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    organization_id: Patch<String>,
    /// Replaces the contact's custom fields.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    custom_fields: Patch<Value>,
    /// Replaces the contact's tags.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    tags: Patch<Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 10000)]
    notes: Patch<String>,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = MergeContact)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct MergeBody {
    /// The contact that remains (another contact of the company and mode).
    #[schema(value_type = uuid::Uuid, required)]
    into: Option<String>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContactQuery {
    /// `limit`, `offset`, `after`: documented by `ListRequest`.
    #[serde(flatten)]
    #[param(ignore)]
    page: ListRequest,
    /// Part of a name or an email address, case ignored.
    #[param(max_length = 255)]
    q: Option<String>,
    /// Only the contacts of this organisation.
    #[param(value_type = Option<uuid::Uuid>)]
    organization_id: Option<String>,
}

/// A contact with their tickets and chats.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContactWithRecords {
    #[serde(flatten)]
    contact: Contact,
    /// The contact's 50 newest tickets, newest first.
    tickets: Vec<TicketSummary>,
    /// The contact's 50 newest chat sessions, newest first.
    chats: Vec<SessionSummary>,
}

/// What a merge did.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContactMerge {
    /// The contact that remains, with the merged one's emails and
    /// identities.
    contact: Contact,
    /// The merged contact, which no longer exists.
    merged_contact_id: uuid::Uuid,
    moved_tickets: usize,
    moved_chats: usize,
}

/// List contacts
///
/// Newest first; `q` finds a part of a name or an email address.
#[utoipa::path(get, path = "/contacts", operation_id = "list_contacts", tag = "Contacts",
    params(ContactQuery, ListRequest),
    responses((status = 200, description = "A page of contacts", body = CursorPage<Contact>)))]
async fn list(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    Query(query): Query<ContactQuery>,
) -> ApiResult<Json<CursorPage<Contact>>> {
    let ((page, after), search, organization_id) = (
        query.page.check(20, 100),
        optional_text("q", query.q.as_deref(), NAME_MAX),
        optional_id("organizationId", query.organization_id.as_deref()),
    )
        .all_valid()?;
    let filter = ContactFilter {
        search,
        organization_id,
    };
    let list = ListId::new("contacts", &principal.tenant, &filter);
    let after = cursors.open_after(&list, after.as_deref())?;
    let (rows, total) = store::list(&db, &principal.tenant, &filter, page, after.as_ref()).await?;
    let position = |contact: &Contact| After {
        created_at: contact.created_at,
        id: contact.id,
    };
    Ok(Json(CursorPage::by_time(
        rows, total, page, &cursors, &list, position,
    )))
}

/// Create a contact
///
/// Emits `contact.created`.
#[utoipa::path(post, path = "/contacts", operation_id = "create_contact", tag = "Contacts",
    request_body = CreateContact,
    responses(
        (status = 201, description = "Created", body = Contact),
        (status = 409, description = "An email or the external id is another contact's",
            body = ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateContact>,
) -> ApiResult<(StatusCode, Json<Contact>)> {
    let (name, emails, phone, external_id, organization_id, custom_fields, tags, notes) = (
        optional_text("name", body.name.as_deref(), NAME_MAX),
        optional("emails", body.emails.as_ref(), model::emails),
        optional_text("phone", body.phone.as_deref(), PHONE_MAX),
        body.external_id
            .as_deref()
            .map(|raw| model::external_id("externalId", raw))
            .transpose(),
        optional_id("organizationId", body.organization_id.as_deref()),
        optional("customFields", body.custom_fields.as_ref(), custom_fields),
        optional("tags", body.tags.as_ref(), tag_set),
        optional_text("notes", body.notes.as_deref(), NOTES_MAX),
    )
        .all_valid()?;
    let new = NewContact {
        name,
        emails,
        phone,
        external_id,
        organization_id,
        custom_fields,
        tags,
        notes,
    };
    let db = state.db.acting(principal.actor());
    let contact = store::create(&db, &principal.tenant, new, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(contact)))
}

/// Get a contact
///
/// With their 50 newest tickets and chat sessions (those the key may
/// see), newest first.
#[utoipa::path(get, path = "/contacts/{id}", operation_id = "get_contact", tag = "Contacts",
    params(("id" = uuid::Uuid, Path, description = "Contact id")),
    responses((status = 200, description = "The contact with their records",
        body = ContactWithRecords)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<ContactWithRecords>> {
    let tenant = &principal.tenant;
    let contact = store::find(&db, tenant, id).await?;
    let tickets = ticket_store::of_contacts(&db, tenant, &[id], RECORDS_SHOWN).await?;
    let chats = chat_store::of_contacts(&db, tenant, &[id], RECORDS_SHOWN).await?;
    Ok(Json(ContactWithRecords {
        contact,
        tickets,
        chats,
    }))
}

/// Update a contact
#[utoipa::path(patch, path = "/contacts/{id}", operation_id = "update_contact",
    tag = "Contacts",
    request_body = UpdateContact,
    params(("id" = uuid::Uuid, Path, description = "Contact id")),
    responses(
        (status = 200, description = "The updated contact", body = Contact),
        (status = 409, description = "An email or the external id is another contact's",
            body = ErrorBody),
    ))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateContact>,
) -> ApiResult<Json<Contact>> {
    let given = [
        body.name.is_missing(),
        body.emails.is_missing(),
        body.phone.is_missing(),
        body.external_id.is_missing(),
        body.organization_id.is_missing(),
        body.custom_fields.is_missing(),
        body.tags.is_missing(),
        body.notes.is_missing(),
    ]
    .contains(&false);
    let (_, name, emails, phone, external_id, organization_id, custom_fields, tags, notes) = (
        something(
            given,
            "name, emails, phone, externalId, organizationId, customFields, tags, notes",
        ),
        patched_text("name", &body.name, NAME_MAX),
        replaced("emails", &body.emails, model::emails),
        patched_text("phone", &body.phone, PHONE_MAX),
        patched_external_id(&body.external_id),
        patched_organization(&body.organization_id),
        replaced("customFields", &body.custom_fields, custom_fields),
        replaced("tags", &body.tags, tag_set),
        patched_text("notes", &body.notes, NOTES_MAX),
    )
        .all_valid()?;
    let changes = ContactChanges {
        name,
        emails,
        phone,
        external_id,
        organization_id,
        custom_fields,
        tags,
        notes,
    };
    let db = db.acting(principal.actor());
    let contact = store::update(&db, &principal.tenant, id, changes, clock.now()).await?;
    Ok(Json(contact))
}

fn patched_external_id(value: &Patch<String>) -> Result<Option<Option<String>>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(raw) => model::external_id("externalId", raw).map(|id| Some(Some(id))),
    }
}

fn patched_organization(value: &Patch<String>) -> Result<Option<Option<uuid::Uuid>>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(raw) => required_id("organizationId", Some(raw)).map(|id| Some(Some(id))),
    }
}

/// Delete a contact
///
/// Their tickets and chats stay, without a contact.
#[utoipa::path(delete, path = "/contacts/{id}", operation_id = "delete_contact",
    tag = "Contacts",
    params(("id" = uuid::Uuid, Path, description = "Contact id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Deleted>> {
    store::delete(&db, &principal.tenant, id).await?;
    Ok(Json(Deleted { id, deleted: true }))
}

/// Merge a contact into another
///
/// Every ticket, chat session, email and identity of this contact moves to
/// `into`; `into` keeps its own fields and takes those it lacks (tags and
/// custom fields are combined, its own values first). This contact is
/// deleted. Emits `contact.merged`.
#[utoipa::path(post, path = "/contacts/{id}/merge", operation_id = "merge_contact",
    tag = "Contacts",
    request_body = MergeBody,
    params(("id" = uuid::Uuid, Path, description = "The contact merged (and deleted)")),
    responses((status = 200, description = "Merged", body = ContactMerge)))]
async fn merge(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<MergeBody>,
) -> ApiResult<Json<ContactMerge>> {
    let (into,) = (required_id("into", body.into.as_deref()),).all_valid()?;
    let db = state.db.acting(principal.actor());
    let merged = sequence::merge(&db, &principal.tenant, id, into, state.clock.now()).await?;
    Ok(Json(ContactMerge {
        contact: merged.contact,
        merged_contact_id: id,
        moved_tickets: merged.moved_tickets,
        moved_chats: merged.moved_chats,
    }))
}
