//! How much visitors' unattached uploads may hold: per chat session and per
//! company, so one chat, or many chats from one place, cannot fill storage
//! with files no message names. What is left bounds an upload before it
//! streams (`room`), and the upload is checked again when it is recorded
//! (`check`, in the recording transaction, one company's uploads taking
//! turns), so uploads racing each other cannot pass the quota together.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Backend, On, Query, Tx};
use crate::error::StoreError;

/// The most bytes visitors' unattached uploads may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisitorQuota {
    /// Of one chat session.
    pub session: u64,
    /// Of all the chat sessions of one company (both modes).
    pub company: u64,
}

/// Which quota bounds an upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Session,
    Company,
}

/// The room left for one more upload of a session, and which quota leaves
/// the least.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    pub bytes: u64,
    pub bound: Bound,
    /// That quota's size.
    pub limit: u64,
}

/// What the session's and the company's unattached visitor uploads hold.
#[derive(Debug, Clone, Copy, sqlx::FromRow)]
struct Held {
    session: i64,
    company: i64,
}

impl VisitorQuota {
    fn room(&self, held: Held) -> Room {
        let taken = |bytes: i64| u64::try_from(bytes).unwrap_or(0);
        let session = self.session.saturating_sub(taken(held.session));
        let company = self.company.saturating_sub(taken(held.company));
        if session <= company {
            Room {
                bytes: session,
                bound: Bound::Session,
                limit: self.session,
            }
        } else {
            Room {
                bytes: company,
                bound: Bound::Company,
                limit: self.company,
            }
        }
    }
}

/// The room `quota` leaves for one more upload of `session`.
pub async fn room<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    session: Uuid,
    quota: VisitorQuota,
) -> Result<Room, StoreError> {
    Ok(quota.room(held(on, tenant, session).await?))
}

/// In the transaction recording an upload of `size` bytes for `session`:
/// the quota it would cross, if any. On Postgres the company's row is
/// locked until commit, so its visitor uploads are recorded one at a time
/// (SQLite's write transaction already is); NO KEY UPDATE does not block
/// inserts that reference the company.
pub(crate) async fn check(
    tx: &mut Tx,
    tenant: &Tenant,
    session: Uuid,
    size: u64,
    quota: VisitorQuota,
) -> Result<Option<Room>, StoreError> {
    if tx.backend() == Backend::Postgres {
        Query::new("SELECT id FROM companies WHERE id = $1 FOR NO KEY UPDATE")
            .bind(tenant.company_id)
            .execute(&mut *tx)
            .await?;
    }
    let room = room(&mut *tx, tenant, session, quota).await?;
    Ok((size > room.bytes).then_some(room))
}

async fn held<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    session: Uuid,
) -> Result<Held, StoreError> {
    // SUM of a BIGINT is NUMERIC on Postgres: cast back.
    Query::new(
        "SELECT CAST(COALESCE(SUM(CASE WHEN session_id = $1 THEN size ELSE 0 END), 0) AS BIGINT) \
         AS session, CAST(COALESCE(SUM(size), 0) AS BIGINT) AS company FROM attachments \
         WHERE company_id = $2 AND session_id IS NOT NULL AND ticket_id IS NULL \
         AND comment_id IS NULL AND message_id IS NULL",
    )
    .bind(session)
    .bind(tenant.company_id)
    .fetch_one(on)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTA: VisitorQuota = VisitorQuota {
        session: 100,
        company: 1_000,
    };

    #[test]
    fn the_room_is_what_the_tighter_quota_leaves() {
        let room = QUOTA.room(Held {
            session: 30,
            company: 950,
        });
        assert_eq!(
            room,
            Room {
                bytes: 50,
                bound: Bound::Company,
                limit: 1_000
            }
        );
        let room = QUOTA.room(Held {
            session: 120,
            company: 120,
        });
        assert_eq!(
            room,
            Room {
                bytes: 0,
                bound: Bound::Session,
                limit: 100
            }
        );
    }
}
