//! SQL for `idempotency_keys`. Every write after the claim names the claim
//! token it holds, so a request that lost its row (taken over after its
//! lease) can change nothing.
//!
//! Times come from the database's clock, like the outbox's leases: nodes
//! whose clocks disagree still agree on when a stalled request's lease has
//! passed and when a record has expired.

use uuid::Uuid;

use crate::auth::Tenant;
use std::time::Duration;

use crate::db::{Backend, Db, Query, Tx, millis};
use crate::error::StoreError;

crate::text_enum! {
    /// Where a key's request stands.
    pub enum KeyState {
        /// Claimed; its change (if any) has not committed.
        Running = "running",
        /// Its change committed; the answer is not stored yet.
        Applied = "applied",
        /// The answer is stored and is replayed.
        Completed = "completed",
    }
}

/// What a request is: a repeat must match all three.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestIdentity {
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Hex SHA-256 of the body.
    pub fingerprint: String,
}

/// The row of one key.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct KeyRecord {
    pub method: String,
    pub path: String,
    pub fingerprint: String,
    /// Who sent the request ([`super::Caller::recorded`]).
    pub principal: String,
    pub state: KeyState,
    pub claim_token: Uuid,
    pub response_status: Option<i32>,
    pub response_content_type: Option<String>,
    pub response_body: Option<Vec<u8>>,
    /// Whether `lease_until` has passed, by the database's clock.
    pub lease_passed: bool,
    /// Whether `expires_at` has passed, by the database's clock.
    pub expired: bool,
}

impl KeyRecord {
    /// Whether `claim`'s sender is the one that sent the recorded request.
    pub fn sent_by(&self, claim: &Claim) -> bool {
        self.principal == claim.principal
    }

    pub fn names(&self, request: &RequestIdentity) -> bool {
        self.method == request.method
            && self.path == request.path
            && self.fingerprint == request.fingerprint
    }
}

/// A claim held by one request: the row's key and the token it wrote.
#[derive(Debug, Clone)]
pub struct Claim {
    pub tenant: Tenant,
    /// Who sends the request ([`super::Caller::recorded`]).
    pub principal: String,
    pub key: String,
    pub token: Uuid,
}

/// How long a claim's lease and its record last, from the database's now.
#[derive(Debug, Clone, Copy)]
pub struct Terms {
    pub lease: Duration,
    pub ttl: Duration,
}

/// The answer to store.
pub struct StoredAnswer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

/// The row a write of the key's own rows reads from (`FROM …`). Each such
/// write runs alone, committed by itself; on Postgres the row is a
/// `set_config` of `synchronous_commit`, local to that statement's own
/// transaction, so its commit does not wait for the WAL flush. These
/// writes are bookkeeping around the change, whose own (synchronous)
/// commit flushes every earlier record, so a claim is durable whenever its
/// change is; an answer lost in a crash leaves the row `applied`, which is
/// answered as a lost response, never run again. It spares two disk
/// flushes per request, and the statement in place of BEGIN, SET LOCAL,
/// the write and COMMIT spares six round trips. SQLite has no such
/// setting: the write reads no row.
fn unflushed(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => {
            " FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed"
        }
        Backend::Sqlite => "",
    }
}

/// Inserts a running row for `claim` unless the key has one: true when it
/// was inserted, else the existing row (None if it vanished meanwhile).
pub async fn claim(
    db: &Db,
    claim: &Claim,
    request: &RequestIdentity,
    terms: Terms,
) -> Result<Result<(), Option<KeyRecord>>, StoreError> {
    let backend = db.backend();
    // `WHERE TRUE`: SQLite reads `SELECT … ON CONFLICT` as a join's ON
    // without it.
    let inserted = Query::new(format!(
        "INSERT INTO idempotency_keys (company_id, mode, idempotency_key, method, path, \
         fingerprint, state, claim_token, lease_until, created_at, expires_at, principal) \
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, {lease_until}, {now}, {expires_at}, $11{from} \
         WHERE TRUE ON CONFLICT (company_id, mode, idempotency_key) DO NOTHING",
        lease_until = backend.now_plus_sql("$9"),
        now = backend.now_sql(),
        expires_at = backend.now_plus_sql("$10"),
        from = unflushed(backend),
    ))
    .bind_tenant(&claim.tenant)
    .bind(&claim.key)
    .bind(&request.method)
    .bind(&request.path)
    .bind(&request.fingerprint)
    .bind(KeyState::Running)
    .bind(claim.token)
    .bind(millis(terms.lease))
    .bind(millis(terms.ttl))
    .bind(&claim.principal)
    .rows_affected(db)
    .await?;
    Ok(if inserted == 1 {
        Ok(())
    } else {
        Err(find(db, &claim.tenant, &claim.key).await?)
    })
}

async fn find(db: &Db, tenant: &Tenant, key: &str) -> Result<Option<KeyRecord>, StoreError> {
    let now = db.backend().now_sql();
    Query::new(format!(
        "SELECT method, path, fingerprint, principal, state, claim_token, response_status, \
         response_content_type, response_body, lease_until <= {now} AS lease_passed, \
         expires_at <= {now} AS expired FROM idempotency_keys \
         WHERE idempotency_key = $1 AND ",
    ))
    .bind(key)
    .push_tenant(tenant, "")
    .fetch_optional(db)
    .await
}

