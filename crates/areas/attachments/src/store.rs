//! SQL for attachments. An upload writes its object row (one per company
//! and SHA-256) and its own attachment row together; records claim
//! unattached uploads inside their own transactions. What the sweeper and
//! the deletes of records read and delete is in `cleanup`.

use std::collections::HashMap;

use uuid::Uuid;

pub use super::cleanup::{
    delete_orphans, drop_object, hashes_of_sessions, hashes_of_ticket, unnamed_objects,
};
use super::links::Signer;
use super::model::{Attachment, AttachmentRef};
use super::quota::{self, Room, VisitorQuota};
use crate::auth::Tenant;
use crate::db::{Db, On, Query, TeamOwned, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};

const SELECT: &str = "SELECT a.id, a.company_id, a.filename, a.content_type, a.size, a.sha256, \
     a.session_id, a.created_at FROM attachments a";

/// An upload as the store holds it: the answer's fields and where its
/// bytes are.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Stored {
    pub id: Uuid,
    pub company_id: Uuid,
    pub filename: String,
    pub content_type: String,
    pub size: i64,
    pub sha256: String,
    /// The chat session a visitor uploaded it for.
    pub session_id: Option<Uuid>,
    pub created_at: Timestamp,
}

impl From<Stored> for Attachment {
    fn from(row: Stored) -> Self {
        Attachment {
            id: row.id,
            filename: row.filename,
            content_type: row.content_type,
            size: row.size,
            sha256: row.sha256,
            created_at: row.created_at,
        }
    }
}

/// A finished upload to record.
#[derive(Debug, Clone)]
pub struct NewAttachment {
    pub filename: String,
    pub content_type: String,
    pub size: i64,
    pub sha256: String,
    pub session_id: Option<Uuid>,
}

/// The record an upload is attached to.
#[derive(Debug, Clone, Copy)]
pub enum Owner {
    Ticket(Uuid),
    Comment(Uuid),
    /// A chat message, and its session (a visitor's upload fits only
    /// there). `session_only`: only the session's visitor uploads fit (a
    /// message a visitor sends with its token).
    Message {
        id: Uuid,
        session: Uuid,
        session_only: bool,
    },
}

/// The kinds of record attachments go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ticket,
    Comment,
    Message,
}

impl Kind {
    fn column(self) -> &'static str {
        match self {
            Kind::Ticket => "ticket_id",
            Kind::Comment => "comment_id",
            Kind::Message => "message_id",
        }
    }
}

impl Owner {
    fn kind(self) -> Kind {
        match self {
            Owner::Ticket(_) => Kind::Ticket,
            Owner::Comment(_) => Kind::Comment,
            Owner::Message { .. } => Kind::Message,
        }
    }

    fn id(self) -> Uuid {
        match self {
            Owner::Ticket(id) | Owner::Comment(id) | Owner::Message { id, .. } => id,
        }
    }
}

/// Records an upload, or answers the room `quota` left when a visitor's
/// upload would cross it (nothing recorded). The object row is written
/// with `DO UPDATE` so that it is locked until commit: a sweeper deleting
/// the same bytes waits for this upload, or this upload waits for the
/// sweeper and writes a new row. Stamped `now` (the node's clock).
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewAttachment,
    quota: Option<VisitorQuota>,
    now: Timestamp,
) -> Result<Result<Stored, Room>, StoreError> {
    let mut tx = db.begin().await?;
    if let (Some(quota), Some(session)) = (quota, new.session_id) {
        let size = u64::try_from(new.size).unwrap_or(u64::MAX);
        if let Some(room) = quota::check(&mut tx, tenant, session, size, quota).await? {
            return Ok(Err(room));
        }
    }
    let stored = create_in(&mut tx, tenant, new, now).await?;
    tx.commit().await?;
    Ok(Ok(stored))
}

