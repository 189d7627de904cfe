//! A key manages only keys whose scopes it holds itself: one with fewer
//! scopes can neither reactivate nor rename (nor change) a key holding
//! more, an admin's deactivation included; nor can any key a key holding a
//! scope this build does not know (a newer build's, during a rolling
//! deploy), which it cannot be shown to hold.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{assert_message, key_id};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_key_cannot_reactivate_a_deactivated_key_holding_more_scopes,
    a_key_cannot_rename_a_key_holding_more_scopes,
    a_key_cannot_reactivate_a_key_holding_a_scope_this_build_does_not_know,
);

/// The path of a key holding every scope that the admin deactivated, and
/// a key that manages keys but holds fewer scopes.
async fn deactivated_admin_key_and_limited_key(app: &TestApp) -> (String, String, String) {
    let acme = app.company().await;
    let strong = app.key(acme.company.id, Mode::Test, ScopeSet::all()).await;
    let path = format!("/api-keys/{}", key_id(app, &strong).await);
    app.patch(&path, &acme.key, json!({"isActive": false}))
        .await
        .assert_status(200);
    let limited = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ApiKeysRead, Scope::ApiKeysWrite, Scope::TicketsRead]),
        )
        .await;
    (acme.key, path, limited)
}

async fn a_key_cannot_reactivate_a_deactivated_key_holding_more_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, path, limited) = deactivated_admin_key_and_limited_key(&app).await;
    let r = app.patch(&path, &limited, json!({"isActive": true})).await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: tickets:write",
    );
    let after = app.get(&path, &admin).await;
    assert_eq!(after.assert_status(200)["isActive"], false);
}

async fn a_key_cannot_rename_a_key_holding_more_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, path, limited) = deactivated_admin_key_and_limited_key(&app).await;
    let r = app
        .patch(&path, &limited, json!({"name": "mine now"}))
        .await;
    r.assert_error(403, "insufficient_scope");
    let after = app.get(&path, &admin).await;
    assert_ne!(after.assert_status(200)["name"], "mine now");
}

async fn a_key_cannot_reactivate_a_key_holding_a_scope_this_build_does_not_know(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let newer = app.key(acme.company.id, Mode::Test, ScopeSet::all()).await;
    let id = key_id(&app, &newer).await;
    let path = format!("/api-keys/{id}");
    app.patch(&path, &acme.key, json!({"isActive": false}))
        .await
        .assert_status(200);
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE api_keys SET scopes = 'all reports:export' WHERE id = $1")
        .bind(id).execute(c).await.expect("write a newer build's scope").rows_affected());
    // Every scope this build knows is not enough.
    let all_known = app.key(acme.company.id, Mode::Test, ScopeSet::all()).await;
    let r = app
        .patch(&path, &all_known, json!({"isActive": true}))
        .await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: reports:export",
    );
    let after = app.get(&path, &acme.key).await;
    assert_eq!(after.assert_status(200)["isActive"], false);
}
