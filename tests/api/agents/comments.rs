//! Who wrote a comment: a session writes as its agent and cannot name
//! another; a key names an agent only with `comments:as_agent`, and the
//! timeline then shows the key as the actor and the agent as the author.
//! A comment without an author is no first response.

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{send, signed_in, ticket, user_id};
use crate::actors::{fast_policy, high_ticket, key_actor};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};
use crate::tickets::user;

backend_tests!(
    a_signed_in_agents_comment_is_theirs,
    a_signed_in_agent_cannot_comment_as_someone_else,
    a_key_names_an_author_only_with_comments_as_agent,
    a_keys_comment_as_an_agent_shows_the_key_and_the_agent,
    an_author_less_comment_is_no_first_response,
    a_comment_with_an_author_is_the_first_response,
);

/// The ticket's `commented` timeline entries.
async fn commented(app: &TestApp, acme: &TestCompany, ticket: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/tickets/{ticket}/activities"), &acme.key)
        .await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|entry| entry["type"] == "commented")
        .cloned()
        .collect()
}

async fn a_signed_in_agents_comment_is_theirs(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let ticket = ticket(&app, &acme).await;

    let r = send(
        &app,
        &ann,
        Method::POST,
        &format!("/tickets/{ticket}/comments"),
        json!({"body": "On it"}),
    )
    .await;

    assert_eq!(r.assert_status(201)["authorId"], user_id(&ann));
    let entries = commented(&app, &acme, &ticket).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["details"]["authorId"], user_id(&ann));
    assert_eq!(entries[0]["actor"]["type"], "agent");
    assert_eq!(entries[0]["actor"]["id"], user_id(&ann));
}

async fn a_signed_in_agent_cannot_comment_as_someone_else(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "admin").await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let ticket = ticket(&app, &acme).await;

    let r = send(
        &app,
        &ann,
        Method::POST,
        &format!("/tickets/{ticket}/comments"),
        json!({"body": "Bob says hi", "authorId": bob.id, "isInternal": true}),
    )
    .await;

    crate::support::assert_invalid(&r, &["authorId"]);
    assert_eq!(commented(&app, &acme, &ticket).await, Vec::<Value>::new());
}

async fn a_key_names_an_author_only_with_comments_as_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let ticket = ticket(&app, &acme).await;
    let scopes = ScopeSet::from_scopes([Scope::TicketsRead, Scope::TicketsWrite]);
    let key = app.key(acme.company.id, Mode::Test, scopes).await;

    let r = app
        .post(
            &format!("/tickets/{ticket}/comments"),
            &key,
            json!({"body": "On it", "authorId": bob.id}),
        )
        .await;

    r.assert_error(403, "insufficient_scope");
    assert_eq!(
        r.body["error"],
        "Missing required permission: comments:as_agent"
    );
    assert_eq!(commented(&app, &acme, &ticket).await, Vec::<Value>::new());
}

async fn a_keys_comment_as_an_agent_shows_the_key_and_the_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let ticket = ticket(&app, &acme).await;

    let r = app
        .post(
            &format!("/tickets/{ticket}/comments"),
            &acme.key,
            json!({"body": "On it", "authorId": bob.id}),
        )
        .await;

    assert_eq!(r.assert_status(201)["author"]["id"], json!(bob.id));
    let entries = commented(&app, &acme, &ticket).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["actor"], key_actor(&app, &acme).await);
    assert_eq!(entries[0]["details"]["authorId"], json!(bob.id));
}

/// The ticket as `acme`'s key reads it.
async fn read(app: &TestApp, acme: &TestCompany, ticket: &str) -> Value {
    app.get(&format!("/tickets/{ticket}"), &acme.key)
        .await
        .assert_status(200)
        .clone()
}

async fn an_author_less_comment_is_no_first_response(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    fast_policy(&app, &acme).await;
    let ticket = high_ticket(&app, &acme).await;
    let due = read(&app, &acme, &ticket).await["sla"]["firstResponseDueAt"].clone();

    app.post(
        &format!("/tickets/{ticket}/comments"),
        &acme.key,
        json!({"body": "We got your request and will answer soon."}),
    )
    .await
    .assert_status(201);

    let after = read(&app, &acme, &ticket).await;
    assert_eq!(after["sla"]["fulfilled"], json!({}));
    assert_eq!(after["sla"]["firstResponseDueAt"], due);
}

async fn a_comment_with_an_author_is_the_first_response(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    fast_policy(&app, &acme).await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let ticket = high_ticket(&app, &acme).await;

    let r = send(
        &app,
        &ann,
        Method::POST,
        &format!("/tickets/{ticket}/comments"),
        json!({"body": "On it"}),
    )
    .await;

    let reply = r.assert_status(201);
    let after = read(&app, &acme, &ticket).await;
    assert_eq!(
        after["sla"]["fulfilled"],
        json!({"firstResponse": reply["createdAt"]})
    );
}