/// `create`'s rows inside a transaction of the caller's (an incoming
/// email's files, recorded with its comment), without a visitor's quota.
pub async fn create_in(
    tx: &mut Tx,
    tenant: &Tenant,
    new: NewAttachment,
    now: Timestamp,
) -> Result<Stored, StoreError> {
    Query::new(
        "INSERT INTO attachment_objects (company_id, sha256, size, created_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (company_id, sha256) \
         DO UPDATE SET size = excluded.size",
    )
    .bind(tenant.company_id)
    .bind(&new.sha256)
    .bind(new.size)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let id = new_id();
    Query::new(
        "INSERT INTO attachments (id, company_id, mode, filename, content_type, size, sha256, \
         session_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(&new.filename)
    .bind(&new.content_type)
    .bind(new.size)
    .bind(&new.sha256)
    .bind(new.session_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    find(&mut *tx, tenant, id).await
}

/// The tenant's upload `id`; another tenant's is NotFound, and so is one
/// on a record outside the tenant's teams when it is limited to them.
pub async fn find<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
) -> Result<Stored, StoreError> {
    visible(
        Query::new(SELECT)
            .push(" WHERE a.id = ")
            .push_bind(id)
            .push(" AND ")
            .push_tenant(tenant, "a"),
        tenant,
    )
    .fetch_one(on)
    .await
}

/// Narrows uploads `a` to those the tenant sees: a tenant limited to teams
/// sees one on a ticket, comment, chat message or visitor's chat session of
/// its teams, and an upload not yet on any record (which belongs to no team
/// until a record names it).
fn visible(query: Query, tenant: &Tenant) -> Query {
    query
        .push_visible_or_none(tenant, TeamOwned::Ticket, "a.ticket_id")
        .push_visible_or_none(tenant, TeamOwned::Comment, "a.comment_id")
        .push_visible_or_none(tenant, TeamOwned::ChatMessage, "a.message_id")
        .push_visible_or_none(tenant, TeamOwned::ChatSession, "a.session_id")
}

/// Upload `id` whoever owns it: for signed links, whose signature is the
/// permission.
pub async fn find_signed(db: &Db, id: Uuid) -> Result<Stored, StoreError> {
    Query::new(SELECT)
        .push(" WHERE a.id = ")
        .push_bind(id)
        .fetch_one(db)
        .await
}

/// The kind of record the tenant's upload `id` is attached to; `None`
/// when it is unattached or not the tenant's.
pub async fn owner_kind(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Option<Kind>, StoreError> {
    let found: Option<(bool, bool, bool)> = visible(
        Query::new(
            "SELECT ticket_id IS NOT NULL, comment_id IS NOT NULL, message_id IS NOT NULL \
             FROM attachments a WHERE a.id = ",
        )
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "a"),
        tenant,
    )
    .fetch_optional(db)
    .await?;
    Ok(match found {
        Some((true, _, _)) => Some(Kind::Ticket),
        Some((_, true, _)) => Some(Kind::Comment),
        Some((_, _, true)) => Some(Kind::Message),
        _ => None,
    })
}

/// Removes an upload whose bytes could not be stored after all.
pub async fn forget(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    Query::new("DELETE FROM attachments WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute(db)
        .await
}

/// Attaches `ids` to `owner` in the caller's transaction. Each must be an
/// unattached upload of the tenant (a visitor's only on a message of its
/// session); otherwise nothing is attached and the error names
/// `field`.
pub async fn attach(
    tx: &mut Tx,
    tenant: &Tenant,
    owner: Owner,
    ids: &[Uuid],
    field: &str,
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    let mut query = Query::new(format!(
        "UPDATE attachments SET {} = ",
        owner.kind().column()
    ))
    .push_bind(owner.id())
    .push(" WHERE id IN ")
    .push_bind_list(ids.iter().copied())
    .push(" AND ticket_id IS NULL AND comment_id IS NULL AND message_id IS NULL AND ");
    query = match owner {
        Owner::Message {
            session,
            session_only: true,
            ..
        } => query.push("session_id = ").push_bind(session).push(" AND "),
        Owner::Message { session, .. } => query
            .push("(session_id IS NULL OR session_id = ")
            .push_bind(session)
            .push(") AND "),
        _ => query.push("session_id IS NULL AND "),
    };
    let attached = query
        .push_tenant(tenant, "")
        .rows_affected(&mut *tx)
        .await?;
    if attached != ids.len() as u64 {
        return Err(StoreError::InvalidReference {
            field: field.to_string(),
            message: "each id must be an unattached upload of this company and mode".into(),
        });
    }
    Ok(())
}

#[derive(sqlx::FromRow)]
struct RefRow {
    owner: Uuid,
    id: Uuid,
    filename: String,
    content_type: String,
    size: i64,
}

impl RefRow {
    fn signed(self, signer: &Signer) -> AttachmentRef {
        AttachmentRef::signed(self.id, self.filename, self.content_type, self.size, signer)
    }
}

/// The attachments of one record, oldest first, with links from `signer`.
pub async fn of<'c>(
    on: impl Into<On<'c>>,
    owner: Owner,
    signer: &Signer,
) -> Result<Vec<AttachmentRef>, StoreError> {
    let mut found = of_each(on, owner.kind(), &[owner.id()], signer).await?;
    Ok(found.remove(&owner.id()).unwrap_or_default())
}

/// The attachments of each of `records` (of `kind`), oldest first, with
/// links from `signer`; records without any are absent.
pub async fn of_each<'c>(
    on: impl Into<On<'c>>,
    kind: Kind,
    records: &[Uuid],
    signer: &Signer,
) -> Result<HashMap<Uuid, Vec<AttachmentRef>>, StoreError> {
    let mut found: HashMap<Uuid, Vec<AttachmentRef>> = HashMap::new();
    if records.is_empty() {
        return Ok(found);
    }
    let column = kind.column();
    // A ticket's own attachments are those not on one of its comments.
    let own = match kind {
        Kind::Ticket => " AND comment_id IS NULL",
        _ => "",
    };
    let rows: Vec<RefRow> = Query::new(format!(
        "SELECT {column} AS owner, id, filename, content_type, size FROM attachments \
         WHERE {column} IN "
    ))
    .push_bind_list(records.iter().copied())
    .push(own)
    .push(" ORDER BY created_at, id")
    .fetch_all(on)
    .await?;
    for row in rows {
        found.entry(row.owner).or_default().push(row.signed(signer));
    }
    Ok(found)
}
