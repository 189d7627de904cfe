//! The job that keeps a new ticket's suggestions for its agent
//! (`kb.ticket_suggestions` in the outbox). The ticket's create writes it
//! with the ticket (`rows`), so the create answers without searching, and
//! a ticket that commits gets its job whenever its entity has a published
//! article to suggest. The job searches, then stores the record with the
//! job's id and ends itself in one transaction: an attempt made again
//! after a commit whose end was not heard stores nothing twice.

use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::{Mode, Tenant};
use crate::db::{Backend, Db, NewRows};
use crate::error::StoreError;
use crate::outbox::{self, Job, JobHandler, RetrySchedule};
use crate::store::{self, TICKET_QUESTION_MAX};
use crate::time::{Clock, new_id};

/// The outbox kind of the job.
pub const JOB_KIND: &str = "kb.ticket_suggestions";

/// What the job needs: the ticket and the text its question is made of.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TicketQuestion {
    company_id: Uuid,
    mode: Mode,
    ticket_id: Uuid,
    entity_id: Uuid,
    subject: String,
    /// Only as much as a question takes.
    description: Option<String>,
}

/// A new ticket's question: its subject and description.
pub struct NewTicketQuestion<'a> {
    pub ticket_id: Uuid,
    pub entity_id: Uuid,
    pub subject: &'a str,
    pub description: Option<&'a str>,
}

fn payload(
    tenant: &Tenant,
    ticket: &NewTicketQuestion<'_>,
) -> Result<serde_json::Value, StoreError> {
    let question = TicketQuestion {
        company_id: tenant.company_id,
        mode: tenant.mode,
        ticket_id: ticket.ticket_id,
        entity_id: ticket.entity_id,
        subject: ticket.subject.to_string(),
        description: ticket
            .description
            .map(|d| d.chars().take(TICKET_QUESTION_MAX).collect()),
    };
    serde_json::to_value(question)
        .map_err(|e| StoreError::Database(sqlx::Error::Encode(Box::new(e))))
}

/// Whether the ticket's entity has a published article (bound: the
/// tenant's company and mode, the entity): a job for an entity with none
/// would find nothing. Read by the job's insert itself, so the create
/// spends no round trip on it; the entity's articles are found by their
/// index (`kb_articles_entity`).
const ENTITY_PUBLISHES: &str = "EXISTS (SELECT 1 FROM kb_articles a \
     WHERE a.company_id = {} AND a.mode = {} AND a.entity_id = {} AND a.is_published = TRUE)";

/// The job's row, for a create that writes it with the ticket
/// (`NewRows`: alone or in the ticket's statement). It is written only
/// when the ticket's entity has a published article.
pub fn rows(
    backend: Backend,
    tenant: &Tenant,
    ticket: &NewTicketQuestion<'_>,
) -> Result<NewRows, StoreError> {
    let payload = payload(tenant, ticket)?;
    let rows = outbox::store::rows(backend, new_id(), JOB_KIND, Some(tenant), payload);
    Ok(rows.only_if(
        ENTITY_PUBLISHES,
        [
            tenant.company_id.into(),
            tenant.mode.as_str().into(),
            ticket.entity_id.into(),
        ],
    ))
}

/// Runs the job: the outbox handler of [`JOB_KIND`].
pub struct SuggestionsJob {
    retry: RetrySchedule,
}

impl SuggestionsJob {
    pub fn new(retry: RetrySchedule) -> Self {
        SuggestionsJob { retry }
    }

    async fn keep(&self, db: &Db, clock: &Clock, job: &Job) -> Result<bool, StoreError> {
        let question = serde_json::from_value::<TicketQuestion>(job.payload.0.clone());
        let found = match &question {
            Err(err) => Err(format!("unreadable job: {err}")),
            Ok(q) => {
                let tenant = Tenant::new(q.company_id, q.mode);
                let ticket = (q.ticket_id, q.entity_id);
                let description = q.description.as_deref();
                store::ticket_suggestion(db, &tenant, ticket, &q.subject, description)
                    .await
                    .map(|found| found.map(|new| (tenant, new)))
                    .map_err(|err| err.to_string())
            }
        };
        let mut tx = db.begin().await?;
        let held = match found {
            Ok(found) => {
                if let Some((tenant, new)) = found {
                    store::keep_suggestion(&mut tx, &tenant, job.id, new, clock.now()).await?;
                }
                outbox::store::finish(&mut tx, job).await?
            }
            Err(error) => {
                tracing::warn!(job = %job.id, attempt = job.attempt(), %error,
                    "a ticket's suggestions were not kept");
                // A payload no attempt can read is not tried again.
                let delay = question
                    .is_ok()
                    .then(|| self.retry.delay_after(job.attempt()))
                    .flatten();
                match delay {
                    Some(delay) => outbox::store::retry(&mut tx, job, delay, &error)
                        .await?
                        .is_some(),
                    None => outbox::store::abandon(&mut tx, job, &error).await?,
                }
            }
        };
        // A lost lease: the record is dropped with the transaction, and the
        // attempt that holds the job now keeps it.
        if held {
            tx.commit().await?;
        }
        Ok(held)
    }
}

impl JobHandler for SuggestionsJob {
    /// Two ranked searches and an insert: well under a minute.
    fn lease(&self) -> Duration {
        Duration::from_secs(60)
    }

    fn run<'a>(
        &'a self,
        db: &'a Db,
        clock: &'a Clock,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.keep(db, clock, job))
    }
}
