//! An IMAP channel against real mail servers: mail sent through postfix
//! lands in a Dovecot mailbox (both started by `.ci/mail-servers.sh`, which
//! `.ci/run` calls), and the service's reader takes it from there. Without
//! `TEST_IMAP_HOST` these tests report themselves skipped, except under
//! `CI=true`, where a missing server fails them.

use std::time::Duration;

use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor, address::Envelope};
use serde_json::json;
use supportdesk_mailbox::{Mailbox, MailboxConfig, Security};

use super::{channel_with, message, opened, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, eventually_within};

backend_tests!(
    a_message_mailed_to_the_channels_mailbox_opens_a_ticket,
    a_message_stored_but_not_marked_read_is_marked_without_a_second_ticket,
);

/// How long the service's reader may take to see a new channel (its list
/// is read every 2 s) and read its mailbox.
const WATCHED: Duration = Duration::from_secs(20);

pub(super) struct MailServer {
    pub(super) host: String,
    pub(super) imap_port: u16,
    pub(super) smtp_port: u16,
    pub(super) password: String,
}

pub(super) fn mail_server(test: &str) -> Option<MailServer> {
    let Ok(host) = std::env::var("TEST_IMAP_HOST") else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true needs TEST_IMAP_HOST: the IMAP tests must run in CI"
        );
        eprintln!("SKIPPED (no TEST_IMAP_HOST): {test}");
        return None;
    };
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    Some(MailServer {
        host,
        imap_port: var("TEST_IMAP_PORT").parse().expect("TEST_IMAP_PORT"),
        smtp_port: var("TEST_SMTP_PORT").parse().expect("TEST_SMTP_PORT"),
        password: var("TEST_MAIL_PASSWORD"),
    })
}

/// A mailbox no other test (nor an earlier run) uses.
pub(super) fn fresh_mailbox(test: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{test}-{}@desk.test", &id[..12])
}

pub(super) fn config(server: &MailServer, user: &str) -> MailboxConfig {
    MailboxConfig {
        host: server.host.clone(),
        port: server.imap_port,
        security: Security::Plain,
        username: user.to_owned(),
        password: server.password.clone(),
        folder: "INBOX".into(),
    }
}

/// The company's channel reading `user`'s mailbox on the test server.
async fn channel_on(app: &TestApp, acme: &TestCompany, server: &MailServer, user: &str) -> String {
    let made = channel_with(
        app,
        acme,
        json!({"kind": "imap", "host": server.host, "port": server.imap_port, "tls": false,
               "username": user, "password": server.password, "folder": "INBOX"}),
    )
    .await;
    made["id"].as_str().expect("id").to_owned()
}

/// Sends `raw` to `user` through postfix and returns once Dovecot has it
/// (the mailbox's IDLE reports the arrival).
async fn mail_through_postfix(server: &MailServer, user: &str, raw: &str) {
    let idling = Mailbox::open(&config(server, user))
        .await
        .expect("open the mailbox")
        .idle_start()
        .await
        .expect("idle");
    let smtp = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&server.host)
        .port(server.smtp_port)
        .build();
    let envelope = Envelope::new(
        Some("customer@example.test".parse().expect("from")),
        vec![user.parse().expect("to")],
    )
    .expect("envelope");
    smtp.send_raw(&envelope, raw.as_bytes())
        .await
        .expect("postfix took the message");
    let (mailbox, _) = idling
        .wait(Duration::from_secs(60))
        .await
        .expect("the arrival");
    mailbox.close().await.expect("sign out");
}

/// The company's tickets whose subject holds `word`, as the API lists them.
async fn tickets_about(app: &TestApp, acme: &TestCompany, word: &str) -> Vec<serde_json::Value> {
    app.get(&format!("/tickets?q={word}"), &acme.key)
        .await
        .assert_status(200)["data"]
        .as_array()
        .expect("tickets")
        .clone()
}

/// Whether `user`'s mailbox still holds unread mail.
async fn unread_left(server: &MailServer, user: &str) -> bool {
    let mut mailbox = Mailbox::open(&config(server, user)).await.expect("open");
    let unread = mailbox.unread().await.expect("unread");
    mailbox.close().await.expect("sign out");
    !unread.is_empty()
}

async fn a_message_mailed_to_the_channels_mailbox_opens_a_ticket(backend: Backend) {
    let Some(server) = mail_server("a_message_mailed_to_the_channels_mailbox_opens_a_ticket")
    else {
        return;
    };
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = fresh_mailbox("opens");
    channel_on(&app, &acme, &server, &user).await;
    let raw = message(
        "customer@example.test",
        &user,
        &format!("first-{user}"),
        "Zeppelin order never came",
        "",
        "Where is order 1234?",
    );

    mail_through_postfix(&server, &user, &raw).await;

    let found = eventually_within("the mail became a ticket", WATCHED, async || {
        let found = tickets_about(&app, &acme, "zeppelin").await;
        (!found.is_empty()).then_some(found)
    })
    .await;
    assert_eq!(found[0]["subject"], "Zeppelin order never came");
}

async fn a_message_stored_but_not_marked_read_is_marked_without_a_second_ticket(backend: Backend) {
    let Some(server) =
        mail_server("a_message_stored_but_not_marked_read_is_marked_without_a_second_ticket")
    else {
        return;
    };
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = fresh_mailbox("crash");
    let raw = message(
        "customer@example.test",
        &user,
        &format!("once-{user}"),
        "Quasar charged twice",
        "",
        "Please refund one of them.",
    );
    // The message is in the mailbox, unread, and its ticket committed: as
    // after a crash between the commit and the mark.
    mail_through_postfix(&server, &user, &raw).await;
    let made = channel_with(
        &app,
        &acme,
        json!({"kind": "postmark", "secret": "not-watched-yet"}),
    )
    .await;
    let channel_id = made["id"].as_str().expect("id").to_owned();
    let channel = supportdesk::email::store::channels::find(
        &app.state.db,
        &tenant(&acme),
        channel_id.parse().expect("uuid"),
    )
    .await
    .expect("channel");
    let first = supportdesk::sequences::email_inbound::receive(
        &supportdesk::sequences::email_inbound::Handles::from(&app.state),
        &tenant(&acme),
        &channel,
        raw.as_bytes(),
    )
    .await
    .expect("stored");
    opened(&first);

    // The channel now reads that mailbox: its reader finds the message
    // unread and hands it over again.
    app.patch(
        &format!("/channels/email/{channel_id}"),
        &acme.key,
        json!({"inbound": {"kind": "imap", "host": server.host, "port": server.imap_port,
               "tls": false, "username": user, "password": server.password,
               "folder": "INBOX"}}),
    )
    .await
    .assert_status(200);
    eventually_within("the reader marked the message read", WATCHED, async || {
        !unread_left(&server, &user).await
    })
    .await;

    assert_eq!(tickets_about(&app, &acme, "quasar").await.len(), 1);
}
