//! A search ranks the newest 1,000 matches (the cap that keeps a common
//! word cheap in a large company): an older ticket outside them is not
//! listed however well it matches, while `total` still counts it.

use std::collections::HashSet;

use supportdesk::tickets::model::{NewTicket, Priority};
use supportdesk::tickets::store::{self, RANKED_MATCHES};
use supportdesk::time::Timestamp;
use uuid::Uuid;

use super::*;

backend_tests!(
    a_search_lists_only_the_newest_ranked_matches,
    a_search_total_counts_every_match
);

fn new_ticket(entity_id: Uuid, subject: &str, description: &str) -> NewTicket {
    NewTicket {
        subject: subject.to_string(),
        description: Some(description.to_string()),
        priority: Priority::Medium,
        entity_id,
        visitor_email: None,
        tags: Vec::new(),
        custom_fields: Default::default(),
        attachment_ids: Vec::new(),
        team_id: None,
        chat_session_id: None,
    }
}

/// One old ticket with "refund" in its subject (the best rank), then
/// `RANKED_MATCHES` newer ones with it in the description only; answers
/// the old ticket's id and the newer ones'.
async fn seed(app: &TestApp, acme: &TestCompany) -> (Uuid, HashSet<Uuid>) {
    let tenant = Tenant {
        company_id: acme.company.id,
        mode: Mode::Test,
    };
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
    )
    .await
    .expect("old ticket")
    .id;
    let mut newer = HashSet::new();
    for n in 0..RANKED_MATCHES {
        let created = store::create(
            db,
            &app.state.sla,
            &app.state.ticket_subscribers,
            &tenant,
            new_ticket(entity, &format!("Order {n}"), "Asks for a refund"),
            Timestamp::now(),
            &app.state.link_signer(),
        )
        .await
        .expect("ticket");
        newer.insert(created.id);
    }
    (oldest, newer)
}

async fn a_search_lists_only_the_newest_ranked_matches(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, newer) = seed(&app, &acme).await;
    let mut listed = HashSet::new();
    let mut offset = 0;
    loop {
        let page = app
            .get(
                &format!("/tickets?q=refund&limit=100&offset={offset}"),
                &acme.key,
            )
            .await;
        let (ids, _) = ids_and_total(page.assert_status(200));
        if ids.is_empty() {
            break;
        }
        offset += ids.len();
        listed.extend(ids.iter().map(|id| Uuid::parse_str(id).expect("uuid")));
    }
    assert_eq!(listed, newer);
}

async fn a_search_total_counts_every_match(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    seed(&app, &acme).await;
    let page = app.get("/tickets?q=refund&limit=1", &acme.key).await;
    let (_, total) = ids_and_total(page.assert_status(200));
    assert_eq!(total, RANKED_MATCHES + 1);
}
