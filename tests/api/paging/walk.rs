//! A cursor walk while other writers insert and delete: nothing seen twice,
//! every ticket that existed for the whole walk seen exactly once.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::RngExt;
use supportdesk::auth::{Mode, Tenant};
use supportdesk::sequences::contacts::Matcher;
use supportdesk::tickets::model::{NewTicket, Priority};
use supportdesk::tickets::store;
use supportdesk::time::Timestamp;
use tokio::sync::watch;
use uuid::Uuid;

use super::{after, ids};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(a_cursor_walk_sees_every_lasting_ticket_once_while_others_come_and_go);

const TICKETS: usize = 1000;
const PAGE: usize = 37;

fn new_ticket(entity_id: Uuid, subject: String) -> NewTicket {
    NewTicket {
        subject,
        description: None,
        priority: Priority::Medium,
        entity_id,
        visitor_email: None,
        channel: supportdesk::tickets::model::TicketChannel::Api,
        team_id: None,
        chat_session_id: None,
        tags: Vec::new(),
        custom_fields: Default::default(),
        attachment_ids: Vec::new(),
    }
}

async fn a_cursor_walk_sees_every_lasting_ticket_once_while_others_come_and_go(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    let entity = acme.entity.id;
    let mut existing = Vec::with_capacity(TICKETS);
    for n in 0..TICKETS {
        let created = store::create(
            &app.state.db,
            &app.state.sla,
            &app.state.ticket_subscribers,
            &tenant,
            new_ticket(entity, format!("T{n}")),
            Timestamp::now(),
            &app.state.link_signer(),
            (
                &Matcher {
                    tenant: &tenant,
                    now: Timestamp::now(),
                },
                None,
            ),
        )
        .await
        .expect("ticket");
        existing.push(created.id);
    }

    // The churn inserts a ticket and deletes a random one (an original or
    // one of its own) per round, until the walk ends; the walker waits for
    // at least one round between pages, so every page boundary sees writes.
    let (rounds_tx, mut rounds) = watch::channel(0u64);
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let (db, stop, mut pool) = (app.state.db.clone(), stop.clone(), existing.clone());
        let (sla, subscribers) = (app.state.sla.clone(), app.state.ticket_subscribers.clone());
        let signer = app.state.link_signer();
        tokio::spawn(async move {
            let mut deleted = HashSet::new();
            let mut round = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let fresh = store::create(
                    &db,
                    &sla,
                    &subscribers,
                    &tenant,
                    new_ticket(entity, format!("New {round}")),
                    Timestamp::now(),
                    &signer,
                    (
                        &Matcher {
                            tenant: &tenant,
                            now: Timestamp::now(),
                        },
                        None,
                    ),
                )
                .await
                .expect("churn insert");
                pool.push(fresh.id);
                let victim = pool.swap_remove(rand::rng().random_range(0..pool.len()));
                store::delete(&db, &tenant, victim, Timestamp::now())
                    .await
                    .expect("churn delete");
                deleted.insert(victim);
                round += 1;
                rounds_tx.send_replace(round);
                tokio::task::yield_now().await;
            }
            deleted
        })
    };

    let mut seen = Vec::new();
    let mut path = format!("/tickets?limit={PAGE}");
    loop {
        let before = *rounds.borrow_and_update();
        let r = app.get(&path, &acme.key).await;
        let page = r.assert_status(200).clone();
        seen.extend(ids(&page));
        let Some(cursor) = page["nextCursor"].as_str() else {
            break;
        };
        path = after(&format!("/tickets?limit={PAGE}"), cursor);
        rounds
            .wait_for(|round| *round > before)
            .await
            .expect("churn running");
    }
    stop.store(true, Ordering::SeqCst);
    let deleted = churn.await.expect("churn ends");

    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a ticket was seen twice");
    let lasting: Vec<String> = existing
        .iter()
        .filter(|id| !deleted.contains(*id))
        .map(Uuid::to_string)
        .collect();
    let missing: Vec<&String> = lasting.iter().filter(|id| !unique.contains(id)).collect();
    assert!(missing.is_empty(), "never seen: {missing:?}");
    assert!(!deleted.is_empty());
}
