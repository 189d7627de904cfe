//! The jobs of data requests: `GET /jobs/{id}` reads state and progress,
//! only for the company that asked; erasing takes `contacts:erase`; a
//! forged or expired export link opens nothing.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::person::{run_request, store};
use super::{contact, text};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_request_is_queued_then_done,
    another_companys_job_is_not_found,
    erasing_takes_its_scope,
    a_forged_export_link_opens_nothing,
    an_unknown_contact_has_no_export,
);

async fn a_request_is_queued_then_done(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"name": "Kim"})).await;
    let queued = app
        .post(
            &format!("/contacts/{}/export", text(&kim, "id")),
            &acme.key,
            json!({}),
        )
        .await
        .assert_status(202)
        .clone();
    let done = run_request(&app, &acme, text(&kim, "id"), "export").await;
    assert_eq!(
        (
            queued["state"].clone(),
            queued["progress"].clone(),
            done["progress"].clone(),
            done["kind"].clone(),
            done["contactId"].clone()
        ),
        (
            json!("queued"),
            json!(0),
            json!(100),
            json!("export"),
            kim["id"].clone()
        )
    );
}

async fn another_companys_job_is_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let kim = contact(&app, &acme, json!({"name": "Kim"})).await;
    let job = run_request(&app, &acme, text(&kim, "id"), "export").await;
    app.get(&format!("/jobs/{}", text(&job, "id")), &globex.key)
        .await
        .assert_error(404, "not_found");
}

async fn erasing_takes_its_scope(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"name": "Kim"})).await;
    let key = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::ContactsErase),
        )
        .await;
    app.post(
        &format!("/contacts/{}/erase", text(&kim, "id")),
        &key,
        json!({}),
    )
    .await
    .assert_error(403, "insufficient_scope");
}

async fn a_forged_export_link_opens_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = store(&app, &acme).await;
    let job = run_request(&app, &acme, &kim.contact, "export").await;
    let url = text(&job, "downloadUrl");
    let last = if url.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &url[..url.len() - 1]);
    let response = app.client.get(&forged).send().await.expect("download");
    assert_eq!(response.status().as_u16(), 403);
}

async fn an_unknown_contact_has_no_export(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let path = format!("/contacts/{}/export", uuid::Uuid::now_v7());
    app.post(&path, &acme.key, json!({}))
        .await
        .assert_error(404, "not_found");
}
