//! `/roles`: the built-in roles listed first and read-only, custom roles
//! created, read, changed and deleted, their validation, a role held by a
//! user kept, and another company's role not found.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{custom_role, path_of, user_holding};
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    the_built_in_roles_are_listed_first,
    a_custom_role_is_listed_after_the_built_in_ones,
    a_custom_role_is_created_with_its_fields,
    a_custom_role_is_changed,
    a_custom_role_is_deleted,
    a_role_with_an_unknown_scope_is_refused,
    a_role_without_scopes_is_refused,
    a_role_named_like_a_built_in_one_is_refused,
    a_role_name_taken_in_another_case_is_a_conflict,
    a_role_held_by_a_user_cannot_be_deleted,
    another_companys_role_is_not_found,
    a_key_cannot_grant_a_role_scopes_it_lacks,
    a_key_cannot_change_a_role_holding_scopes_it_lacks,
);

async fn the_built_in_roles_are_listed_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let page = app
        .get("/roles", &acme.key)
        .await
        .assert_status(200)
        .clone();
    let names: Vec<&str> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|r| r["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["owner", "admin", "agent", "viewer"]);
    assert_eq!(page["total"], 4);
    assert_eq!(page["data"][0]["builtIn"], true);
    assert_eq!(page["data"][0]["id"], serde_json::Value::Null);
    assert_eq!(
        page["data"][0]["scopes"].as_array().expect("scopes").len(),
        Scope::ALL.len()
    );
}

async fn a_custom_role_is_listed_after_the_built_in_ones(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    custom_role(&app, &acme, "Tier 2", &["tickets:read"]).await;
    custom_role(&app, &acme, "auditors", &["audit:read"]).await;
    let page = app
        .get("/roles?offset=3&limit=2", &acme.key)
        .await
        .assert_status(200)
        .clone();
    let names: Vec<&str> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|r| r["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        (names, page["total"].clone()),
        (vec!["viewer", "auditors"], json!(6))
    );
}

async fn a_custom_role_is_created_with_its_fields(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let created = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": " Leads ", "scopes": ["tickets:read", "roles:read"], "teamsOnly": true}),
        )
        .await
        .assert_status(201)
        .clone();
    let read = app.get(&path_of("roles", &created), &acme.key).await;
    let read = read.assert_status(200);
    assert_eq!(read["name"], "Leads");
    assert_eq!(read["scopes"], json!(["tickets:read", "roles:read"]));
    assert_eq!(read["teamsOnly"], true);
    assert_eq!(read["builtIn"], false);
}

async fn a_custom_role_is_changed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = custom_role(&app, &acme, "Leads", &["tickets:read"]).await;
    let changed = app
        .patch(
            &path_of("roles", &role),
            &acme.key,
            json!({"name": "Team leads", "scopes": ["macros:write"], "teamsOnly": true}),
        )
        .await;
    let changed = changed.assert_status(200);
    assert_eq!(
        (&changed["name"], &changed["scopes"], &changed["teamsOnly"]),
        (&json!("Team leads"), &json!(["macros:write"]), &json!(true))
    );
}

async fn a_custom_role_is_deleted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = custom_role(&app, &acme, "Leads", &["tickets:read"]).await;
    let path = path_of("roles", &role);
    app.delete(&path, &acme.key).await.assert_status(204);
    app.get(&path, &acme.key)
        .await
        .assert_error(404, "not_found");
}

async fn a_role_with_an_unknown_scope_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "Leads", "scopes": ["tickets:read", "tickets:fly"]}),
        )
        .await;
    assert_invalid(&r, &["scopes"]);
}

async fn a_role_without_scopes_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post("/roles", &acme.key, json!({"name": "Leads", "scopes": []}))
        .await;
    assert_invalid(&r, &["scopes"]);
}

async fn a_role_named_like_a_built_in_one_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "Viewer", "scopes": ["tickets:read"]}),
        )
        .await;
    assert_invalid(&r, &["name"]);
}

async fn a_role_name_taken_in_another_case_is_a_conflict(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    custom_role(&app, &acme, "Leads", &["tickets:read"]).await;
    let r = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "LEADS", "scopes": ["tickets:read"]}),
        )
        .await;
    r.assert_error(409, "conflict");
}

async fn a_role_held_by_a_user_cannot_be_deleted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = custom_role(&app, &acme, "Leads", &["tickets:read"]).await;
    user_holding(&app, &acme, "ada@acme.test", "Leads").await;
    let path = path_of("roles", &role);
    let r = app.delete(&path, &acme.key).await;
    r.assert_error(409, "role_in_use");
    app.get(&path, &acme.key).await.assert_status(200);
}

async fn another_companys_role_is_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let theirs = path_of(
        "roles",
        &custom_role(&app, &other, "Leads", &["tickets:read"]).await,
    );
    let read = app.get(&theirs, &acme.key).await;
    let changed = app.patch(&theirs, &acme.key, json!({"name": "Mine"})).await;
    let deleted = app.delete(&theirs, &acme.key).await;
    let listed = app.get("/roles", &acme.key).await;

    read.assert_error(404, "not_found");
    changed.assert_error(404, "not_found");
    deleted.assert_error(404, "not_found");
    assert_eq!(listed.assert_status(200)["total"], 4);
}

async fn a_key_cannot_grant_a_role_scopes_it_lacks(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let limited = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::RolesRead, Scope::RolesWrite]),
        )
        .await;
    let r = app
        .post(
            "/roles",
            &limited,
            json!({"name": "Leads", "scopes": ["contacts:erase"]}),
        )
        .await;
    crate::access::assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: contacts:erase",
    );
}

async fn a_key_cannot_change_a_role_holding_scopes_it_lacks(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = custom_role(&app, &acme, "Erasers", &["contacts:erase"]).await;
    let limited = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::RolesRead, Scope::RolesWrite]),
        )
        .await;
    let path = path_of("roles", &role);
    let renamed = app.patch(&path, &limited, json!({"name": "Mine"})).await;
    let deleted = app.delete(&path, &limited).await;

    renamed.assert_error(403, "insufficient_scope");
    deleted.assert_error(403, "insufficient_scope");
}
