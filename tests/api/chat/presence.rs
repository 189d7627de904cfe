//! Agent heartbeats that register users: emails as `/users` stores them,
//! and ids of other companies refused without saying they exist.

use serde_json::json;
use uuid::Uuid;

use super::tenant;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_heartbeat_stores_the_email_lower_case,
    another_companys_user_id_gets_the_answer_of_an_unregistrable_id,
);

async fn a_heartbeat_stores_the_email_lower_case(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user_id = Uuid::now_v7();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({"userId": user_id, "name": "Ann", "email": "Ann.Lee@ACME.Test"}),
    )
    .await
    .assert_status(200);

    let user = supportdesk::users::store::find(&app.state.db, acme.company.id, user_id)
        .await
        .expect("registered");
    assert_eq!(user.email, "ann.lee@acme.test");
}

async fn another_companys_user_id_gets_the_answer_of_an_unregistrable_id(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let foreign = supportdesk::users::store::create(
        &app.state.db,
        &tenant(&other),
        supportdesk::users::store::NewUser {
            id: None,
            name: "Olga".into(),
            email: "olga@other.test".into(),
            role: supportdesk::users::Role::Agent.into(),
        },
        app.state.clock.now(),
    )
    .await
    .expect("user of the other company");

    let heartbeat = |user_id: Uuid| {
        app.post(
            "/chat/agent-presence",
            &acme.key,
            json!({"userId": user_id, "name": "Eve", "email": "eve@acme.test"}),
        )
    };
    let for_foreign = heartbeat(foreign.id).await;
    let for_unregistrable = heartbeat(Uuid::nil()).await;

    for_foreign.assert_error(400, "validation_failed");
    assert_eq!(for_foreign.body["details"][0]["field"], "userId");
    assert_eq!(
        (for_foreign.status, for_foreign.text),
        (for_unregistrable.status, for_unregistrable.text)
    );
}
