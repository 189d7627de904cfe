//! Case grouping: a new message from a contact whose open ticket changed
//! within the channel's window still opens its own ticket, suggested as
//! merged into that case (a link on both tickets); accepting it is the
//! ticket merge, and undoing that merge brings the suggestion back while
//! both tickets are open. Past the window there is no suggestion.

use chrono::Duration;
use serde_json::{Value, json};

use super::{DESK, deliver, first_message, imap_channel, message, opened, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_second_message_within_the_window_is_suggested_as_merged_into_the_open_case,
    accepting_the_suggestion_merges_the_new_ticket_into_the_case,
    a_message_past_the_window_opens_its_ticket_without_a_suggestion,
    removing_the_suggestion_declines_it_on_both_tickets,
    undoing_the_merge_brings_the_suggestion_back_on_both_tickets,
    undoing_the_merge_brings_no_suggestion_back_to_a_case_closed_since,
    undoing_a_merge_brings_no_declined_suggestion_back,
);

/// Ada's new message about something else: not a reply to anything.
fn another_message(id: &str) -> String {
    message(
        "ada@shop.example",
        DESK,
        id,
        "Invoice",
        "",
        "Where is my invoice?",
    )
}

/// A ticket's links as (ticket, kind) pairs.
fn links(ticket: &Value) -> Vec<(String, String)> {
    ticket["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| {
            (
                l["ticketId"].as_str().expect("ticket").to_string(),
                l["kind"].as_str().expect("kind").to_string(),
            )
        })
        .collect()
}

/// Ada's first ticket and, `later` after it, her second: their ids.
async fn two_tickets(app: &TestApp, acme: &TestCompany, later: Duration) -> (String, String) {
    let channel = imap_channel(app, acme).await;
    let case = opened(&deliver(app, acme, &channel, &first_message("g1@shop.example", "")).await);
    app.state.clock.advance(later);
    let new = opened(&deliver(app, acme, &channel, &another_message("g2@shop.example")).await);
    (case, new)
}

async fn a_second_message_within_the_window_is_suggested_as_merged_into_the_open_case(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let (case, new) = two_tickets(&app, &acme, Duration::hours(2)).await;

    assert_eq!(
        (
            links(&ticket(&app, &acme, &new).await),
            links(&ticket(&app, &acme, &case).await)
        ),
        (
            vec![(case.clone(), "suggested_merge_into".to_string())],
            vec![(new.clone(), "suggested_merge_from".to_string())]
        )
    );
}

async fn accepting_the_suggestion_merges_the_new_ticket_into_the_case(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (case, new) = two_tickets(&app, &acme, Duration::hours(2)).await;

    merge(&app, &acme, &new, &case).await;

    let merged = ticket(&app, &acme, &new).await;
    assert_eq!(
        (
            merged["mergedInto"].clone(),
            links(&merged),
            links(&ticket(&app, &acme, &case).await)
        ),
        (
            json!(case),
            vec![(case.clone(), "merged_into".to_string())],
            vec![(new.clone(), "merged_from".to_string())]
        )
    );
}

async fn a_message_past_the_window_opens_its_ticket_without_a_suggestion(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    // The channel groups over 72 hours unless told otherwise.
    let (case, new) = two_tickets(&app, &acme, Duration::hours(73)).await;

    assert_eq!(
        (
            links(&ticket(&app, &acme, &new).await),
            links(&ticket(&app, &acme, &case).await)
        ),
        (vec![], vec![])
    );
}

async fn removing_the_suggestion_declines_it_on_both_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (case, new) = two_tickets(&app, &acme, Duration::hours(2)).await;

    app.delete(&format!("/tickets/{case}/links/{new}"), &acme.key)
        .await
        .assert_status(200);

    assert_eq!(
        (
            links(&ticket(&app, &acme, &new).await),
            links(&ticket(&app, &acme, &case).await)
        ),
        (vec![], vec![])
    );
}

/// Merges `new` into `case` (accepting the suggestion).
async fn merge(app: &TestApp, acme: &TestCompany, new: &str, case: &str) {
    let path = format!("/tickets/{new}/merge");
    let body = json!({"into": case});
    app.post(&path, &acme.key, body).await.assert_status(200);
}

/// Undoes the merge of `new`.
async fn undo_merge(app: &TestApp, acme: &TestCompany, new: &str) {
    let path = format!("/tickets/{new}/merge/undo");
    app.post(&path, &acme.key, json!({}))
        .await
        .assert_status(200);
}

async fn undoing_the_merge_brings_the_suggestion_back_on_both_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (case, new) = two_tickets(&app, &acme, Duration::hours(2)).await;
    merge(&app, &acme, &new, &case).await;

    undo_merge(&app, &acme, &new).await;

    assert_eq!(
        (
            links(&ticket(&app, &acme, &new).await),
            links(&ticket(&app, &acme, &case).await)
        ),
        (
            vec![(case.clone(), "suggested_merge_into".to_string())],
            vec![(new.clone(), "suggested_merge_from".to_string())]
        )
    );
}

async fn undoing_the_merge_brings_no_suggestion_back_to_a_case_closed_since(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (case, new) = two_tickets(&app, &acme, Duration::hours(2)).await;
    merge(&app, &acme, &new, &case).await;
    app.patch(
        &format!("/tickets/{case}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);

    undo_merge(&app, &acme, &new).await;

    assert_eq!(
        (
            links(&ticket(&app, &acme, &new).await),
            links(&ticket(&app, &acme, &case).await)
        ),
        (vec![], vec![])
    );
}

async fn undoing_a_merge_brings_no_declined_suggestion_back(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (case, new) = two_tickets(&app, &acme, Duration::hours(2)).await;
    app.delete(&format!("/tickets/{case}/links/{new}"), &acme.key)
        .await
        .assert_status(200);
    merge(&app, &acme, &new, &case).await;

    undo_merge(&app, &acme, &new).await;

    assert_eq!(
        (
            links(&ticket(&app, &acme, &new).await),
            links(&ticket(&app, &acme, &case).await)
        ),
        (vec![], vec![])
    );
}
