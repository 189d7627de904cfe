//! The scopes that came with agent accounts: a key without one gets the
//! ordinary 403 naming it, and keys mint keys with them only when they
//! hold them.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use crate::access::assert_message;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_key_without_roles_read_is_refused_naming_it,
    a_key_without_roles_write_cannot_create_a_role,
    a_key_cannot_mint_a_key_with_a_new_scope_it_lacks,
    a_key_mints_a_key_with_a_new_scope_it_holds,
);

async fn a_key_without_roles_read_is_refused_naming_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::RolesRead),
        )
        .await;
    let r = app.get("/roles", &key).await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: roles:read",
    );
}

async fn a_key_without_roles_write_cannot_create_a_role(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::RolesRead, Scope::TicketsRead]),
        )
        .await;
    let r = app
        .post(
            "/roles",
            &key,
            json!({"name": "Leads", "scopes": ["tickets:read"]}),
        )
        .await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: roles:write",
    );
}

async fn a_key_cannot_mint_a_key_with_a_new_scope_it_lacks(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::ContactsErase),
        )
        .await;
    let r = app
        .post(
            "/api-keys",
            &key,
            json!({"name": "eraser", "scopes": ["contacts:erase"]}),
        )
        .await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: contacts:erase",
    );
}

async fn a_key_mints_a_key_with_a_new_scope_it_holds(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "auditor", "scopes": ["audit:read", "ai:write"]}),
        )
        .await;
    assert_eq!(
        r.assert_status(201)["scopes"],
        json!(["audit:read", "ai:write"])
    );
}
