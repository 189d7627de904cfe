//! Events announced live (on sockets) once their change has committed.
//! `emit` stages each event it records in the running task's collector, if
//! the task has one; whoever ran the work (the API's request layer, a
//! worker) takes the staged events afterwards and announces those whose row
//! exists, i.e. whose transaction committed. A rolled-back change leaves no
//! row, so its events are never announced.

use std::sync::{Arc, Mutex};

use crate::auth::Tenant;
use crate::event_catalogue::Event;

/// One event recorded by the task, not yet known to have committed.
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

/// Stages `event` in the running task's collector (none: nothing to do).
pub(super) fn stage(tenant: &Tenant, event: &Event) {
    let _ = COLLECTOR.try_with(|collector| {
        let staged = Staged {
            tenant: *tenant,
            event: event.clone(),
        };
        match collector.0.lock() {
            Ok(mut list) => list.push(staged),
            Err(poisoned) => poisoned.into_inner().push(staged),
        }
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

    #[tokio::test]
    async fn only_work_inside_the_scope_is_collected() {
        let tenant = Tenant {
            company_id: Uuid::now_v7(),
            mode: crate::auth::Mode::Test,
        };
        stage(&tenant, &event());
        let inside = event();
        let ((), staged) = collect(async { stage(&tenant, &inside) }).await;
        assert_eq!(staged.len(), 1);
        assert_eq!(staged[0].event.id, inside.id);
    }
}
