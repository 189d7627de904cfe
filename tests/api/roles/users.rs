//! The role a user holds: `roleName` on create and PATCH (a built-in or a
//! custom role of the company), `role` alone as before, `teamsOnly` read
//! from the role, `isActive`, and who may give which role.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{custom_role, path_of, user_holding};
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    a_user_created_with_a_role_name_holds_it,
    a_user_reads_as_admin_for_the_owner_role,
    a_user_created_with_role_alone_holds_that_built_in_role,
    a_user_created_without_a_role_is_an_agent,
    a_user_holding_a_custom_role_reads_its_teams_only,
    a_user_keeps_a_custom_role_that_is_renamed,
    a_user_is_given_another_role,
    a_user_is_deactivated,
    the_users_list_shows_each_role,
    an_unknown_role_name_is_refused,
    another_companys_role_name_is_refused,
    role_and_role_name_together_are_refused,
    a_key_without_every_scope_cannot_make_an_owner,
    a_key_cannot_demote_a_user_holding_scopes_it_lacks,
);

async fn a_user_created_with_a_role_name_holds_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = user_holding(&app, &acme, "ada@acme.test", "viewer").await;
    let read = app.get(&path_of("users", &user), &acme.key).await;
    let read = read.assert_status(200);
    assert_eq!(
        (
            &read["roleName"],
            &read["role"],
            &read["teamsOnly"],
            &read["isActive"]
        ),
        (
            &json!("viewer"),
            &json!("AGENT"),
            &json!(false),
            &json!(true)
        )
    );
}

async fn a_user_reads_as_admin_for_the_owner_role(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = user_holding(&app, &acme, "ada@acme.test", "owner").await;
    assert_eq!(
        (&user["roleName"], &user["role"]),
        (&json!("owner"), &json!("ADMIN"))
    );
}

async fn a_user_created_with_role_alone_holds_that_built_in_role(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test", "role": "ADMIN"}),
        )
        .await;
    assert_eq!(user.assert_status(201)["roleName"], "admin");
}

async fn a_user_created_without_a_role_is_an_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await;
    let user = user.assert_status(201);
    assert_eq!(
        (&user["roleName"], &user["role"]),
        (&json!("agent"), &json!("AGENT"))
    );
}

async fn a_user_holding_a_custom_role_reads_its_teams_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    app.post(
        "/roles",
        &acme.key,
        json!({"name": "Tier 2", "scopes": ["tickets:read"], "teamsOnly": true}),
    )
    .await
    .assert_status(201);
    let user = user_holding(&app, &acme, "ada@acme.test", "tier 2").await;
    assert_eq!(
        (&user["roleName"], &user["role"], &user["teamsOnly"]),
        (&json!("Tier 2"), &json!("AGENT"), &json!(true))
    );
}

async fn a_user_keeps_a_custom_role_that_is_renamed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = custom_role(&app, &acme, "Leads", &["tickets:read"]).await;
    let user = user_holding(&app, &acme, "ada@acme.test", "Leads").await;
    app.patch(
        &path_of("roles", &role),
        &acme.key,
        json!({"name": "Team leads"}),
    )
    .await
    .assert_status(200);
    let read = app.get(&path_of("users", &user), &acme.key).await;
    assert_eq!(read.assert_status(200)["roleName"], "Team leads");
}

async fn a_user_is_given_another_role(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    custom_role(&app, &acme, "Leads", &["tickets:read"]).await;
    let user = user_holding(&app, &acme, "ada@acme.test", "admin").await;
    let changed = app
        .patch(
            &path_of("users", &user),
            &acme.key,
            json!({"roleName": "Leads"}),
        )
        .await;
    let changed = changed.assert_status(200);
    assert_eq!(
        (&changed["roleName"], &changed["role"]),
        (&json!("Leads"), &json!("AGENT"))
    );
}

async fn a_user_is_deactivated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = user_holding(&app, &acme, "ada@acme.test", "agent").await;
    let path = path_of("users", &user);
    app.patch(&path, &acme.key, json!({"isActive": false}))
        .await
        .assert_status(200);
    let read = app.get(&path, &acme.key).await;
    assert_eq!(read.assert_status(200)["isActive"], false);
}

async fn the_users_list_shows_each_role(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    custom_role(&app, &acme, "Leads", &["tickets:read"]).await;
    user_holding(&app, &acme, "ada@acme.test", "viewer").await;
    app.state.clock.advance(chrono::TimeDelta::seconds(1));
    user_holding(&app, &acme, "bob@acme.test", "Leads").await;
    let list = app.get("/users", &acme.key).await;
    let names: Vec<&str> = list.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|u| u["roleName"].as_str().expect("roleName"))
        .collect();
    assert_eq!(names, ["Leads", "viewer"]);
}

async fn an_unknown_role_name_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test", "roleName": "captain"}),
        )
        .await;
    assert_invalid(&r, &["roleName"]);
}

async fn another_companys_role_name_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    custom_role(&app, &other, "Leads", &["tickets:read"]).await;
    let user = user_holding(&app, &acme, "ada@acme.test", "agent").await;
    let r = app
        .patch(
            &path_of("users", &user),
            &acme.key,
            json!({"roleName": "Leads"}),
        )
        .await;
    assert_invalid(&r, &["roleName"]);
}

async fn role_and_role_name_together_are_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test", "role": "ADMIN", "roleName": "viewer"}),
        )
        .await;
    assert_invalid(&r, &["roleName"]);
}

async fn a_key_without_every_scope_cannot_make_an_owner(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let admin_like = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::BillingWrite),
        )
        .await;
    let r = app
        .post(
            "/users",
            &admin_like,
            json!({"name": "Ada", "email": "ada@acme.test", "roleName": "owner"}),
        )
        .await;
    crate::access::assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: billing:write",
    );
}

async fn a_key_cannot_demote_a_user_holding_scopes_it_lacks(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let owner = user_holding(&app, &acme, "ada@acme.test", "owner").await;
    let admin_like = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::BillingWrite),
        )
        .await;
    let path = path_of("users", &owner);
    let r = app
        .patch(&path, &admin_like, json!({"isActive": false}))
        .await;
    r.assert_error(403, "insufficient_scope");
    let read = app.get(&path, &acme.key).await;
    assert_eq!(read.assert_status(200)["isActive"], true);
}
