//! The email job: one attempt at sending a queued `Email`.

use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use futures::future::BoxFuture;

use super::relay::{ReplySending, Sending};
use super::send_error::SendError;
use super::{Email, Mailer, REPLY_JOB_KIND, Reply};
use crate::attachments::storage::Storage;
use crate::db::Db;
use crate::error::StoreError;
use crate::outbox::{self, Job, JobHandler, RetrySchedule};
use crate::time::Clock;

/// Sends queued emails: the outbox handler of [`super::JOB_KIND`].
pub struct EmailJob {
    mailer: Mailer,
    retry: RetrySchedule,
    /// Where a reply's files are read from.
    storage: Storage,
    /// Finds the DKIM key a reply is signed with and the SMTP server it
    /// leaves by.
    sending: Option<Arc<dyn ReplySending>>,
}

impl EmailJob {
    pub fn new(mailer: Mailer, retry: RetrySchedule, storage: Storage) -> Self {
        EmailJob {
            mailer,
            retry,
            storage,
            sending: None,
        }
    }

    /// Replies signed with the key, and sent through the server, that
    /// `sending` finds for them.
    pub fn with_sending(mut self, sending: impl ReplySending + 'static) -> Self {
        self.sending = Some(Arc::new(sending));
        self
    }

    /// A reply sent with its files' bytes; a file that cannot be read now
    /// (the storage unreachable) is a failure retried later.
    async fn send_reply(&self, db: &Db, reply: &Reply) -> Result<(), SendError> {
        let mut files = Vec::with_capacity(reply.attachments.len());
        for file in &reply.attachments {
            let key = Storage::object_key(file.company_id, &file.sha256);
            let read = async {
                let download = self
                    .storage
                    .read(&key, None)
                    .await
                    .map_err(std::io::Error::other)?;
                let chunks: Vec<_> = download.body.try_collect().await?;
                Ok::<_, std::io::Error>(chunks.concat())
            };
            let bytes = read
                .await
                .map_err(|e| SendError::transient(format!("reading {}: {e}", file.filename)))?;
            files.push(bytes);
        }
        let sending = match &self.sending {
            Some(sending) => sending.sending(db, reply).await,
            None => Sending::default(),
        };
        self.mailer.send_reply(reply, files, &sending).await
    }

    async fn send(&self, db: &Db, job: &Job) -> Result<bool, StoreError> {
        // A ticket's reply (its own kind) or any other email.
        let sent = match job.kind.as_str() {
            REPLY_JOB_KIND => match serde_json::from_value::<Reply>(job.payload.0.clone()) {
                Err(err) => Err(format!("unreadable email job: {err}")),
                Ok(reply) => Ok(self.send_reply(db, &reply).await),
            },
            _ => match serde_json::from_value::<Email>(job.payload.0.clone()) {
                Err(err) => Err(format!("unreadable email job: {err}")),
                Ok(email) => Ok(self.mailer.send(job.id, &email).await),
            },
        };
        let failure = match sent {
            Err(unreadable) => Some((unreadable, None)),
            Ok(sent) => match sent {
                Ok(()) => None,
                Err(err) => {
                    let retry_delay = (!err.permanent)
                        .then(|| self.retry.delay_after(job.attempt()))
                        .flatten();
                    Some((err.message, retry_delay))
                }
            },
        };
        crate::metrics::email_attempt(failure.is_none(), matches!(failure, Some((_, Some(_)))));
        if let Some((error, _)) = &failure {
            tracing::warn!(job = %job.id, attempt = job.attempt(), %error, "email not sent");
        }
        let mut tx = db.begin().await?;
        let held = match &failure {
            None => outbox::store::finish(&mut tx, job).await?,
            Some((error, Some(delay))) => outbox::store::retry(&mut tx, job, *delay, error)
                .await?
                .is_some(),
            Some((error, None)) => outbox::store::abandon(&mut tx, job, error).await?,
        };
        tx.commit().await?;
        Ok(held)
    }
}

impl JobHandler for EmailJob {
    /// Longer than the SMTP timeout.
    fn lease(&self) -> Duration {
        Duration::from_secs(120)
    }

    fn run<'a>(
        &'a self,
        db: &'a Db,
        _clock: &'a Clock,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.send(db, job))
    }
}
