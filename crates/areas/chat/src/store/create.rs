//! Creating a chat session, with its tags, custom field values and the
//! visitor's email confirmation, and its `chat.started`, which is also the
//! change feed's entry for the new session (so the automations' triggers,
//! which read the feed, see every chat start once, whoever started it).

use serde::Serialize;
use uuid::Uuid;

use super::SESSION_COLUMNS;
use super::contacts::ContactOf;
use crate::auth::Tenant;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Db, Query, Table, ensure_reference};
use crate::error::StoreError;
use crate::events::{self, EventName, EventPayload};
use crate::mail;
use crate::model::{NewSession, Session};
use crate::tags::store::{self as tag_store, Tagged};
use crate::teams::store as team_store;
use crate::time::Timestamp;
use vocab::visitor::Person;

/// Creates an ACTIVE session. The entity must be one of the company's; the
/// session joins `team` (a team of the tenant) or else the entity's default
/// team, if any. Created `now` (the node's clock), which orders the queue.
/// Its contact comes from `contacts`, in the session's transaction: the
/// one its visitor (verified identity, email) matches.
pub async fn create_session(
    db: &Db,
    tenant: &Tenant,
    new: &NewSession,
    team: Option<Uuid>,
    now: Timestamp,
    contacts: &dyn ContactOf,
) -> Result<Session, StoreError> {
    let mut tx = db.begin().await?;
    let entity = new.entity_id;
    ensure_reference(
        &mut tx,
        tenant.company_id,
        Table::Entities,
        entity,
        "entityId",
    )
    .await?;
    let team = match team {
        Some(team) => {
            team_store::ensure_team(&mut tx, tenant, team, "teamId").await?;
            Some(team)
        }
        None => team_store::default_team(&mut tx, tenant, entity).await?,
    };
    let person = Person {
        external_id: new
            .identity
            .external_id
            .clone()
            .filter(|_| new.identity.verified),
        email: new.visitor_email.clone(),
        email_verified: new.identity.email_verified,
        name: Some(new.visitor_name.clone()),
    };
    let contact_id = match person.is_unknown() {
        true => None,
        false => contacts.contact(&mut tx, &person).await?,
    };
    let session: Session = Query::new(format!(
        "INSERT INTO chat_sessions (id, company_id, mode, entity_id, status, visitor_name, \
         visitor_email, created_at, updated_at, team_id, visitor_external_id, \
         visitor_verified, email_verified, email_confirmation_hash, contact_id) \
         VALUES ($1, $2, $3, $4, 'ACTIVE', $5, $6, $7, $7, $8, $9, $10, $11, $12, $13) \
         RETURNING {SESSION_COLUMNS}"
    ))
    .bind(new.id)
    .bind_tenant(tenant)
    .bind(entity)
    .bind(&new.visitor_name)
    .bind(new.visitor_email.as_deref())
    .bind(now)
    .bind(team)
    .bind(new.identity.external_id.as_deref())
    .bind(new.identity.verified)
    .bind(new.identity.email_verified)
    .bind(
        new.identity
            .confirmation
            .as_ref()
            .map(|(hash, _)| hash.as_str()),
    )
    .bind(contact_id)
    .fetch_one(&mut tx)
    .await?;
    if let Some((_, email)) = &new.identity.confirmation {
        mail::queue(&mut tx, tenant, email).await?;
    }
    tag_store::replace(&mut tx, tenant, Tagged::ChatSession, session.id, &new.tags).await?;
    field_store::apply(
        &mut tx,
        tenant,
        Recorded::ChatSession,
        session.id,
        &new.custom_fields,
    )
    .await?;
    let (session, change) = super::session_as_recorded(&mut tx, tenant, session.id).await?;
    events::emit_change(&mut tx, tenant, &ChatStarted(&session), Some(&change), now).await?;
    tx.commit().await?;
    Ok(session)
}

/// `chat.started`: the session as it is once created.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ChatStarted<'a>(pub &'a Session);

impl EventPayload for ChatStarted<'_> {
    const NAME: EventName = EventName::ChatStarted;
}