/// Makes `claim` the holder of a row that `previous` (its state and token
/// as read) no longer holds: an expired record or a running request whose
/// lease passed (of the same sender). False when the row changed since it
/// was read.
pub async fn take_over(
    db: &Db,
    claim: &Claim,
    previous: &KeyRecord,
    request: &RequestIdentity,
    terms: Terms,
) -> Result<bool, StoreError> {
    let backend = db.backend();
    let changed = Query::new(format!(
        "UPDATE idempotency_keys SET method = $1, path = $2, fingerprint = $3, state = $4, \
         claim_token = $5, principal = $11, lease_until = {lease_until}, response_status = NULL, \
         response_content_type = NULL, response_body = NULL, created_at = {now}, \
         expires_at = {expires_at}{from} \
         WHERE idempotency_key = $8 AND claim_token = $9 AND state = $10 AND ",
        lease_until = backend.now_plus_sql("$6"),
        now = backend.now_sql(),
        expires_at = backend.now_plus_sql("$7"),
        from = unflushed(backend),
    ))
    .bind(&request.method)
    .bind(&request.path)
    .bind(&request.fingerprint)
    .bind(KeyState::Running)
    .bind(claim.token)
    .bind(millis(terms.lease))
    .bind(millis(terms.ttl))
    .bind(&claim.key)
    .bind(previous.claim_token)
    .bind(previous.state)
    .bind(&claim.principal)
    .push_tenant(&claim.tenant, "")
    .rows_affected(db)
    .await?;
    Ok(changed == 1)
}

/// Inside the transaction of the request's change: marks the row applied,
/// false when `claim` no longer holds it.
pub async fn mark_applied(tx: &mut Tx, claim: &Claim) -> Result<bool, StoreError> {
    let changed = Query::new(
        "UPDATE idempotency_keys SET state = $1 \
         WHERE idempotency_key = $2 AND claim_token = $3 AND ",
    )
    .bind(KeyState::Applied)
    .bind(&claim.key)
    .bind(claim.token)
    .push_tenant(&claim.tenant, "")
    .rows_affected(tx)
    .await?;
    Ok(changed == 1)
}

/// `mark_applied` as a CTE `{name}` of a statement of the change's
/// transaction: a row when `claim` still holds the row.
pub fn push_mark_applied(query: Query, claim: &Claim, name: &str) -> Query {
    query
        .push(&format!(
            ", {name} AS (UPDATE idempotency_keys SET state = "
        ))
        .push_bind(KeyState::Applied)
        .push(" WHERE idempotency_key = ")
        .push_bind(claim.key.as_str())
        .push(" AND claim_token = ")
        .push_bind(claim.token)
        .push(" AND ")
        .push_tenant(&claim.tenant, "")
        .push(" RETURNING 1)")
}

/// Stores the answer of the request holding `claim`.
pub async fn complete(db: &Db, claim: &Claim, answer: StoredAnswer) -> Result<(), StoreError> {
    Query::new(format!(
        "UPDATE idempotency_keys SET state = $1, response_status = $2, \
         response_content_type = $3, response_body = $4{from} \
         WHERE idempotency_key = $5 AND claim_token = $6 AND ",
        from = unflushed(db.backend()),
    ))
    .bind(KeyState::Completed)
    .bind(i64::from(answer.status))
    .bind(answer.content_type)
    .bind(answer.body)
    .bind(&claim.key)
    .bind(claim.token)
    .push_tenant(&claim.tenant, "")
    .execute(db)
    .await
}

/// Frees the key of a request that changed nothing and whose answer is
/// not kept (401, 403, 429, 5xx): the client may retry with it. Rare, so
/// an ordinary commit.
pub async fn release(db: &Db, claim: &Claim) -> Result<(), StoreError> {
    Query::new(
        "DELETE FROM idempotency_keys WHERE idempotency_key = $1 AND claim_token = $2 \
         AND state = $3 AND ",
    )
    .bind(&claim.key)
    .bind(claim.token)
    .bind(KeyState::Running)
    .push_tenant(&claim.tenant, "")
    .execute(db)
    .await
}

/// Deletes the tenant's stored answers that name `person` (a replayed
/// answer would otherwise bring an erased person back); a retry of such a
/// request runs again. Answers how many.
pub async fn erase_mentions(
    tx: &mut Tx,
    tenant: &Tenant,
    person: &crate::erasure::Person,
) -> Result<u64, StoreError> {
    if person.is_empty() {
        return Ok(0);
    }
    // The body is bytes: read as text (Postgres escapes what is not
    // printable, which the words of a person are not).
    let body = match tx.backend() {
        Backend::Postgres => "coalesce(encode(response_body, 'escape'), '')",
        Backend::Sqlite => "coalesce(CAST(response_body AS TEXT), '')",
    };
    let query = Query::new("DELETE FROM idempotency_keys WHERE ")
        .push_tenant(tenant, "")
        .push(" AND ");
    person.push_mentions(query, body).rows_affected(tx).await
}
