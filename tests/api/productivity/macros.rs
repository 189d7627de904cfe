//! Macros: who sees them, what they accept, and applying one (or only
//! previewing it) to a ticket.

use reqwest::Method;
use serde_json::{Value, json};

use super::{comment_count, event_names, read_ticket, send_with, shared_macro, ticket};
use crate::agents::{send, signed_in};
use supportdesk::auth::{Scope, ScopeSet};

use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    a_personal_macro_is_seen_by_its_agent_only,
    a_company_key_cannot_own_a_personal_macro,
    invalid_actions_are_400_and_create_nothing,
    macros_need_their_scopes,
    a_macro_preview_answers_the_result_and_changes_nothing,
    applying_a_macro_changes_replies_and_records_one_set_of_events,
    a_stale_if_match_refuses_a_macro,
    the_change_feed_ends_with_the_ticket_the_macro_left_by_its_actor,
    macro_applied_reaches_the_ticket_channels,
);

/// Actions that change and answer: a status, tags, a reply and a note
/// with placeholders.
fn full_actions() -> Value {
    json!({
        "status": "PENDING",
        "priority": "HIGH",
        "addTags": ["waiting"],
        "reply": "Hello {{requester.name}}, {{ticket.number}} waits on you. {{agent.name}}",
        "note": "Asked {{requester.email}}",
    })
}

/// A personal key of a new signed-in agent (role `agent`).
async fn agent_key(app: &TestApp, acme: &crate::support::TestCompany, email: &str) -> String {
    let browser = signed_in(app, acme, email, "agent").await;
    let scopes = json!([
        "tickets:read",
        "tickets:write",
        "macros:read",
        "macros:write"
    ]);
    let r = send(
        app,
        &browser,
        Method::POST,
        "/auth/keys",
        json!({"name": "mine", "scopes": scopes}),
    )
    .await;
    r.assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_string()
}

async fn a_personal_macro_is_seen_by_its_agent_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent_key(&app, &acme, "ann@example.com").await;
    let bob = agent_key(&app, &acme, "bob@example.com").await;
    let r = app
        .post(
            "/macros",
            &ann,
            json!({"name": "Mine", "visibility": "personal", "actions": {"note": "x"}}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().expect("id").to_string();
    assert!(r.body["ownerId"].is_string());
    let path = format!("/macros/{id}");
    app.get(&path, &ann).await.assert_status(200);
    app.get(&path, &bob).await.assert_error(404, "not_found");
    app.get(&path, &acme.key)
        .await
        .assert_error(404, "not_found");
    let listed = app.get("/macros", &bob).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
    app.delete(&path, &bob).await.assert_error(404, "not_found");
    let listed = app.get("/macros", &ann).await;
    assert_eq!(listed.assert_status(200)["data"][0]["id"], id.as_str());
}

async fn a_company_key_cannot_own_a_personal_macro(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/macros",
            &acme.key,
            json!({"name": "Mine", "visibility": "personal", "actions": {"note": "x"}}),
        )
        .await;
    assert_invalid(&r, &["visibility"]);
    let listed = app.get("/macros", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
}

async fn invalid_actions_are_400_and_create_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let cases = [
        (json!({}), "actions"),
        (json!({"reply": "Hi {{customer.nmae}}"}), "actions.reply"),
        (json!({"status": "SNOOZED"}), "actions.status"),
        (json!({"addTags": ["two words"]}), "actions.addTags"),
        (json!({"assignedToId": "not-an-id"}), "actions.assignedToId"),
    ];
    for (actions, field) in cases {
        let r = app
            .post(
                "/macros",
                &acme.key,
                json!({"name": "Bad", "visibility": "shared", "actions": actions}),
            )
            .await;
        assert_invalid(&r, &[field]);
    }
    let listed = app.get("/macros", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
}

async fn macros_need_their_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = shared_macro(&app, &acme, json!({"note": "x"})).await;
    let tickets_only = app
        .key(
            acme.company.id,
            supportdesk::auth::Mode::Test,
            ScopeSet::from_scopes([Scope::TicketsRead, Scope::TicketsWrite]),
        )
        .await;
    app.get("/macros", &tickets_only)
        .await
        .assert_error(403, "insufficient_scope");
    let t = ticket(&app, &acme).await;
    let r = app
        .post(
            &format!("/tickets/{t}/macros/{id}/apply"),
            &tickets_only,
            json!({}),
        )
        .await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(comment_count(&app, &acme, &t).await, 0);
}

