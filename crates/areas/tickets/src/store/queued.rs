//! The jobs a new ticket queues in its create's transaction: declared
//! here, described by the area that runs them (the knowledge base's
//! suggestions for the ticket's agent) and given by the service.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Backend, NewRows};
use crate::error::StoreError;
use crate::model::NewTicket;

/// The outbox rows of the jobs a ticket `id` made of `new` queues (none:
/// no job). Rows, not a write: a Postgres create that writes the ticket in
/// one statement writes them in it too, so the create costs no round trip
/// more and still answers as soon as it commits.
pub trait JobsOf: Sync {
    fn jobs(
        &self,
        backend: Backend,
        tenant: &Tenant,
        id: Uuid,
        new: &NewTicket,
    ) -> Result<Option<NewRows>, StoreError>;
}
