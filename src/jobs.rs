//! The job kinds this service runs, assembled where the application is
//! wired: the outbox runs them without knowing any of them.

use crate::attachments::storage::Storage;
use crate::config::Config;
use crate::contacts::{self, jobs::RequestJob};
use crate::kb::jobs::{self as kb_jobs, SuggestionsJob};
use crate::mail::{self, EmailJob, Mailer};
use crate::outbox::{Jobs, RetrySchedule};
use crate::sequences::email_sending::ChannelSending;
use crate::webhooks::{self, worker::DeliveryJob};

/// Every job handler, by kind; failed attempts of every kind retry on the
/// webhook schedule (`SUPPORTDESK_WEBHOOK_RETRY_DELAYS`).
pub fn registry(config: &Config) -> anyhow::Result<Jobs> {
    let retry = RetrySchedule::new(config.webhook_retry_delays.clone());
    // A reply's files are read from the attachments' storage when it is sent.
    let storage = || Storage::configured(config.s3.as_ref(), &config.data_dir);
    Ok(Jobs::new()
        .register(webhooks::JOB_KIND, DeliveryJob::new(config, retry.clone())?)
        .register(
            mail::JOB_KIND,
            EmailJob::new(Mailer::new(config)?, retry.clone(), storage()?),
        )
        .register(
            mail::REPLY_JOB_KIND,
            EmailJob::new(Mailer::new(config)?, retry.clone(), storage()?)
                .with_sending(ChannelSending),
        )
        .register(kb_jobs::JOB_KIND, SuggestionsJob::new(retry))
        .register(contacts::jobs::JOB_KIND, RequestJob::new(config)?))
}
