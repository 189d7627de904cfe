//! Cursors are opaque and tamper-evident: a changed one, or one replayed on
//! another filter set or list, is a 400 on `after`.

use serde_json::Value;

use super::{after, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    a_cursor_with_one_character_changed_is_rejected,
    a_cursor_replayed_with_other_filters_is_rejected,
    a_cursor_replayed_on_another_list_is_rejected,
    after_with_offset_is_rejected,
);

/// A company with three tickets and the cursor after the first of
/// `GET /tickets?limit=1&status=OPEN`.
async fn with_cursor(backend: Backend) -> (TestApp, TestCompany, String) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for n in 0..3 {
        ticket(&app, &acme, &format!("T{n}")).await;
    }
    let r = app.get("/tickets?limit=1&status=OPEN", &acme.key).await;
    let cursor = r.assert_status(200)["nextCursor"]
        .as_str()
        .expect("cursor")
        .to_string();
    (app, acme, cursor)
}

fn assert_bad_cursor(r: &TestResponse) {
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"][0]["field"], "after", "{}", r.body);
}

async fn a_cursor_with_one_character_changed_is_rejected(backend: Backend) {
    let (app, acme, cursor) = with_cursor(backend).await;
    let mut chars: Vec<char> = cursor.chars().collect();
    let middle = chars.len() / 2;
    chars[middle] = if chars[middle] == 'A' { 'B' } else { 'A' };
    let changed: String = chars.into_iter().collect();
    let r = app
        .get(&after("/tickets?limit=1&status=OPEN", &changed), &acme.key)
        .await;
    assert_bad_cursor(&r);
}

async fn a_cursor_replayed_with_other_filters_is_rejected(backend: Backend) {
    let (app, acme, cursor) = with_cursor(backend).await;
    let r = app
        .get(&after("/tickets?limit=1&priority=HIGH", &cursor), &acme.key)
        .await;
    assert_bad_cursor(&r);
}

async fn a_cursor_replayed_on_another_list_is_rejected(backend: Backend) {
    let (app, acme, cursor) = with_cursor(backend).await;
    let r = app
        .get(&after("/chat/sessions?limit=1", &cursor), &acme.key)
        .await;
    assert_bad_cursor(&r);
}

async fn after_with_offset_is_rejected(backend: Backend) {
    let (app, acme, cursor) = with_cursor(backend).await;
    let path = after("/tickets?limit=1&status=OPEN&offset=1", &cursor);
    let r = app.get(&path, &acme.key).await;
    assert_bad_cursor(&r);
    let details: &Value = &r.body["details"];
    assert_eq!(details[0]["message"], "cannot be combined with offset");
}
