//! The articles a new ticket's agent is shown: the tickets' create (a
//! request's, or an incoming email's) queues the knowledge base's job in
//! its own transaction (`JobsOf`) when the ticket's entity has a published
//! article, and the job searches and keeps them later, so the create
//! answers without searching.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Backend, NewRows};
use crate::error::StoreError;
use crate::kb::jobs::{self, NewTicketQuestion};
use crate::tickets::model::NewTicket;
use crate::tickets::store::JobsOf;

/// The step a ticket's create takes to queue its suggestions' job.
pub struct Suggestions;

impl JobsOf for Suggestions {
    fn jobs(
        &self,
        backend: Backend,
        tenant: &Tenant,
        id: Uuid,
        new: &NewTicket,
    ) -> Result<Option<NewRows>, StoreError> {
        let question = NewTicketQuestion {
            ticket_id: id,
            entity_id: new.entity_id,
            subject: &new.subject,
            description: new.description.as_deref(),
        };
        jobs::rows(backend, tenant, &question).map(Some)
    }
}
