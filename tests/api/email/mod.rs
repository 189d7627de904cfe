//! The email channel (issue 54): channels by hand (`channels`), incoming
//! mail becoming tickets and comments (`inbound`), its files within the
//! attachments' limit (`limits`), loops, bounces and duplicates (`loops`),
//! agents' replies leaving by email (`outbound`), DKIM-signed (`dkim`), and
//! the providers' webhooks (`webhooks`, `ses`), a channel's own SMTP server
//! (`smtp`), the webhooks' body limit (`body_limit`) and case grouping
//! (`grouping`). Shared helpers here.

mod body_limit;
mod channels;
mod delivered;
mod dkim;
mod grouping;
mod imap;
mod inbound;
mod limits;
mod loops;
mod merged;
mod outbound;
mod ses;
mod settings;
mod shown;
mod smtp;
mod undo;
mod webhooks;

use serde_json::{Value, json};
use supportdesk::auth::Mode;
use supportdesk::email::Channel;
use supportdesk::sequences::email_inbound::{self, Handles, Outcome};

use crate::support::{TestApp, TestCompany};

/// The desk's address in these tests.
const DESK: &str = "support@acme.example";

/// Creates a channel of the company (`inbound` as the API takes it).
async fn channel_with(app: &TestApp, acme: &TestCompany, inbound: Value) -> Value {
    app.post(
        "/channels/email",
        &acme.key,
        json!({"address": DESK, "name": "Support", "entityId": acme.entity.id, "inbound": inbound}),
    )
    .await
    .assert_status(201)
    .clone()
}

/// An IMAP channel of the company, as the store reads it.
pub(crate) async fn imap_channel(app: &TestApp, acme: &TestCompany) -> Channel {
    let made = channel_with(
        app,
        acme,
        json!({"kind": "imap", "host": "imap.acme.example", "username": "support",
            "password": "imap-password"}),
    )
    .await;
    let id = made["id"].as_str().expect("id").parse().expect("uuid");
    supportdesk::email::store::channels::find(&app.state.db, &tenant(acme), id)
        .await
        .expect("channel")
}

fn tenant(acme: &TestCompany) -> supportdesk::auth::Tenant {
    supportdesk::auth::Tenant::new(acme.company.id, Mode::Test)
}

/// Hands `raw` to the inbound entry point, as the IMAP reader does.
pub(crate) async fn deliver(
    app: &TestApp,
    acme: &TestCompany,
    channel: &Channel,
    raw: &str,
) -> Outcome {
    email_inbound::receive(
        &Handles::from(&app.state),
        &tenant(acme),
        channel,
        raw.as_bytes(),
    )
    .await
    .expect("stored")
}

/// A plain message from `from` with the given id, subject and extra
/// header lines.
fn message(from: &str, to: &str, id: &str, subject: &str, headers: &str, body: &str) -> String {
    format!(
        "From: {from}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: <{id}>\r\n{headers}\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    )
}

/// Ada's first message to the desk, about her printer, with the id `id`
/// and extra header lines: the message most tests open their ticket with.
pub(crate) fn first_message(id: &str, headers: &str) -> String {
    message("ada@shop.example", DESK, id, "Printer", headers, "Help")
}

/// The ticket a message opened.
pub(crate) fn opened(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Opened { ticket_id } => ticket_id.to_string(),
        other => panic!("a new ticket, not {other:?}"),
    }
}

/// The ticket as the API shows it.
async fn ticket(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    app.get(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_status(200)
        .clone()
}

/// The ticket's comments, oldest first.
async fn comments(app: &TestApp, acme: &TestCompany, id: &str) -> Vec<Value> {
    app.get(&format!("/tickets/{id}/comments"), &acme.key)
        .await
        .assert_status(200)["data"]
        .as_array()
        .expect("comments")
        .clone()
}

/// The reply token of an email ticket.
async fn reply_token(app: &TestApp, acme: &TestCompany, ticket_id: &str) -> String {
    let mut tx = app.state.db.begin().await.expect("begin");
    let thread = supportdesk::email::store::messages::thread(
        &mut tx,
        &tenant(acme),
        ticket_id.parse().expect("uuid"),
    )
    .await
    .expect("thread")
    .expect("an email ticket");
    tx.commit().await.expect("commit");
    thread.reply_token
}
