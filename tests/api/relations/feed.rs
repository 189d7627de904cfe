//! The change feed after a merge, a split, a link and a snooze's wake: the
//! feed carries record changes, not events, so each of `ticket.merged`,
//! `ticket.split`, `ticket.linked` and `ticket.unsnoozed` shows as an
//! upsert of each ticket it changed, the ticket as it now is, naming who
//! made the change; and each comment a merge, its undo or a split moves is
//! an upsert of that comment under the ticket it is on now, so that a
//! mirror following the feed moves it too.

use chrono::Duration;
use serde_json::{Value, json};

use super::{comment, links_of, quiet, ticket};
use crate::actors::{key_actor, system_actor};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_merge_gives_both_tickets_an_entry_by_its_actor,
    a_split_gives_both_tickets_an_entry_by_its_actor,
    a_link_gives_both_tickets_an_entry_by_its_actor,
    a_snoozes_wake_gives_the_ticket_an_entry_by_the_system,
    a_merge_gives_each_moved_comment_an_entry_under_the_target,
    a_merges_undo_gives_each_comment_an_entry_back_under_the_source,
    a_split_gives_each_moved_comment_an_entry_under_the_new_ticket,
);

/// The feed's current end: entries read `since` it are the later changes.
async fn feed_end(app: &TestApp, acme: &TestCompany) -> String {
    let r = app.get("/changes?limit=1000", &acme.key).await;
    r.assert_status(200)["nextCursor"]
        .as_str()
        .expect("nextCursor")
        .to_string()
}

/// The entries after `since`, oldest first.
async fn entries_since(app: &TestApp, acme: &TestCompany, since: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/changes?since={since}&limit=1000"), &acme.key)
        .await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("entries")
        .clone()
}

/// The last of `entries` about ticket `id` (panics naming the entries when
/// there is none).
fn last_of<'a>(entries: &'a [Value], id: &str) -> &'a Value {
    entries
        .iter()
        .rev()
        .find(|e| e["type"] == "ticket" && e["id"] == id)
        .unwrap_or_else(|| panic!("no entry of ticket {id}: {entries:?}"))
}

/// `(op, actor, ticketId)` of the last entry of comment `id` (panics
/// naming the entries when there is none).
fn comment_entry(entries: &[Value], id: &Value) -> (Value, Value, Value) {
    let entry = entries
        .iter()
        .rev()
        .find(|e| e["type"] == "comment" && e["id"] == *id)
        .unwrap_or_else(|| panic!("no entry of comment {id}: {entries:?}"));
    (
        entry["op"].clone(),
        entry["actor"].clone(),
        entry["record"]["ticketId"].clone(),
    )
}

/// A reply and an internal note on ticket `id`; their ids.
async fn reply_and_note(app: &TestApp, acme: &TestCompany, id: &str) -> [Value; 2] {
    let reply = comment(app, acme, id, json!({"body": "Still no refund"})).await;
    let reply = reply.assert_status(201)["id"].clone();
    let note = json!({"body": "Refunded twice before", "isInternal": true});
    let note = comment(app, acme, id, note).await.assert_status(201)["id"].clone();
    [reply, note]
}

/// `(op, actor)` of an entry.
/// Merges `source` into `target` with the company's key.
async fn merge(app: &TestApp, acme: &TestCompany, source: &str, target: &str) {
    app.post(
        &format!("/tickets/{source}/merge"),
        &acme.key,
        json!({"into": target}),
    )
    .await
    .assert_status(200);
}

fn op_and_actor(entry: &Value) -> (Value, Value) {
    (entry["op"].clone(), entry["actor"].clone())
}

async fn a_merge_gives_both_tickets_an_entry_by_its_actor(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let source = ticket(&app, &acme, "Refund, again").await;
    let target = ticket(&app, &acme, "Refund").await;
    let since = feed_end(&app, &acme).await;

    merge(&app, &acme, &source, &target).await;

    let entries = entries_since(&app, &acme, &since).await;
    let merged = last_of(&entries, &source);
    let into = last_of(&entries, &target);
    assert_eq!(
        (
            op_and_actor(merged),
            merged["record"]["mergedInto"].clone(),
            op_and_actor(into),
            links_of(&into["record"]),
        ),
        (
            (json!("upsert"), key.clone()),
            json!(target),
            (json!("upsert"), key),
            vec![(source.clone(), "merged_from".to_string())],
        ),
        "{entries:?}"
    );
}

