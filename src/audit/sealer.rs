//! The worker that seals committed audit entries into their company's
//! chain (`audit::seal`), and queues the `audit.entry` event of each entry
//! it seals for the webhooks subscribed to it, in the sealing transaction.
//! Every node runs it; two nodes sealing one company take turns on its
//! chain row, so they make one chain.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::task::JoinHandle;
use uuid::Uuid;

use super::Entry;
use super::seal::{self, Sealed};
use crate::auth::Tenant;
use crate::db::{Db, Tx};
use crate::error::StoreError;
use crate::event_catalogue::EventName;
use crate::time::{Clock, Timestamp};

/// How often the worker looks for unsealed entries besides its bell: the
/// longest an entry no ring announced waits.
const EVERY: Duration = Duration::from_secs(1);

/// Companies one pass seals at most; the next pass takes the rest.
const COMPANIES_PER_PASS: i64 = 500;

/// Queues `audit.entry` for each entry sealed, in each mode whose webhooks
/// subscribe to it by name (no event is written otherwise); the event's
/// actor is the entry's.
pub struct Forward;

impl Sealed for Forward {
    fn sealed<'a>(
        &'a self,
        tx: &'a mut Tx,
        company_id: Uuid,
        entries: &'a [Entry],
        now: Timestamp,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
        Box::pin(async move {
            let name = EventName::AuditEntry.as_str();
            for mode in crate::webhooks::store::modes_subscribed(tx, company_id, name).await? {
                let tenant = Tenant::new(company_id, mode);
                for entry in entries {
                    tx.act_as(entry.actor.clone());
                    let payload = ::audit::model::AuditEntry(entry);
                    crate::events::emit(tx, &tenant, &payload, now).await?;
                }
            }
            Ok(())
        })
    }
}

/// Seals company `company_id`'s committed entries now (the worker's work
/// for one company; the CLI and tests call it).
pub async fn seal_company(db: &Db, clock: &Clock, company_id: Uuid) -> Result<u64, StoreError> {
    seal::seal_company(db, company_id, &Forward, clock.now()).await
}

/// Seals at each ring of the sealer's bell (an entry this node wrote has
/// committed) and at least every [`EVERY`] (the entries of the CLI and of
/// a node that stopped before sealing its own). Rings during a pass wake
/// it once more, so a pass under load seals everything committed since
/// the last in one batch.
pub fn spawn(db: Db, clock: Clock, shutdown: tokio::sync::watch::Receiver<bool>) -> JoinHandle<()> {
    spawn_polling(db, clock, shutdown, EVERY)
}

/// The worker, looking every `every` besides its bell (tests give a
/// period longer than they last, so only a ring can wake it).
pub fn spawn_polling(
    db: Db,
    clock: Clock,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
    every: Duration,
) -> JoinHandle<()> {
    let bell = db.bell(seal::BELL);
    tokio::spawn(async move {
        let mut poll = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = bell.notified() => {}
                _ = poll.tick() => {}
                _ = shutdown.wait_for(|stop| *stop) => break,
            }
            let pass = seal::seal_pass(&db, COMPANIES_PER_PASS, &Forward, clock.now());
            tokio::select! {
                result = pass => if let Err(err) = result {
                    tracing::warn!(error = %err, "sealing audit entries failed");
                },
                _ = shutdown.wait_for(|stop| *stop) => break,
            }
        }
    })
}
