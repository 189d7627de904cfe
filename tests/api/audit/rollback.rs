//! An entry is written in the transaction of its change: a change that
//! rolls back leaves no entry, and a refused change writes none.

use serde_json::json;
use supportdesk::auth::{Mode, Tenant};

use super::entries_of;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_rolled_back_change_leaves_no_entry,
    a_refused_change_writes_no_entry,
);

/// A user created in a transaction that then rolls back: neither the user
/// nor the entry `users::store::create_in` wrote with it remains.
async fn a_rolled_back_change_leaves_no_entry(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    let new = supportdesk::users::store::NewUser {
        id: None,
        name: "Ada".into(),
        email: "ada@acme.test".into(),
        role: supportdesk::roles::RoleRef::BuiltIn(supportdesk::roles::BuiltInRole::Agent),
    };
    let mut tx = app.state.db.begin().await.expect("tx");
    supportdesk::users::store::create_in(&mut tx, &tenant, new, app.state.clock.now())
        .await
        .expect("created in the transaction");
    drop(tx);

    assert!(entries_of(&app, &acme, "user.created").await.is_empty());
    let users = app.get("/users", &acme.key).await.assert_status(200)["total"].clone();
    assert_eq!(users, 0);
}

/// A second role of a taken name is refused (409): one `role.created`.
async fn a_refused_change_writes_no_entry(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"name": "Triage", "scopes": ["tickets:read"]});
    app.post("/roles", &acme.key, body.clone())
        .await
        .assert_status(201);

    app.post("/roles", &acme.key, body)
        .await
        .assert_error(409, "conflict");

    assert_eq!(entries_of(&app, &acme, "role.created").await.len(), 1);
}
