//! The live events of committed transactions: a transaction stages them
//! (`Tx::announce`) and, once it has committed, hands them to the
//! publisher of the `Db` it was begun from (`Db::with_publisher`). One that
//! rolls back drops them. Nothing else carries them: a `Db` without a
//! publisher (the command line, a test's own handle) announces nothing.

use futures::future::BoxFuture;
use vocab::live::LiveEvent;

pub trait Publish: Send + Sync {
    /// Sends `events`, staged by one transaction that has committed, in the
    /// order staged. Failures are the publisher's to log: the change has
    /// committed, and its events stay recorded for a replay.
    fn publish(&self, events: Vec<LiveEvent>) -> BoxFuture<'_, ()>;
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex, PoisonError};

    use uuid::Uuid;
    use vocab::event_catalogue::{Event, EventName};
    use vocab::live::TicketTopic;
    use vocab::tenant::{Mode, Tenant};
    use vocab::time::Timestamp;

    use super::*;
    use crate::Db;

    /// Keeps what it is handed, one batch per committed transaction.
    #[derive(Default)]
    struct Kept(Mutex<Vec<Vec<Uuid>>>);

    impl Kept {
        fn batches(&self) -> Vec<Vec<Uuid>> {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        }
    }

    impl Publish for Kept {
        fn publish(&self, events: Vec<LiveEvent>) -> BoxFuture<'_, ()> {
            let ids = events.iter().map(|live| live.event.id).collect();
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(ids);
            Box::pin(async {})
        }
    }

    fn live() -> LiveEvent {
        let tenant = Tenant::new(Uuid::now_v7(), Mode::Test);
        LiveEvent {
            topic: TicketTopic {
                tenant,
                entity: None,
                internal: false,
                team: Vec::new(),
            },
            event: Event {
                id: Uuid::now_v7(),
                name: EventName::TicketCreated,
                tenant_company: tenant.company_id,
                timestamp: Timestamp::now(),
                data: serde_json::json!({}),
                actor: vocab::actor::Actor::system(),
            },
        }
    }

    async fn db() -> (Db, Arc<Kept>) {
        let kept = Arc::new(Kept::default());
        let db = Db::connect("sqlite::memory:").await.expect("db");
        (db.with_publisher(kept.clone()), kept)
    }

    #[tokio::test]
    async fn a_committed_transaction_hands_its_events_to_its_handles_publisher() {
        let (db, kept) = db().await;
        let (first, second) = (live(), live());
        let mut tx = db.begin().await.expect("begin");
        tx.announce(first.clone());
        tx.announce(second.clone());
        assert!(kept.batches().is_empty(), "published before the commit");
        tx.commit().await.expect("commit");
        assert_eq!(kept.batches(), vec![vec![first.event.id, second.event.id]]);
    }

    #[tokio::test]
    async fn the_events_of_a_transaction_that_rolls_back_are_dropped() {
        let (db, kept) = db().await;
        let mut tx = db.begin().await.expect("begin");
        tx.announce(live());
        drop(tx);
        let tx = db.begin().await.expect("begin");
        tx.commit().await.expect("commit");
        assert!(kept.batches().is_empty());
    }

    #[tokio::test]
    async fn only_the_transactions_of_the_handle_with_the_publisher_reach_it() {
        let plain = Db::connect("sqlite::memory:").await.expect("db");
        let kept = Arc::new(Kept::default());
        let published = plain.with_publisher(kept.clone());
        let mut outside = plain.begin().await.expect("begin");
        outside.announce(live());
        outside.commit().await.expect("commit");
        let inside = live();
        let mut tx = published.begin().await.expect("begin");
        tx.announce(inside.clone());
        tx.commit().await.expect("commit");
        assert_eq!(kept.batches(), vec![vec![inside.event.id]]);
    }
}
