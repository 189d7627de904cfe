//! Events announced live (on sockets) once their change has committed.
//! `emit` stages each event it records for the running task's collector, if
//! the task has one: the event reaches the collector when its transaction
//! commits (`Tx::after_commit`), and never if it rolls back. Whoever ran
//! the work (the API's request layer, a worker) takes the collected events
//! afterwards and announces them.

use std::sync::{Arc, Mutex};

use crate::auth::Tenant;
use crate::db::Tx;
use crate::event_catalogue::Event;

/// One event recorded by the task whose transaction has committed.
#[derive(Debug, Clone)]
pub struct Staged {
    pub tenant: Tenant,
    pub event: Event,
}

#[derive(Default)]
struct Collector(Mutex<Vec<Staged>>);

tokio::task_local! {
    static COLLECTOR: Arc<Collector>;
}

/// Runs `work`, collecting the events it records (in this task; tasks it
/// spawns do not inherit the collector).
pub async fn collect<F: Future>(work: F) -> (F::Output, Vec<Staged>) {
    let collector = Arc::new(Collector::default());
    let output = COLLECTOR.scope(collector.clone(), work).await;
    let staged = match collector.0.lock() {
        Ok(mut staged) => std::mem::take(&mut *staged),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    (output, staged)
}

/// Stages `event`, recorded in `tx`, for the running task's collector: it
/// is collected once `tx` commits (no collector: nothing to do).
pub(super) fn stage(tx: &mut Tx, tenant: &Tenant, event: &Event) {
    let Ok(collector) = COLLECTOR.try_with(Arc::clone) else {
        return;
    };
    let staged = Staged {
        tenant: *tenant,
        event: event.clone(),
    };
    tx.after_commit(move || match collector.0.lock() {
        Ok(mut list) => list.push(staged),
        Err(poisoned) => poisoned.into_inner().push(staged),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_catalogue::EventName;
    use uuid::Uuid;

    fn event() -> Event {
        Event {
            id: Uuid::now_v7(),
            name: EventName::TicketCreated,
            tenant_company: Uuid::now_v7(),
            timestamp: crate::time::Timestamp::now(),
            data: serde_json::json!({}),
        }
    }

    fn tenant() -> Tenant {
        Tenant {
            company_id: Uuid::now_v7(),
            mode: crate::auth::Mode::Test,
        }
    }

    async fn db() -> crate::db::Db {
        crate::db::Db::connect("sqlite::memory:").await.expect("db")
    }

    #[tokio::test]
    async fn only_work_inside_the_scope_is_collected() {
        let db = db().await;
        let mut outside = db.begin().await.expect("begin");
        stage(&mut outside, &tenant(), &event());
        outside.commit().await.expect("commit");
        let inside = event();
        let ((), staged) = collect(async {
            let mut tx = db.begin().await.expect("begin");
            stage(&mut tx, &tenant(), &inside);
            tx.commit().await.expect("commit");
        })
        .await;
        assert_eq!(staged.len(), 1);
        assert_eq!(staged[0].event.id, inside.id);
    }

    #[tokio::test]
    async fn events_of_a_transaction_that_rolls_back_are_not_collected() {
        let db = db().await;
        let ((), staged) = collect(async {
            let mut tx = db.begin().await.expect("begin");
            stage(&mut tx, &tenant(), &event());
            drop(tx);
        })
        .await;
        assert!(staged.is_empty());
    }

    #[tokio::test]
    async fn an_event_is_collected_only_once_its_transaction_commits() {
        let db = db().await;
        let ((), staged) = collect(async {
            let mut tx = db.begin().await.expect("begin");
            stage(&mut tx, &tenant(), &event());
            let before = COLLECTOR.with(|c| c.0.lock().map(|l| l.len()).unwrap_or(usize::MAX));
            assert_eq!(before, 0, "collected before the commit");
            tx.commit().await.expect("commit");
        })
        .await;
        assert_eq!(staged.len(), 1);
    }
}
