//! Each condition operator: a trigger on `ticket.updated` that tags the
//! ticket it runs on, one change that meets the condition and one that
//! does not.

use chrono::Duration;
use reqwest::Method;
use serde_json::{Value, json};

use super::{mark, patch, quiet, tags, ticket, trigger, triggers};
use crate::agents::{send, signed_in};
use crate::backend_tests;
use crate::email::{deliver, first_message, imap_channel, opened};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    is_matches_the_field_value,
    is_not_matches_any_other_value,
    contains_matches_part_of_the_subject,
    changed_to_matches_the_new_value,
    changed_from_matches_the_old_value,
    gte_matches_at_least_the_minutes,
    lte_matches_at_most_the_minutes,
    tags_changed_to_matches_a_tag_added,
    actor_type_names_who_made_the_change,
    channel_email_matches_a_ticket_an_email_opened,
    channel_email_does_not_match_a_ticket_the_api_made,
);

/// A trigger on `ticket.updated` with `condition`; two tickets (subjects
/// `subjects`), patched with `hit` and `miss`, the pass run; the tags of each.
async fn run(
    app: &TestApp,
    acme: &TestCompany,
    condition: Value,
    subjects: [&str; 2],
    hit: Value,
    miss: Value,
) -> (Value, Value) {
    trigger(
        app,
        acme,
        json!(["ticket.updated"]),
        json!([condition]),
        mark(),
    )
    .await;
    let a = ticket(app, acme, subjects[0]).await;
    let b = ticket(app, acme, subjects[1]).await;
    patch(app, acme, &a, hit).await;
    patch(app, acme, &b, miss).await;
    triggers(app).await;
    (tags(app, acme, &a).await, tags(app, acme, &b).await)
}

async fn is_matches_the_field_value(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let condition = json!({"field": "priority", "operator": "is", "value": "HIGH"});
    let got = run(
        &app,
        &acme,
        condition,
        ["a", "b"],
        json!({"priority": "HIGH"}),
        json!({"priority": "LOW"}),
    )
    .await;
    assert_eq!(got, (json!(["hit"]), json!([])));
}

async fn is_not_matches_any_other_value(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let condition = json!({"field": "status", "operator": "is_not", "value": "PENDING"});
    let got = run(
        &app,
        &acme,
        condition,
        ["a", "b"],
        json!({"status": "IN_PROGRESS"}),
        json!({"status": "PENDING"}),
    )
    .await;
    assert_eq!(got, (json!(["hit"]), json!([])));
}

async fn contains_matches_part_of_the_subject(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let condition = json!({"field": "subject", "operator": "contains", "value": "printer"});
    let change = json!({"priority": "HIGH"});
    let got = run(
        &app,
        &acme,
        condition,
        ["Printer on fire", "Door stuck"],
        change.clone(),
        change,
    )
    .await;
    assert_eq!(got, (json!(["hit"]), json!([])));
}

async fn changed_to_matches_the_new_value(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let condition = json!({"field": "status", "operator": "changed_to", "value": "PENDING"});
    let got = run(
        &app,
        &acme,
        condition,
        ["a", "b"],
        json!({"status": "PENDING"}),
        json!({"priority": "HIGH"}),
    )
    .await;
    assert_eq!(got, (json!(["hit"]), json!([])));
}

async fn changed_from_matches_the_old_value(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    // New tickets are MEDIUM.
    let condition = json!({"field": "priority", "operator": "changed_from", "value": "MEDIUM"});
    let got = run(
        &app,
        &acme,
        condition,
        ["a", "b"],
        json!({"priority": "LOW"}),
        json!({"status": "PENDING"}),
    )
    .await;
    assert_eq!(got, (json!(["hit"]), json!([])));
}

async fn gte_matches_at_least_the_minutes(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(
        &app,
        &acme,
        json!(["ticket.updated"]),
        json!([{"field": "minutesSinceCreated", "operator": "gte", "value": 30}]),
        mark(),
    )
    .await;
    let old = ticket(&app, &acme, "old").await;
    app.state.clock.advance(Duration::minutes(31));
    let new = ticket(&app, &acme, "new").await;
    patch(&app, &acme, &old, json!({"priority": "HIGH"})).await;
    patch(&app, &acme, &new, json!({"priority": "HIGH"})).await;
    triggers(&app).await;
    assert_eq!(
        (tags(&app, &acme, &old).await, tags(&app, &acme, &new).await),
        (json!(["hit"]), json!([]))
    );
}

async fn lte_matches_at_most_the_minutes(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(
        &app,
        &acme,
        json!(["ticket.updated"]),
        json!([{"field": "minutesSinceCreated", "operator": "lte", "value": 10}]),
        mark(),
    )
    .await;
    let old = ticket(&app, &acme, "old").await;
    app.state.clock.advance(Duration::minutes(11));
    let new = ticket(&app, &acme, "new").await;
    patch(&app, &acme, &old, json!({"priority": "HIGH"})).await;
    patch(&app, &acme, &new, json!({"priority": "HIGH"})).await;
    triggers(&app).await;
    assert_eq!(
        (tags(&app, &acme, &new).await, tags(&app, &acme, &old).await),
        (json!(["hit"]), json!([]))
    );
}

async fn tags_changed_to_matches_a_tag_added(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let condition = json!({"field": "tags", "operator": "changed_to", "value": "vip"});
    let got = run(
        &app,
        &acme,
        condition,
        ["a", "b"],
        json!({"tags": ["vip"]}),
        json!({"tags": ["other"]}),
    )
    .await;
    assert_eq!(got, (json!(["hit", "vip"]), json!(["other"])));
}

async fn actor_type_names_who_made_the_change(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(
        &app,
        &acme,
        json!(["ticket.updated"]),
        json!([{"field": "actorType", "operator": "is", "value": "agent"}]),
        mark(),
    )
    .await;
    let browser = signed_in(&app, &acme, "ann@example.com", "agent").await;
    let by_agent = ticket(&app, &acme, "a").await;
    let by_key = ticket(&app, &acme, "b").await;
    send(
        &app,
        &browser,
        Method::PATCH,
        &format!("/tickets/{by_agent}"),
        json!({"priority": "HIGH"}),
    )
    .await
    .assert_status(200);
    patch(&app, &acme, &by_key, json!({"priority": "HIGH"})).await;
    triggers(&app).await;
    let got = (
        tags(&app, &acme, &by_agent).await,
        tags(&app, &acme, &by_key).await,
    );
    assert_eq!(got, (json!(["hit"]), json!([])));
}

/// A trigger on `ticket.created` that tags a ticket opened by email.
async fn email_rule(app: &TestApp, acme: &TestCompany) {
    let condition = json!({"field": "channel", "operator": "is", "value": "email"});
    let events = json!(["ticket.created"]);
    trigger(app, acme, events, json!([condition]), mark()).await;
}

async fn channel_email_matches_a_ticket_an_email_opened(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    email_rule(&app, &acme).await;
    let channel = imap_channel(&app, &acme).await;
    let raw = first_message("m1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &raw).await);
    triggers(&app).await;
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn channel_email_does_not_match_a_ticket_the_api_made(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    email_rule(&app, &acme).await;
    let id = ticket(&app, &acme, "by the API").await;
    triggers(&app).await;
    assert_eq!(tags(&app, &acme, &id).await, json!([]));
}
