//! Internal notes reach only keys that read them (`tickets:write`), on
//! every way a comment is read: the comment list and the change feed here
//! (search and sockets have their own tests).

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{id_of, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_read_only_key_lists_comments_without_internal_notes,
    a_read_only_key_reads_the_feed_without_internal_notes,
);

/// A ticket with a public comment and an internal note; its id and the
/// public comment's.
async fn discussed_ticket(app: &TestApp, acme: &TestCompany) -> (String, String) {
    let ticket = id_of(&ticket(app, acme, json!({"subject": "Refund"})).await);
    let comment = |body: &'static str, internal: bool| {
        let path = format!("/tickets/{ticket}/comments");
        async move {
            let json = json!({"body": body, "isInternal": internal});
            id_of(app.post(&path, &acme.key, json).await.assert_status(201))
        }
    };
    let public = comment("We are on it", false).await;
    comment("Customer abused the last refund", true).await;
    (ticket, public)
}

async fn read_only_key(app: &TestApp, acme: &TestCompany) -> String {
    let scopes = ScopeSet::from_scopes([Scope::TicketsRead]);
    app.key(acme.company.id, Mode::Test, scopes).await
}

fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(id_of)
        .collect()
}

async fn a_read_only_key_lists_comments_without_internal_notes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (ticket, public) = discussed_ticket(&app, &acme).await;
    let reader = read_only_key(&app, &acme).await;

    let listed = app
        .get(&format!("/tickets/{ticket}/comments"), &reader)
        .await;
    let page = listed.assert_status(200);
    assert_eq!(ids(page), vec![public]);
    assert_eq!(page["total"], json!(1));
}

async fn a_read_only_key_reads_the_feed_without_internal_notes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, public) = discussed_ticket(&app, &acme).await;
    let reader = read_only_key(&app, &acme).await;

    let feed = app.get("/changes?types=comment", &reader).await;
    assert_eq!(ids(feed.assert_status(200)), vec![public]);
}
