//! Personal API keys: a signed-in agent mints keys that act as them, never
//! beyond their role, narrowed with the role, and dead with the agent.

use reqwest::Method;
use serde_json::{Value, json};

use super::{send, signed_in, ticket, user_id};
use crate::accounts::Browser;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_personal_key_acts_as_its_agent,
    a_personal_key_beyond_the_role_is_refused_naming_the_scopes,
    a_deactivated_agents_key_fails_authentication,
    a_role_change_narrows_the_personal_key,
    an_agent_lists_and_revokes_their_keys,
    a_key_cannot_mint_personal_keys,
);

/// A personal key of the signed-in `browser` with `scopes`: the answer.
async fn mint(app: &TestApp, browser: &Browser, scopes: Value) -> crate::support::TestResponse {
    send(
        app,
        browser,
        Method::POST,
        "/auth/keys",
        json!({"name": "My script", "scopes": scopes}),
    )
    .await
}

/// The secret of a personal key of `browser` with `scopes`.
async fn key_of(app: &TestApp, browser: &Browser, scopes: Value) -> String {
    let r = mint(app, browser, scopes).await;
    r.assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_owned()
}

async fn a_personal_key_acts_as_its_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let key = key_of(&app, &ann, json!(["tickets:read", "tickets:write"])).await;
    let ticket = ticket(&app, &acme).await;

    let r = app
        .post(
            &format!("/tickets/{ticket}/comments"),
            &key,
            json!({"body": "On it"}),
        )
        .await;

    assert_eq!(r.assert_status(201)["authorId"], user_id(&ann));
    let timeline = app
        .get(&format!("/tickets/{ticket}/activities"), &key)
        .await;
    let entries = timeline.assert_status(200)["data"]
        .as_array()
        .expect("entries")
        .clone();
    let commented: Vec<&Value> = entries
        .iter()
        .filter(|entry| entry["type"] == "commented")
        .collect();
    assert_eq!(commented.len(), 1, "{entries:?}");
    assert_eq!(commented[0]["actor"]["type"], "agent");
    assert_eq!(commented[0]["actor"]["id"], user_id(&ann));
}

async fn a_personal_key_beyond_the_role_is_refused_naming_the_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;

    let r = mint(
        &app,
        &ann,
        json!(["tickets:read", "settings:write", "api-keys:write"]),
    )
    .await;

    r.assert_error(403, "insufficient_scope");
    assert_eq!(
        r.body["error"],
        "Missing required permission: settings:write, api-keys:write"
    );
    let listed = ann.get(&app, "/api/v1/auth/keys").await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
}

async fn a_deactivated_agents_key_fails_authentication(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let key = key_of(&app, &ann, json!(["tickets:read"])).await;
    app.get("/tickets", &key).await.assert_status(200);

    let path = format!("/users/{}", user_id(&ann).as_str().expect("id"));
    app.patch(&path, &acme.key, json!({"isActive": false}))
        .await
        .assert_status(200);

    app.get("/tickets", &key)
        .await
        .assert_error(401, "invalid_api_key");
}

async fn a_role_change_narrows_the_personal_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let key = key_of(&app, &ann, json!(["tickets:read", "tickets:write"])).await;
    let new_ticket = json!({"subject": "Printer on fire", "entityId": acme.entity.id});
    app.post("/tickets", &key, new_ticket.clone())
        .await
        .assert_status(201);

    let path = format!("/users/{}", user_id(&ann).as_str().expect("id"));
    app.patch(&path, &acme.key, json!({"roleName": "viewer"}))
        .await
        .assert_status(200);

    let refused = app.post("/tickets", &key, new_ticket).await;
    refused.assert_error(403, "insufficient_scope");
    assert_eq!(
        refused.body["error"],
        "Missing required permission: tickets:write"
    );
    app.get("/tickets", &key).await.assert_status(200);
}

async fn an_agent_lists_and_revokes_their_keys(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let minted = mint(&app, &ann, json!(["tickets:read"])).await;
    let minted = minted.assert_status(201).clone();
    let key = minted["key"].as_str().expect("key");
    assert_eq!(minted["userId"], user_id(&ann));

    let listed = ann.get(&app, "/api/v1/auth/keys").await;
    let data = listed.assert_status(200)["data"].clone();
    assert_eq!(data.as_array().map(Vec::len), Some(1));
    assert_eq!(data[0]["id"], minted["id"]);
    let id = minted["id"].as_str().expect("id");
    let path = format!("/api/v1/auth/keys/{id}");
    ann.send(&app, Method::DELETE, &path, None, true)
        .await
        .assert_status(204);

    app.get("/tickets", key)
        .await
        .assert_error(401, "invalid_api_key");
}

async fn a_key_cannot_mint_personal_keys(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let r = app
        .post(
            "/auth/keys",
            &acme.key,
            json!({"name": "My script", "scopes": ["tickets:read"]}),
        )
        .await;

    r.assert_error(401, "sign_in_required");
}
