//! Each action: a trigger on `ticket.created` that does it, a new ticket,
//! the pass; the ticket shows it.

use serde_json::{Value, json};

use super::{quiet, read, ticket, trigger, triggers};
use crate::backend_tests;
use crate::outbound::support::{Receiver, create_webhook, drive_until, service_signature_valid};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    set_status_sets_the_status,
    set_priority_sets_the_priority,
    set_assignee_assigns_the_user,
    set_team_moves_the_ticket,
    add_tags_and_remove_tags_edit_the_tags,
    set_custom_field_sets_the_value,
    apply_macro_applies_its_changes,
    add_note_adds_an_internal_note,
    email_queues_a_rendered_email,
    webhook_delivers_the_firing_signed_to_the_named_hook,
    snooze_snoozes_the_ticket_for_its_minutes,
);

/// A trigger on `ticket.created` with `actions`, a new ticket, the pass;
/// the ticket after it.
async fn after(app: &TestApp, acme: &TestCompany, actions: Value) -> Value {
    trigger(app, acme, json!(["ticket.created"]), json!([]), actions).await;
    let id = ticket(app, acme, "Printer on fire").await;
    assert_eq!(triggers(app).await, 1);
    read(app, acme, &id).await
}

async fn set_status_sets_the_status(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let t = after(
        &app,
        &acme,
        json!([{"type": "set_status", "value": "PENDING"}]),
    )
    .await;
    assert_eq!(t["status"], "PENDING");
}

async fn set_priority_sets_the_priority(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let t = after(
        &app,
        &acme,
        json!([{"type": "set_priority", "value": "HIGH"}]),
    )
    .await;
    assert_eq!(t["priority"], "HIGH");
}

async fn set_assignee_assigns_the_user(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Bob", "email": "bob@example.com"}),
        )
        .await;
    let bob = r.assert_status(201)["id"].clone();
    let t = after(&app, &acme, json!([{"type": "set_assignee", "value": bob}])).await;
    assert_eq!(t["assignedToId"], bob);
}

async fn set_team_moves_the_ticket(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "Billing", "memberIds": []}),
        )
        .await;
    let team = r.assert_status(201)["id"].clone();
    let t = after(&app, &acme, json!([{"type": "set_team", "value": team}])).await;
    assert_eq!(t["teamId"], team);
}

async fn add_tags_and_remove_tags_edit_the_tags(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(
        &app,
        &acme,
        json!(["ticket.created"]),
        json!([]),
        json!([{"type": "add_tags", "value": ["Billing"]}, {"type": "remove_tags", "value": ["new"]}]),
    )
    .await;
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "x", "entityId": acme.entity.id, "tags": ["new", "web"]}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().expect("id").to_string();
    triggers(&app).await;
    assert_eq!(
        read(&app, &acme, &id).await["tags"],
        json!(["billing", "web"])
    );
}

async fn set_custom_field_sets_the_value(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    app.post(
        "/settings/custom-fields",
        &acme.key,
        json!({"key": "plan", "label": "Plan", "type": "text", "appliesTo": ["ticket"]}),
    )
    .await
    .assert_status(201);
    let action = json!([{"type": "set_custom_field", "value": {"key": "plan", "value": "pro"}}]);
    let t = after(&app, &acme, action).await;
    assert_eq!(t["customFields"]["plan"], "pro");
}

async fn apply_macro_applies_its_changes(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/macros",
            &acme.key,
            json!({"name": "Low", "visibility": "shared", "actions": {"priority": "LOW", "addTags": ["macro"]}}),
        )
        .await;
    let id = r.assert_status(201)["id"].clone();
    let t = after(&app, &acme, json!([{"type": "apply_macro", "value": id}])).await;
    assert_eq!(
        (&t["priority"], &t["tags"]),
        (&json!("LOW"), &json!(["macro"]))
    );
}

async fn add_note_adds_an_internal_note(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let action = json!([{"type": "add_note", "value": "Seen {{ticket.subject}}"}]);
    let t = after(&app, &acme, action).await;
    let r = app
        .get(
            &format!("/tickets/{}/comments", t["id"].as_str().expect("id")),
            &acme.key,
        )
        .await;
    let note = &r.assert_status(200)["data"][0];
    assert_eq!(
        (&note["body"], &note["isInternal"]),
        (&json!("Seen Printer on fire"), &json!(true))
    );
}

async fn email_queues_a_rendered_email(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let action = json!([{"type": "email", "value": {"to": "ops@example.com",
        "subject": "New: {{ticket.subject}}", "body": "Have a look at {{ticket.number}}"}}]);
    let t = after(&app, &acme, action).await;
    let sent = crate::csat::email_texts(&app, acme.company.id).await;
    let number = t["ticketNumber"].as_str().expect("number");
    assert!(
        sent.contains(&format!("Have a look at {number}")),
        "{sent:?}"
    );
}

async fn webhook_delivers_the_firing_signed_to_the_named_hook(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let receiver = Receiver::always(200).await;
    // Subscribed to another event only: the action alone sends it there.
    let (hook, secret) =
        create_webhook(&app, &acme.key, &receiver.url("/rule"), &["user.created"]).await;
    let t = after(&app, &acme, json!([{"type": "webhook", "value": hook}])).await;
    drive_until(&app, "the rule's delivery", || receiver.count() > 0).await;
    let hit = receiver.hits()[0].clone();
    assert_eq!(hit.header("x-service-event"), "automation.fired");
    assert!(service_signature_valid(
        &secret,
        &hit.body,
        hit.header("x-service-signature")
    ));
    assert_eq!(hit.json()["data"]["ticketId"], t["id"]);
}

async fn snooze_snoozes_the_ticket_for_its_minutes(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let action = json!([{"type": "snooze", "value": {"minutes": 90}}]);
    app.state.clock.freeze();
    let now = app.state.clock.now().0;
    let t = after(&app, &acme, action).await;
    let until = t["snoozedUntil"].as_str().expect("snoozed");
    let until = chrono::DateTime::parse_from_rfc3339(until).expect("instant");
    assert_eq!(until, now + chrono::TimeDelta::minutes(90));
}
