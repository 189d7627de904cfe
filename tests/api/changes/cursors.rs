//! Cursors and scopes: a garbage cursor is 400, a cursor whose entries the
//! retention pass removed is 410, a read without a cursor starts at what
//! is retained; each type needs its read scope.

use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{
    Follower, expire_every_event, id_of, new_session, new_ticket, number_every_entry, read,
};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_garbage_cursor_is_400,
    a_cursor_whose_entries_retention_removed_is_410,
    a_read_without_a_cursor_starts_after_what_retention_removed,
    a_type_the_key_cannot_read_is_403,
    without_types_a_key_reads_only_the_types_its_scopes_cover,
    an_unknown_type_is_400,
);

async fn a_garbage_cursor_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let response = app.get("/changes?since=not-a-cursor", &acme.key).await;

    response.assert_error(400, "validation_failed");
    assert_eq!(response.body["details"][0]["field"], "since");
}

/// Numbers every entry (as the numbering worker would have by then), then
/// makes every event older than retention and runs a pass.
async fn expire_everything(app: &TestApp) {
    number_every_entry(app).await;
    assert!(expire_every_event(app).await > 0);
}

async fn a_cursor_whose_entries_retention_removed_is_410(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let start = read(&app, &acme.key, None, 10).await["nextCursor"]
        .as_str()
        .expect("cursor")
        .to_string();
    new_ticket(&app, &acme, "Soon forgotten").await;
    expire_everything(&app).await;

    let response = app.get(&format!("/changes?since={start}"), &acme.key).await;

    response.assert_error(410, "cursor_expired");
}

async fn a_read_without_a_cursor_starts_after_what_retention_removed(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    new_ticket(&app, &acme, "Soon forgotten").await;
    expire_everything(&app).await;
    let recent = id_of(&new_ticket(&app, &acme, "Recent").await);

    let mut follower = Follower::default();
    follower.catch_up(&app, &acme.key).await;

    let ids: Vec<String> = follower.seen.iter().map(id_of).collect();
    assert_eq!(ids, vec![recent]);
}

async fn tickets_reader(app: &TestApp, acme: &TestCompany) -> String {
    let scopes = ScopeSet::from_scopes([Scope::TicketsRead]);
    app.key(acme.company.id, Mode::Test, scopes).await
}

async fn a_type_the_key_cannot_read_is_403(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = tickets_reader(&app, &acme).await;

    let response = app.get("/changes?types=ticket,chat_session", &key).await;

    response.assert_error(403, "insufficient_scope");
}

async fn without_types_a_key_reads_only_the_types_its_scopes_cover(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = tickets_reader(&app, &acme).await;
    let ticket = id_of(&new_ticket(&app, &acme, "Visible").await);
    new_session(&app, &acme).await;

    let mut follower = Follower::default();
    follower.catch_up(&app, &key).await;

    let ids: Vec<String> = follower.seen.iter().map(id_of).collect();
    assert_eq!(ids, vec![ticket]);
}

async fn an_unknown_type_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let response = app.get("/changes?types=ticket,user", &acme.key).await;

    response.assert_error(400, "validation_failed");
    assert_eq!(response.body["details"][0]["field"], "types");
}
