//! A search ranks every match: an old ticket that matches best comes first
//! however many newer tickets share the word (more than the thousand a
//! search once ranked), and `total` counts every match.

use std::collections::HashSet;

use supportdesk::sequences::contacts::Matcher;
use supportdesk::tickets::model::{NewTicket, Priority};
use supportdesk::tickets::store;
use supportdesk::time::Timestamp;
use uuid::Uuid;

use super::*;

backend_tests!(
    the_best_match_comes_first_however_many_newer_ones_match,
    a_search_total_counts_every_match
);

/// How many newer tickets match: more than the newest 1,000 matches a
/// search once ranked (the old best match then fell outside them).
const NEWER_MATCHES: i64 = 1_000;

fn new_ticket(entity_id: Uuid, subject: &str, description: &str) -> NewTicket {
    NewTicket {
        subject: subject.to_string(),
        description: Some(description.to_string()),
        priority: Priority::Medium,
        entity_id,
        visitor_email: None,
        channel: supportdesk::tickets::model::TicketChannel::Api,
        tags: Vec::new(),
        custom_fields: Default::default(),
        attachment_ids: Vec::new(),
        team_id: None,
        chat_session_id: None,
    }
}

/// One old ticket with "refund" in its subject (the best rank), then
/// `NEWER_MATCHES` newer ones with it in the description only; answers
/// the old ticket's id and the newer ones'.
async fn seed(app: &TestApp, acme: &TestCompany) -> (Uuid, HashSet<Uuid>) {
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    let entity = acme.entity.id;
    let db = &app.state.db;
    let oldest = store::create(
        db,
        &app.state.sla,
        &app.state.ticket_subscribers,
        &tenant,
        new_ticket(entity, "Refund", "Order 1"),
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
    .expect("old ticket")
    .id;
    let mut newer = HashSet::new();
    for n in 0..NEWER_MATCHES {
        let created = store::create(
            db,
            &app.state.sla,
            &app.state.ticket_subscribers,
            &tenant,
            new_ticket(entity, &format!("Order {n}"), "Asks for a refund"),
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
        newer.insert(created.id);
    }
    (oldest, newer)
}

async fn the_best_match_comes_first_however_many_newer_ones_match(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (oldest, _) = seed(&app, &acme).await;
    let page = app.get("/tickets?q=refund&limit=1", &acme.key).await;
    let (ids, _) = ids_and_total(page.assert_status(200));
    assert_eq!(ids, vec![oldest.to_string()]);
}

async fn a_search_total_counts_every_match(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    seed(&app, &acme).await;
    let page = app.get("/tickets?q=refund&limit=1", &acme.key).await;
    let (_, total) = ids_and_total(page.assert_status(200));
    assert_eq!(total, NEWER_MATCHES + 1);
}
