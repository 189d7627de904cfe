//! Reading chat sessions (one, a page of them, a verified visitor's) and
//! their messages (all of a session's, or those after one, for a replay).

use uuid::Uuid;

use super::{MESSAGE_SELECT, SESSION_COLUMNS, load_session, with_attachments};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Db, Query, TeamOwned};
use crate::error::StoreError;
use crate::model::{Message, Session, SessionFilter};
use crate::paging::{After, COUNT_CAP, Order, Total, capped_count, push_after};
use crate::search::{Index, Search};
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::Timestamp;
use crate::validate::Page;

/// [`SESSION_COLUMNS`] qualified, for a list that may join search documents.
const SESSION_SELECT: &str = "chat_sessions.id, chat_sessions.entity_id, chat_sessions.status, \
     chat_sessions.visitor_name, chat_sessions.visitor_email, chat_sessions.created_at, \
     chat_sessions.updated_at, chat_sessions.closed_at, chat_sessions.custom_fields, \
     chat_sessions.team_id, chat_sessions.assignee_id, chat_sessions.assigned_at, \
     chat_sessions.visitor_external_id, chat_sessions.visitor_verified, \
     chat_sessions.email_verified, chat_sessions.version, chat_sessions.contact_id";

pub async fn find_session(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Session, StoreError> {
    load_session(db, tenant, id, "").await
}

/// The session search documents: visitor name, visitor email and message
/// bodies, ranked in that order (weights A to C on Postgres).
static SESSION_INDEX: Index = Index {
    documents: "chat_session_search",
    key: "session_id",
    fts: "chat_session_search_fts",
    ts_rank_weights: "{0.1, 0.2, 0.4, 1.0}",
    bm25_weights: "10.0, 4.0, 2.0",
};

/// A page of sessions, best match first when searching, then newest
/// first, read with one row more than `page.limit`, and the total matching
/// the filter (capped with tag filters or a search, see
/// `paging::capped_count`).
pub async fn list_sessions(
    db: &Db,
    tenant: &Tenant,
    filter: &SessionFilter,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<Session>, Total), StoreError> {
    let backend = db.backend();
    let search = filter.search.as_ref().map(|text| Search {
        index: &SESSION_INDEX,
        text,
        visible: None,
    });
    let matching = |select: &str| {
        let join = search.map_or(String::new(), |s| s.join(backend, "chat_sessions.id"));
        let mut query = Query::new(format!("{select} FROM chat_sessions{join} WHERE "))
            .push_tenant_in_teams(tenant, "chat_sessions", "team_id");
        if let Some(entity) = filter.entity_id {
            query = query.push(" AND entity_id = ").push_bind(entity);
        }
        if let Some(status) = filter.status {
            query = query.push(" AND status = ").push_bind(status);
        }
        if let Some(team) = filter.team_id {
            query = query.push(" AND team_id = ").push_bind(team);
        }
        let query =
            tag_store::push_filter(query, Tagged::ChatSession, "chat_sessions.id", &filter.tags);
        let query = field_store::push_filter(
            query,
            Recorded::ChatSession,
            "chat_sessions.id",
            &filter.custom_fields,
        );
        match search {
            Some(search) => {
                let (query, rank) = search.push_match(query, backend, tenant);
                (query, format!("{}, ", rank.order_term()))
            }
            None => (query, String::new()),
        }
    };
    let (query, rank) = matching(&format!("SELECT {SESSION_SELECT}"));
    let mut sessions: Vec<Session> = push_after(query, "chat_sessions", after, Order::NewestFirst)
        .push(&format!(
            " ORDER BY {rank}chat_sessions.created_at DESC, chat_sessions.id DESC LIMIT "
        ))
        .push_bind(page.limit + 1)
        .push(" OFFSET ")
        .push_bind(page.offset)
        .fetch_all(db)
        .await?;
    let total = if filter.tags.is_empty() && search.is_none() && filter.custom_fields.is_empty() {
        Total::exact(matching("SELECT COUNT(*)").0.fetch_scalar(db).await?)
    } else {
        capped_count(db, matching("SELECT 1").0, COUNT_CAP).await?
    };
    let ids: Vec<Uuid> = sessions.iter().map(|s| s.id).collect();
    let mut tags = tag_store::of_each(db, Tagged::ChatSession, &ids).await?;
    for session in &mut sessions {
        session.tags = tags.remove(&session.id).unwrap_or_default();
    }
    Ok((sessions, total))
}

/// A session's messages, oldest first.
pub async fn messages(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
    signer: &Signer,
) -> Result<Vec<Message>, StoreError> {
    let messages = Query::new(MESSAGE_SELECT)
        .push(" WHERE m.session_id = ")
        .push_bind(session_id)
        .push(" AND ")
        .push_tenant(tenant, "m")
        .push(" ORDER BY m.created_at, m.id")
        .fetch_all(db)
        .await?;
    with_attachments(db, messages, signer).await
}

/// Where a replay looks: one session, or every session of an entity.
#[derive(Debug, Clone, Copy)]
pub enum ReplayScope {
    Session(Uuid),
    Entity(Uuid),
}

/// Up to `limit` messages after message `since` (in `created_at`, `id`
/// order) in `scope`, oldest first. NotFound if `since` is not a message of
/// that scope.
pub async fn messages_after(
    db: &Db,
    tenant: &Tenant,
    scope: ReplayScope,
    since: Uuid,
    limit: i64,
    signer: &Signer,
) -> Result<Vec<Message>, StoreError> {
    // The anchor's time, read first: the page query compares with it.
    let in_scope = |query: Query| {
        let query = match scope {
            ReplayScope::Session(id) => query.push(" AND m.session_id = ").push_bind(id),
            ReplayScope::Entity(id) => query
                .push(" AND m.session_id IN (SELECT s.id FROM chat_sessions s WHERE s.entity_id = ")
                .push_bind(id)
                .push(" AND ")
                .push_tenant(tenant, "s")
                .push(")"),
        };
        // Only the sessions of the caller's teams, when it is limited to them.
        query.push_visible_or_none(tenant, TeamOwned::ChatSession, "m.session_id")
    };
    let anchor: Timestamp = in_scope(
        Query::new("SELECT m.created_at FROM chat_messages m WHERE m.id = ")
            .push_bind(since)
            .push(" AND ")
            .push_tenant(tenant, "m"),
    )
    .fetch_scalar(db)
    .await?;
    let mut page = in_scope(
        Query::new(MESSAGE_SELECT)
            .push(" WHERE ")
            .push_tenant(tenant, "m"),
    );
    let after = page.placeholder_for(anchor);
    let since = page.placeholder_for(since);
    let messages = page
        .push(&format!(
            " AND (m.created_at > {after} OR (m.created_at = {after} AND m.id > {since})) \
         ORDER BY m.created_at, m.id LIMIT "
        ))
        .push_bind(limit)
        .fetch_all(db)
        .await?;
    with_attachments(db, messages, signer).await
}

/// The sessions of a verified visitor (`external_id`) in one entity,
/// newest first, at most `limit`.
pub async fn visitor_sessions(
    db: &Db,
    tenant: &Tenant,
    entity_id: Uuid,
    external_id: &str,
    limit: i64,
) -> Result<Vec<Session>, StoreError> {
    Query::new(format!(
        "SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE "
    ))
    .push_tenant(tenant, "")
    .push(" AND entity_id = ")
    .push_bind(entity_id)
    .push(" AND visitor_external_id = ")
    .push_bind(external_id)
    .push(" AND visitor_verified = ")
    .push_bind(true)
    .push(" ORDER BY created_at DESC, id DESC LIMIT ")
    .push_bind(limit)
    .fetch_all(db)
    .await
}