async fn a_macro_preview_answers_the_result_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = shared_macro(&app, &acme, full_actions()).await;
    let t = ticket(&app, &acme).await;
    let events_before = event_names(&app, &acme).await;
    let r = app
        .post(
            &format!("/tickets/{t}/macros/{id}/preview"),
            &acme.key,
            json!({}),
        )
        .await;
    let preview = r.assert_status(200);
    assert_eq!(preview["ticket"]["status"], "PENDING");
    assert_eq!(preview["ticket"]["tags"], json!(["waiting"]));
    let number = preview["ticket"]["ticketNumber"].as_str().expect("number");
    assert_eq!(
        preview["reply"]["body"],
        format!("Hello vic@example.com, {number} waits on you. test key")
    );
    assert_eq!(preview["note"]["isInternal"], true);
    let now = read_ticket(&app, &acme, &t).await;
    assert_eq!(now.assert_status(200)["status"], "OPEN");
    assert_eq!(now.body["tags"], json!([]));
    assert_eq!(now.body["version"], 1);
    assert_eq!(comment_count(&app, &acme, &t).await, 0);
    assert_eq!(event_names(&app, &acme).await, events_before);
}

async fn applying_a_macro_changes_replies_and_records_one_set_of_events(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = shared_macro(&app, &acme, full_actions()).await;
    let t = ticket(&app, &acme).await;
    let r = app
        .post(
            &format!("/tickets/{t}/macros/{id}/apply"),
            &acme.key,
            json!({}),
        )
        .await;
    let applied = r.assert_status(200).clone();
    let version = applied["ticket"]["version"].as_i64().expect("version");
    assert_eq!(r.header("etag"), Some(format!("\"{version}\"").as_str()));
    let now = read_ticket(&app, &acme, &t).await;
    assert_eq!(now.assert_status(200)["status"], "PENDING");
    assert_eq!(now.body["priority"], "HIGH");
    assert_eq!(now.body["tags"], json!(["waiting"]));
    assert_eq!(now.body["version"], version);
    assert_eq!(comment_count(&app, &acme, &t).await, 2);
    let names = event_names(&app, &acme).await;
    assert_eq!(
        names,
        [
            // The ticket's requester email made them a contact.
            "contact.created",
            "ticket.created",
            "ticket.updated",
            "comment.created",
            "comment.created",
            "macro.applied"
        ]
    );
}

async fn a_stale_if_match_refuses_a_macro(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = shared_macro(&app, &acme, full_actions()).await;
    let t = ticket(&app, &acme).await;
    app.patch(
        &format!("/tickets/{t}"),
        &acme.key,
        json!({"priority": "LOW"}),
    )
    .await
    .assert_status(200);
    let r = send_with(
        &app,
        Method::POST,
        &format!("/tickets/{t}/macros/{id}/apply"),
        &acme.key,
        &[("If-Match", "\"1\"")],
        json!({}),
    )
    .await;
    r.assert_error(412, "version_conflict");
    assert_eq!(r.body["details"][0]["field"], "priority");
    assert_eq!(read_ticket(&app, &acme, &t).await.body["status"], "OPEN");
    assert_eq!(comment_count(&app, &acme, &t).await, 0);
}

async fn the_change_feed_ends_with_the_ticket_the_macro_left_by_its_actor(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = shared_macro(&app, &acme, json!({"note": "Seen"})).await;
    let t = ticket(&app, &acme).await;
    let r = app
        .post(
            &format!("/tickets/{t}/macros/{id}/apply"),
            &acme.key,
            json!({}),
        )
        .await;
    let version = r.assert_status(200)["ticket"]["version"].clone();
    let feed = app.get("/changes?limit=1000", &acme.key).await;
    let entries = feed.assert_status(200)["data"]
        .as_array()
        .expect("entries")
        .clone();
    let last = entries.last().expect("an entry");
    assert_eq!(last["type"], "ticket");
    assert_eq!(last["id"], t.as_str());
    assert_eq!(last["record"]["version"], version);
    assert_eq!(last["actor"]["type"], "key");
    assert_eq!(last["actor"]["name"], "test key");
}

async fn macro_applied_reaches_the_ticket_channels(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = shared_macro(&app, &acme, json!({"priority": "HIGH"})).await;
    let t = ticket(&app, &acme).await;
    let mut socket = crate::chat::client::Client::key(&app, &acme.key).await;
    socket.subscribe("tickets").await;
    let path = format!("/tickets/{t}/macros/{id}/apply");
    app.post(&path, &acme.key, json!({}))
        .await
        .assert_status(200);
    let frame = socket.next_of("macro.applied").await;
    assert_eq!(
        (
            frame["data"]["data"]["id"].clone(),
            frame["data"]["data"]["macro"]["id"].clone()
        ),
        (json!(t), json!(id))
    );
}
