//! SQL for a person's data requests (`contact_jobs`): an export or an
//! erasure as a job whose state and progress callers read, the export's
//! archive kept until its one download, and the erasure a second request
//! finds done.

use uuid::Uuid;

use crate::audit::{self, Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::model::{DataJob, JobKind, JobState};
use crate::time::{Timestamp, new_id};

const COLUMNS: &str = "id, contact_id, kind, state, progress, error, \
     (archive IS NOT NULL) AS ready, downloaded_at, created_at, updated_at";

#[derive(sqlx::FromRow)]
struct JobRow {
    id: Uuid,
    contact_id: Uuid,
    kind: JobKind,
    state: JobState,
    progress: i64,
    error: Option<String>,
    ready: bool,
    downloaded_at: Option<Timestamp>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl JobRow {
    fn job(self) -> Result<DataJob, StoreError> {
        Ok(DataJob {
            id: self.id,
            contact_id: self.contact_id,
            kind: self.kind,
            state: self.state,
            progress: self.progress,
            error: self.error,
            archive_ready: self.ready,
            downloaded_at: self.downloaded_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// Records a queued job of `kind` for the tenant's contact `contact` in
/// `tx`; answers its id.
pub async fn create(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    kind: JobKind,
    now: Timestamp,
) -> Result<Uuid, StoreError> {
    let id = new_id();
    Query::new(
        "INSERT INTO contact_jobs (id, company_id, mode, contact_id, kind, state, progress, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(contact)
    .bind(kind.as_str())
    .bind(JobState::Queued.as_str())
    .bind(now)
    .execute(tx)
    .await?;
    Ok(id)
}

/// The tenant's job `id`.
pub async fn find(db: &Db, tenant: &Tenant, id: Uuid) -> Result<DataJob, StoreError> {
    let row: JobRow = Query::new(format!(
        "SELECT {COLUMNS} FROM contact_jobs WHERE id = $1 AND "
    ))
    .bind(id)
    .push_tenant(tenant, "contact_jobs")
    .fetch_one(db)
    .await?;
    row.job()
}

/// Job `id` whatever its tenant, with its tenant (for the worker).
pub async fn find_any(db: &Db, id: Uuid) -> Result<(Tenant, DataJob), StoreError> {
    let (company, mode): (Uuid, crate::auth::Mode) =
        Query::new("SELECT company_id, mode FROM contact_jobs WHERE id = $1")
            .bind(id)
            .fetch_one(db)
            .await?;
    let tenant = Tenant::new(company, mode);
    let job = find(db, &tenant, id).await?;
    Ok((tenant, job))
}

/// The erasure of the tenant's contact `contact` already asked for, if any.
pub async fn erasure_of(
    db: &Db,
    tenant: &Tenant,
    contact: Uuid,
) -> Result<Option<DataJob>, StoreError> {
    let row: Option<JobRow> = Query::new(format!(
        "SELECT {COLUMNS} FROM contact_jobs WHERE contact_id = $1 AND kind = 'erase' \
         AND state <> 'failed' AND "
    ))
    .bind(contact)
    .push_tenant(tenant, "contact_jobs")
    .push(" ORDER BY created_at LIMIT 1")
    .fetch_optional(db)
    .await?;
    row.map(JobRow::job).transpose()
}

/// Sets job `id`'s state and progress (percent).
pub async fn progress(
    db: &Db,
    id: Uuid,
    state: JobState,
    progress: i64,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new("UPDATE contact_jobs SET state = $2, progress = $3, updated_at = $4 WHERE id = $1")
        .bind(id)
        .bind(state.as_str())
        .bind(progress.clamp(0, 100))
        .bind(now)
        .execute(db)
        .await
}

/// Ends job `id`: done with its archive (an export's), or failed.
pub async fn finish(
    db: &Db,
    id: Uuid,
    outcome: Result<Option<Vec<u8>>, String>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let (state, archive, error) = match outcome {
        Ok(archive) => (JobState::Done, archive, None),
        Err(error) => (JobState::Failed, None, Some(error)),
    };
    let progress: i64 = if state == JobState::Done { 100 } else { 0 };
    Query::new(
        "UPDATE contact_jobs SET state = $2, progress = $3, archive = $4, error = $5, \
         updated_at = $6 WHERE id = $1",
    )
    .bind(id)
    .bind(state.as_str())
    .bind(progress)
    .bind(archive)
    .bind(error)
    .bind(now)
    .execute(db)
    .await
}

/// Takes the archive of export `id` (no tenant: the signed link names the
/// job): answers it once, after which it is gone.
pub async fn take_archive(db: &Db, id: Uuid, now: Timestamp) -> Result<Vec<u8>, StoreError> {
    let mut tx = db.begin().await?;
    let claimed = Query::new(
        "UPDATE contact_jobs SET downloaded_at = $2 WHERE id = $1 AND kind = 'export' \
         AND archive IS NOT NULL AND downloaded_at IS NULL",
    )
    .bind(id)
    .bind(now)
    .rows_affected(&mut tx)
    .await?;
    if claimed == 0 {
        return Err(StoreError::NotFound);
    }
    let (archive, company, contact): (Vec<u8>, Uuid, Uuid) =
        Query::new("SELECT archive, company_id, contact_id FROM contact_jobs WHERE id = $1")
            .bind(id)
            .fetch_one(&mut tx)
            .await?;
    // The link has no caller of its own: it was given to whoever asked
    // for the export, who is named (the request's address and agent are
    // the download's).
    let (target, changes) = export_entry(contact, id);
    let requester = audit::maker_of(&mut tx, company, Action::ExportRequested, &target, &changes);
    if let Some(requester) = requester.await? {
        tx.act_as(requester);
    }
    let action = Action::ExportDownloaded;
    audit::record(&mut tx, company, now, action, target, changes).await?;
    Query::new("UPDATE contact_jobs SET archive = NULL WHERE id = $1")
        .bind(id)
        .execute(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(archive)
}

/// Drops the archives of the contact's exports not yet downloaded: an
/// erasure leaves no copy of the person behind.
pub async fn drop_archives(tx: &mut Tx, tenant: &Tenant, contact: Uuid) -> Result<u64, StoreError> {
    Query::new("UPDATE contact_jobs SET archive = NULL WHERE contact_id = $1 AND ")
        .bind(contact)
        .push_tenant(tenant, "contact_jobs")
        .push(" AND archive IS NOT NULL")
        .rows_affected(tx)
        .await
}

/// The outbox job kind that runs a data request.
pub const JOB_KIND: &str = "contact.request";

/// What the outbox job of a data request carries: the request's id and
/// who asked for it (the key or agent its changes and audit entry name),
/// so no queue row names the person.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPayload {
    pub job_id: Uuid,
    /// Absent in a job queued before requesters were recorded: the service.
    #[serde(default)]
    pub requested_by: Option<crate::actor::Actor>,
}

/// Asks for `kind` on the tenant's contact `contact`: the request's row
/// and its outbox job, in one transaction; the job acts as `db`'s actor. An erasure asked for before
/// (running or done) is answered again, whether or not the contact still
/// exists: a second erasure does nothing. Otherwise NotFound unless the
/// contact exists.
pub async fn request(
    db: &Db,
    tenant: &Tenant,
    contact: Uuid,
    kind: JobKind,
    now: Timestamp,
) -> Result<DataJob, StoreError> {
    if kind == JobKind::Erase
        && let Some(job) = erasure_of(db, tenant, contact).await?
    {
        return Ok(job);
    }
    let mut tx = db.begin().await?;
    super::find(&mut tx, tenant, contact).await?;
    let id = create(&mut tx, tenant, contact, kind, now).await?;
    if kind == JobKind::Export {
        requested(&mut tx, tenant, contact, id, now).await?;
    }
    let requested_by = Some(tx.actor().clone());
    crate::outbox::enqueue(
        &mut tx,
        JOB_KIND,
        Some(tenant),
        &RequestPayload {
            job_id: id,
            requested_by,
        },
    )
    .await?;
    tx.commit().await?;
    find(db, tenant, id).await
}

/// Records an export of the tenant's contact `contact` that its caller
/// runs itself (the command line), with no outbox job; NotFound unless
/// the contact exists.
pub async fn record(
    db: &Db,
    tenant: &Tenant,
    contact: Uuid,
    now: Timestamp,
) -> Result<Uuid, StoreError> {
    let mut tx = db.begin().await?;
    super::find(&mut tx, tenant, contact).await?;
    let id = create(&mut tx, tenant, contact, JobKind::Export, now).await?;
    requested(&mut tx, tenant, contact, id, now).await?;
    tx.commit().await?;
    Ok(id)
}

/// The target and `changes` of the audit entries of export `job` of
/// contact `contact`: the person, and the export (`jobId`).
fn export_entry(contact: Uuid, job: Uuid) -> (Target, Changes) {
    let target = Target::new(TargetType::Contact, contact);
    (
        target,
        Changes::none().with("jobId", job.to_string().into()),
    )
}

/// Records that export `job` of the tenant's contact was asked for.
async fn requested(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    job: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    let (target, changes) = export_entry(contact, job);
    let action = Action::ExportRequested;
    audit::record(tx, tenant.company_id, now, action, target, changes).await
}
