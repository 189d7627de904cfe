//! The job that runs a person's data request (`contact.request` in the
//! outbox): an erasure (`sequences::erasure`) or an export
//! (`sequences::export`), its state and progress kept on the request's row
//! for `GET /jobs/{id}`. A request that fails is marked failed with the
//! reason; an erasure asked again after a failure starts over, and every
//! step of it can run twice.

use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::attachments::Storage;
use crate::config::Config;
use crate::contacts::model::{JobKind, JobState};
use crate::contacts::store::jobs::{self, RequestPayload};
use crate::db::Db;
use crate::error::StoreError;
use crate::outbox::{JobHandler, store::Job};
use crate::sequences::{erasure, export};
use crate::time::Clock;

pub use crate::contacts::store::jobs::JOB_KIND;

/// Runs data requests with the node's storage and mail directory.
pub struct RequestJob {
    storage: Storage,
    mail_dir: PathBuf,
}

impl RequestJob {
    pub fn new(config: &Config) -> anyhow::Result<RequestJob> {
        Ok(RequestJob {
            storage: Storage::configured(config.s3.as_ref(), &config.data_dir)?,
            mail_dir: config.data_dir.join("mail"),
        })
    }

    /// Runs the request `job` carries and ends the job; false when its
    /// lease was lost.
    pub async fn run_request(&self, db: &Db, clock: &Clock, job: &Job) -> Result<bool, StoreError> {
        let payload: Option<RequestPayload> = serde_json::from_value(job.payload.0.clone()).ok();
        if let Some(payload) = payload {
            let id = payload.job_id;
            let outcome = match self.request(db, clock, payload).await {
                Ok(archive) => Ok(archive),
                Err(err) => {
                    tracing::error!(error = %err, job = %id, "a data request failed");
                    Err(err.to_string())
                }
            };
            jobs::finish(db, id, outcome, clock.now()).await?;
        }
        let mut tx = db.begin().await?;
        let ended = crate::outbox::store::finish(&mut tx, job).await?;
        tx.commit().await?;
        Ok(ended)
    }

    async fn request(
        &self,
        db: &Db,
        clock: &Clock,
        payload: RequestPayload,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let (tenant, request) = jobs::find_any(db, payload.job_id).await?;
        // The request's changes (an erasure's tombstones, its audit entry
        // and event) are made by whoever asked for it.
        let acting = match payload.requested_by {
            Some(actor) => db.acting(actor),
            None => db.clone(),
        };
        let db = &acting;
        jobs::progress(db, request.id, JobState::Running, 0, clock.now()).await?;
        match request.kind {
            JobKind::Erase => {
                let places = erasure::Places {
                    storage: &self.storage,
                    mail_dir: &self.mail_dir,
                };
                let job = Some(request.id);
                erasure::erase(db, clock, &places, &tenant, request.contact_id, job).await?;
                Ok(None)
            }
            JobKind::Export => {
                let (storage, contact) = (&self.storage, request.contact_id);
                let job = Some(request.id);
                let archive = export::archive(db, clock, storage, &tenant, contact, job).await?;
                Ok(Some(archive))
            }
        }
    }
}

impl JobHandler for RequestJob {
    /// An erasure of a large contact runs many batches in one attempt.
    fn lease(&self) -> Duration {
        Duration::from_secs(30 * 60)
    }

    fn run<'a>(
        &'a self,
        db: &'a Db,
        clock: &'a Clock,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.run_request(db, clock, job))
    }
}
