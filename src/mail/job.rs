//! The email job: one attempt at sending a queued `Email`.

use std::time::Duration;

use futures::future::BoxFuture;

use super::{Email, Mailer, REPLY_JOB_KIND, Reply};
use crate::db::Db;
use crate::error::StoreError;
use crate::outbox::{self, Job, JobHandler, RetrySchedule};
use crate::time::Clock;

/// Sends queued emails: the outbox handler of [`super::JOB_KIND`].
pub struct EmailJob {
    mailer: Mailer,
    retry: RetrySchedule,
}

impl EmailJob {
    pub fn new(mailer: Mailer, retry: RetrySchedule) -> Self {
        EmailJob { mailer, retry }
    }

    async fn send(&self, db: &Db, job: &Job) -> Result<bool, StoreError> {
        // A ticket's reply (its own kind) or any other email.
        let sent = match job.kind.as_str() {
            REPLY_JOB_KIND => match serde_json::from_value::<Reply>(job.payload.0.clone()) {
                Err(err) => Err(format!("unreadable email job: {err}")),
                Ok(reply) => Ok(self.mailer.send_reply(&reply).await),
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
