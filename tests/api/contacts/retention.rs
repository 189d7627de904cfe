//! A company's data retention (`dataRetention` in `/settings`): the dry run
//! (`GET /settings/retention`) counts what the retention pass then deletes,
//! exactly; closed tickets, closed chats and contacts with nothing left go,
//! and what is recent, open or still in use stays.

use chrono::Duration;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Tenant};
use supportdesk::tickets::store::{Deletion, delete_batch};
use uuid::Uuid;

use super::{chat_from, contact, text, ticket_from};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, retention_pass};

backend_tests!(
    the_pass_deletes_exactly_what_the_dry_run_counted,
    what_is_recent_open_or_in_use_is_kept,
    a_retention_of_zero_days_is_refused_and_changes_nothing,
    without_a_retention_the_dry_run_counts_nothing,
    a_ticket_the_pass_deletes_is_audited_with_the_reason_retention,
    a_batch_delete_passes_over_a_ticket_already_gone,
);

async fn dry_run(app: &TestApp, acme: &TestCompany) -> Value {
    let answer = app.get("/settings/retention", &acme.key).await;
    answer.assert_status(200)["nextPass"].clone()
}

async fn close(app: &TestApp, acme: &TestCompany, path: &str) {
    app.patch(path, &acme.key, json!({"status": "CLOSED"}))
        .await
        .assert_status(200);
}

/// What the fixture made, by id.
struct Made {
    old_closed_ticket: String,
    old_closed_chat: String,
    /// Its only ticket is the old closed one.
    contact_of_old_ticket: String,
    /// Never had a ticket or chat.
    idle_contact: String,
    old_open_ticket: String,
    contact_of_open_ticket: String,
    new_closed_ticket: String,
    new_contact: String,
}

/// A policy of 30 days for closed tickets and chats and 90 for contacts;
/// records made 100 days ago and today, on a clock that holds still.
async fn made(app: &TestApp, acme: &TestCompany) -> Made {
    app.state.clock.freeze();
    let policy = json!({"dataRetention":
        {"closedTicketsDays": 30, "closedChatsDays": 30, "contactsDays": 90}});
    app.patch("/settings", &acme.key, policy)
        .await
        .assert_status(200);
    let old_closed = ticket_from(app, acme, Some("gone@shop.example")).await;
    let old_closed_ticket = text(&old_closed, "id").to_string();
    close(app, acme, &format!("/tickets/{old_closed_ticket}")).await;
    let old_open = ticket_from(app, acme, Some("waiting@shop.example")).await;
    let chat = chat_from(app, acme, "gone@shop.example").await;
    let old_closed_chat = text(&chat, "id").to_string();
    close(app, acme, &format!("/chat/sessions/{old_closed_chat}")).await;
    let idle = contact(app, acme, json!({"name": "Idle Person"})).await;
    app.state.clock.advance(Duration::days(100));
    let new_closed = ticket_from(app, acme, None).await;
    let new_closed_ticket = text(&new_closed, "id").to_string();
    close(app, acme, &format!("/tickets/{new_closed_ticket}")).await;
    let new_contact = contact(app, acme, json!({"name": "New Person"})).await;
    Made {
        old_closed_ticket,
        old_closed_chat,
        contact_of_old_ticket: text(&old_closed, "contactId").to_string(),
        idle_contact: text(&idle, "id").to_string(),
        old_open_ticket: text(&old_open, "id").to_string(),
        contact_of_open_ticket: text(&old_open, "contactId").to_string(),
        new_closed_ticket,
        new_contact: text(&new_contact, "id").to_string(),
    }
}

async fn status_of(app: &TestApp, acme: &TestCompany, path: &str) -> u16 {
    app.get(path, &acme.key).await.status
}

async fn the_pass_deletes_exactly_what_the_dry_run_counted(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let made = made(&app, &acme).await;
    let counted = dry_run(&app, &acme).await;
    assert_eq!(
        counted,
        json!({"closedTickets": 1, "closedChats": 1, "contacts": 2})
    );

    retention_pass(&app).await;

    let gone = [
        format!("/tickets/{}", made.old_closed_ticket),
        format!("/chat/sessions/{}", made.old_closed_chat),
        format!("/contacts/{}", made.contact_of_old_ticket),
        format!("/contacts/{}", made.idle_contact),
    ];
    let mut statuses = Vec::new();
    for path in &gone {
        statuses.push(status_of(&app, &acme, path).await);
    }
    assert_eq!(statuses, vec![404; 4]);
    assert_eq!(
        dry_run(&app, &acme).await,
        json!({"closedTickets": 0, "closedChats": 0, "contacts": 0})
    );
}

async fn what_is_recent_open_or_in_use_is_kept(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let made = made(&app, &acme).await;

    retention_pass(&app).await;

    let kept = [
        format!("/tickets/{}", made.old_open_ticket),
        format!("/contacts/{}", made.contact_of_open_ticket),
        format!("/tickets/{}", made.new_closed_ticket),
        format!("/contacts/{}", made.new_contact),
    ];
    let mut statuses = Vec::new();
    for path in &kept {
        statuses.push(status_of(&app, &acme, path).await);
    }
    assert_eq!(statuses, vec![200; 4]);
}

async fn a_retention_of_zero_days_is_refused_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"dataRetention": {"closedTicketsDays": 0}});
    let refused = app.patch("/settings", &acme.key, body).await;
    refused.assert_error(400, "validation_failed");
    assert_eq!(
        refused.body["details"][0]["field"],
        "dataRetention.closedTicketsDays"
    );
    let settings = app.get("/settings", &acme.key).await;
    assert_eq!(
        settings.assert_status(200)["dataRetention"],
        json!({"closedTicketsDays": null, "closedChatsDays": null, "contactsDays": null})
    );
}

async fn without_a_retention_the_dry_run_counts_nothing(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let old = ticket_from(&app, &acme, Some("old@shop.example")).await;
    close(&app, &acme, &format!("/tickets/{}", text(&old, "id"))).await;
    app.state.clock.advance(Duration::days(4000));

    assert_eq!(
        dry_run(&app, &acme).await,
        json!({"closedTickets": 0, "closedChats": 0, "contacts": 0})
    );
}

async fn a_ticket_the_pass_deletes_is_audited_with_the_reason_retention(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let made = made(&app, &acme).await;

    retention_pass(&app).await;

    let entries = app
        .get("/audit-log?action=ticket.deleted", &acme.key)
        .await
        .assert_status(200)["data"]
        .clone();
    let entry = &entries[0];
    assert_eq!(
        (&entry["target"]["id"], &entry["changes"]["reason"]),
        (&json!(made.old_closed_ticket), &json!("retention")),
        "{entries}"
    );
}

async fn a_batch_delete_passes_over_a_ticket_already_gone(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let gone = ticket_from(&app, &acme, None).await;
    let kept = ticket_from(&app, &acme, None).await;
    let path = |ticket: &Value| format!("/tickets/{}", text(ticket, "id"));
    app.delete(&path(&gone), &acme.key).await.assert_status(200);
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    let ids: [(Tenant, Uuid); 2] =
        [&gone, &kept].map(|t| (tenant, text(t, "id").parse().expect("uuid")));

    let store = &app.state.db;
    let now = app.state.clock.now();
    let done = delete_batch(store, &ids, Deletion::Retention, now).await;

    let deleted = done.expect("batch deleted").tickets;
    let status = status_of(&app, &acme, &path(&kept)).await;
    assert_eq!((deleted, status), (1, 404));
}
