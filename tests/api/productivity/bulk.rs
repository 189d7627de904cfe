//! Bulk changes: each ticket commits on its own and is reported; a replay
//! with the same Idempotency-Key changes nothing twice; too many tickets
//! is refused whole.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{comment_count, read_ticket, shared_macro};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_bulk_of_a_thousand_reports_the_invalid_ticket_and_commits_the_rest,
    a_bulk_replay_with_the_same_key_changes_nothing_twice,
    more_than_a_thousand_tickets_is_400,
    a_bulk_needs_exactly_one_of_changes_and_a_known_macro,
    a_bulk_adds_and_removes_tags_keeping_the_others,
    added_tags_with_another_field_are_400_and_change_nothing,
);

/// `n` tickets of `acme`, made by its store (the API's way, without the
/// HTTP round trips); their ids.
async fn tickets(app: &TestApp, acme: &TestCompany, n: usize) -> Vec<String> {
    let tenant = supportdesk::auth::Tenant::new(acme.company.id, supportdesk::auth::Mode::Test);
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let new = supportdesk::tickets::model::NewTicket {
            subject: format!("Bulk {i}"),
            description: None,
            priority: supportdesk::tickets::model::Priority::Medium,
            entity_id: acme.entity.id,
            visitor_email: None,
            channel: supportdesk::tickets::model::TicketChannel::Api,
            team_id: None,
            chat_session_id: None,
            tags: Vec::new(),
            custom_fields: Default::default(),
            attachment_ids: Vec::new(),
        };
        let ticket = supportdesk::tickets::store::create(
            &app.state.db,
            &app.state.sla,
            &app.state.ticket_subscribers,
            &tenant,
            new,
            app.state.clock.now(),
            &app.state.link_signer(),
            (
                &supportdesk::sequences::contacts::Matcher {
                    tenant: &tenant,
                    now: app.state.clock.now(),
                },
                None,
            ),
        )
        .await
        .expect("ticket");
        ids.push(ticket.id.to_string());
    }
    ids
}

/// A bulk request may take up to a thousand tickets' commits, one after
/// another on SQLite: its answer is waited for longer than the client's
/// default 30 s, which a loaded CI machine exceeded (the request had not
/// failed, only not yet answered).
const BULK_WAIT: std::time::Duration = std::time::Duration::from_secs(180);

async fn bulk(
    app: &TestApp,
    acme: &TestCompany,
    key: Option<&str>,
    body: Value,
) -> crate::support::TestResponse {
    let mut request = app
        .api(Method::POST, "/tickets/bulk", Some(&acme.key))
        .timeout(BULK_WAIT)
        .json(&body);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    crate::support::TestResponse::from(request.send().await).await
}

async fn a_bulk_of_a_thousand_reports_the_invalid_ticket_and_commits_the_rest(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut ids = tickets(&app, &acme, 999).await;
    let missing = Uuid::now_v7().to_string();
    ids.insert(500, missing.clone());
    let r = bulk(
        &app,
        &acme,
        None,
        json!({"ticketIds": ids, "changes": {"status": "PENDING", "tags": ["bulk"]}}),
    )
    .await;
    let results = r.assert_status(200)["results"]
        .as_array()
        .expect("results")
        .clone();
    assert_eq!(results.len(), 1000);
    let failed: Vec<&Value> = results.iter().filter(|o| o["status"] == "failed").collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["ticketId"], missing.as_str());
    assert_eq!(failed[0]["error"]["code"], "not_found");
    for id in [&ids[0], &ids[499], &ids[501], &ids[999]] {
        let t = read_ticket(&app, &acme, id).await;
        assert_eq!(t.assert_status(200)["status"], "PENDING");
        assert_eq!(t.body["tags"], json!(["bulk"]));
    }
}

async fn a_bulk_replay_with_the_same_key_changes_nothing_twice(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ids = tickets(&app, &acme, 3).await;
    let macro_id = shared_macro(&app, &acme, json!({"note": "Checked in bulk"})).await;
    let body = json!({"ticketIds": ids, "macroId": macro_id});
    let first = bulk(&app, &acme, Some("bulk-1"), body.clone()).await;
    first.assert_status(200);
    let replay = bulk(&app, &acme, Some("bulk-1"), body).await;
    assert_eq!(replay.assert_status(200), &first.body);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    for id in &ids {
        assert_eq!(comment_count(&app, &acme, id).await, 1);
    }
}

async fn more_than_a_thousand_tickets_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ids = tickets(&app, &acme, 1).await;
    let mut many: Vec<String> = (0..1000).map(|_| Uuid::now_v7().to_string()).collect();
    many.push(ids[0].clone());
    let r = bulk(
        &app,
        &acme,
        None,
        json!({"ticketIds": many, "changes": {"status": "PENDING"}}),
    )
    .await;
    assert_invalid(&r, &["ticketIds"]);
    assert_eq!(
        read_ticket(&app, &acme, &ids[0]).await.body["status"],
        "OPEN"
    );
}

async fn a_bulk_needs_exactly_one_of_changes_and_a_known_macro(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ids = tickets(&app, &acme, 1).await;
    let macro_id = shared_macro(&app, &acme, json!({"status": "PENDING"})).await;
    let both = json!({"ticketIds": ids, "changes": {"status": "PENDING"}, "macroId": macro_id});
    assert_invalid(&bulk(&app, &acme, None, both).await, &["body"]);
    let neither = json!({"ticketIds": ids});
    assert_invalid(&bulk(&app, &acme, None, neither).await, &["body"]);
    let unknown = json!({"ticketIds": ids, "macroId": Uuid::now_v7()});
    assert_invalid(&bulk(&app, &acme, None, unknown).await, &["macroId"]);
    assert_eq!(
        read_ticket(&app, &acme, &ids[0]).await.body["status"],
        "OPEN"
    );
}

/// A ticket of `acme` with `tags`; its id.
async fn tagged(app: &TestApp, acme: &TestCompany, tags: Value) -> String {
    let body = json!({"subject": "Tagged", "entityId": acme.entity.id,
                      "visitorEmail": "vic@example.com", "tags": tags});
    let r = app.post("/tickets", &acme.key, body).await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

async fn a_bulk_adds_and_removes_tags_keeping_the_others(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let first = tagged(&app, &acme, json!(["keep", "old"])).await;
    let second = tagged(&app, &acme, json!(["old"])).await;
    let body = json!({"ticketIds": [first, second],
                      "changes": {"addTags": ["New"], "removeTags": ["old"]}});
    let r = bulk(&app, &acme, None, body).await;
    r.assert_status(200);
    let first = read_ticket(&app, &acme, &first).await;
    let second = read_ticket(&app, &acme, &second).await;
    assert_eq!(
        (first.body["tags"].clone(), second.body["tags"].clone()),
        (json!(["keep", "new"]), json!(["new"]))
    );
}

async fn added_tags_with_another_field_are_400_and_change_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = tagged(&app, &acme, json!(["old"])).await;
    let body = json!({"ticketIds": [id], "changes": {"addTags": ["new"], "status": "CLOSED"}});
    let r = bulk(&app, &acme, None, body).await;
    assert_invalid(&r, &["addTags"]);
    let ticket = read_ticket(&app, &acme, &id).await;
    assert_eq!(
        (ticket.body["tags"].clone(), ticket.body["status"].clone()),
        (json!(["old"]), json!("OPEN"))
    );
}