async fn a_split_gives_both_tickets_an_entry_by_its_actor(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let old = ticket(&app, &acme, "Invoice and password").await;
    let said = comment(&app, &acme, &old, json!({"body": "Also: my password"})).await;
    let said = said.assert_status(201)["id"].clone();
    let since = feed_end(&app, &acme).await;

    let r = app
        .post(
            &format!("/tickets/{old}/split"),
            &acme.key,
            json!({"commentId": said}),
        )
        .await;
    let new = r.assert_status(201)["id"].as_str().expect("id").to_string();

    let entries = entries_since(&app, &acme, &since).await;
    let made = last_of(&entries, &new);
    let left = last_of(&entries, &old);
    assert_eq!(
        (
            op_and_actor(made),
            links_of(&made["record"]),
            op_and_actor(left),
            links_of(&left["record"]),
        ),
        (
            (json!("upsert"), key.clone()),
            vec![(old.clone(), "split_from".to_string())],
            (json!("upsert"), key),
            vec![(new.clone(), "split_into".to_string())],
        ),
        "{entries:?}"
    );
}

async fn a_link_gives_both_tickets_an_entry_by_its_actor(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let one = ticket(&app, &acme, "Printer").await;
    let other = ticket(&app, &acme, "Printer, too").await;
    let since = feed_end(&app, &acme).await;

    app.post(
        &format!("/tickets/{one}/links"),
        &acme.key,
        json!({"ticketId": other, "kind": "related"}),
    )
    .await
    .assert_status(201);

    let entries = entries_since(&app, &acme, &since).await;
    let first = last_of(&entries, &one);
    let second = last_of(&entries, &other);
    assert_eq!(
        (
            op_and_actor(first),
            links_of(&first["record"]),
            op_and_actor(second),
            links_of(&second["record"]),
        ),
        (
            (json!("upsert"), key.clone()),
            vec![(other.clone(), "related".to_string())],
            (json!("upsert"), key),
            vec![(one.clone(), "related".to_string())],
        ),
        "{entries:?}"
    );
}

async fn a_snoozes_wake_gives_the_ticket_an_entry_by_the_system(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, "Waiting on the vendor").await;
    let until = (app.state.clock.now().0 + Duration::minutes(5)).to_rfc3339();
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"snoozedUntil": until}),
    )
    .await
    .assert_status(200);
    let since = feed_end(&app, &acme).await;

    app.state.clock.advance(Duration::minutes(5));
    let signer = app.state.link_signer();
    supportdesk::tickets::store::wake_due(&app.state.db, app.state.clock.now(), &signer)
        .await
        .expect("wake pass");

    let entries = entries_since(&app, &acme, &since).await;
    let woken = last_of(&entries, &id);
    assert_eq!(
        (op_and_actor(woken), woken["record"]["snoozedUntil"].clone()),
        ((json!("upsert"), system_actor()), Value::Null),
        "{entries:?}"
    );
}

async fn a_merge_gives_each_moved_comment_an_entry_under_the_target(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let source = ticket(&app, &acme, "Refund, again").await;
    let target = ticket(&app, &acme, "Refund").await;
    let [reply, note] = reply_and_note(&app, &acme, &source).await;
    let since = feed_end(&app, &acme).await;

    merge(&app, &acme, &source, &target).await;

    let entries = entries_since(&app, &acme, &since).await;
    let moved = (json!("upsert"), key, json!(target));
    assert_eq!(
        (
            comment_entry(&entries, &reply),
            comment_entry(&entries, &note)
        ),
        (moved.clone(), moved),
        "{entries:?}"
    );
}

async fn a_merges_undo_gives_each_comment_an_entry_back_under_the_source(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let source = ticket(&app, &acme, "Refund, again").await;
    let target = ticket(&app, &acme, "Refund").await;
    let [reply, note] = reply_and_note(&app, &acme, &source).await;
    merge(&app, &acme, &source, &target).await;
    let since = feed_end(&app, &acme).await;

    app.post(
        &format!("/tickets/{source}/merge/undo"),
        &acme.key,
        json!({}),
    )
    .await
    .assert_status(200);

    let entries = entries_since(&app, &acme, &since).await;
    let back = (json!("upsert"), key, json!(source));
    assert_eq!(
        (
            comment_entry(&entries, &reply),
            comment_entry(&entries, &note)
        ),
        (back.clone(), back),
        "{entries:?}"
    );
}

async fn a_split_gives_each_moved_comment_an_entry_under_the_new_ticket(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let old = ticket(&app, &acme, "Invoice and password").await;
    let [reply, note] = reply_and_note(&app, &acme, &old).await;
    let since = feed_end(&app, &acme).await;

    let r = app
        .post(
            &format!("/tickets/{old}/split"),
            &acme.key,
            json!({"commentId": reply, "following": true}),
        )
        .await;
    let new = r.assert_status(201)["id"].clone();

    let entries = entries_since(&app, &acme, &since).await;
    let moved = (json!("upsert"), key, new);
    assert_eq!(
        (
            comment_entry(&entries, &reply),
            comment_entry(&entries, &note)
        ),
        (moved.clone(), moved),
        "{entries:?}"
    );
}
