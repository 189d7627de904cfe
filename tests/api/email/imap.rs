//! An IMAP channel against real mail servers: mail sent through postfix
//! lands in a Dovecot mailbox (both started by `.ci/mail-servers.sh`, which
//! `.ci/run` calls), and the service's reader takes it from there. Without
//! `TEST_IMAP_HOST` these tests report themselves skipped, except under
//! `CI=true`, where a missing server fails them.

use std::time::Duration;

use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor, address::Envelope};
use serde_json::json;
use supportdesk::email::imap;
use supportdesk::sequences::email_inbound::Outcome;
use supportdesk_mailbox::{Mailbox, MailboxConfig, Security};

use super::{channel_with, message, opened, tenant, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_message_mailed_to_the_channels_mailbox_opens_a_ticket,
    a_message_stored_but_not_marked_read_is_a_duplicate_when_fetched_again,
);

struct MailServer {
    host: String,
    imap_port: u16,
    smtp_port: u16,
    password: String,
}

fn mail_server(test: &str) -> Option<MailServer> {
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
fn fresh_mailbox(test: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{test}-{}@desk.test", &id[..12])
}

fn config(server: &MailServer, user: &str) -> MailboxConfig {
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

/// Runs the service's reader over the channel's mailbox once, as the
/// watcher does after a wake-up; what became of each message.
async fn drain(app: &TestApp, channel_id: &str) -> Vec<Outcome> {
    let watched = imap::watched(&app.state)
        .await
        .into_iter()
        .find(|watched| watched.id == channel_id)
        .expect("the channel is watched");
    let (tenant, channel) = watched.context.clone();
    let mut mailbox = Mailbox::open(&watched.config).await.expect("open");
    let outcomes = std::cell::RefCell::new(Vec::new());
    mailbox
        .drain(|fetched| {
            let (state, tenant, channel, outcomes) = (&app.state, &tenant, &channel, &outcomes);
            async move {
                let outcome = imap::receive(state, tenant, channel, &fetched).await?;
                outcomes.borrow_mut().push(outcome);
                Ok::<(), supportdesk::error::StoreError>(())
            }
        })
        .await
        .expect("drain");
    outcomes.into_inner()
}

async fn a_message_mailed_to_the_channels_mailbox_opens_a_ticket(backend: Backend) {
    let Some(server) = mail_server("a_message_mailed_to_the_channels_mailbox_opens_a_ticket")
    else {
        return;
    };
    {
        let app = TestApp::spawn(backend).await;
        let acme = app.company().await;
        let user = fresh_mailbox("opens");
        let channel_id = channel_on(&app, &acme, &server, &user).await;
        let raw = message(
            "customer@example.test",
            &user,
            &format!("first-{user}"),
            "My order never came",
            "",
            "Where is order 1234?",
        );
        mail_through_postfix(&server, &user, &raw).await;

        let outcomes = drain(&app, &channel_id).await;

        assert_eq!(outcomes.len(), 1, "{outcomes:?}");
        let shown = ticket(&app, &acme, &opened(&outcomes[0])).await;
        assert_eq!(shown["subject"], "My order never came");
    }
}

async fn a_message_stored_but_not_marked_read_is_a_duplicate_when_fetched_again(backend: Backend) {
    let Some(server) =
        mail_server("a_message_stored_but_not_marked_read_is_a_duplicate_when_fetched_again")
    else {
        return;
    };
    {
        let app = TestApp::spawn(backend).await;
        let acme = app.company().await;
        let user = fresh_mailbox("crash");
        let channel_id = channel_on(&app, &acme, &server, &user).await;
        let raw = message(
            "customer@example.test",
            &user,
            &format!("once-{user}"),
            "Charged twice",
            "",
            "Please refund one of them.",
        );
        mail_through_postfix(&server, &user, &raw).await;
        // The reader stored the message, then stopped before marking it
        // read (a crash between the commit and the mark).
        let watched = imap::watched(&app.state)
            .await
            .into_iter()
            .find(|watched| watched.id == channel_id)
            .expect("watched");
        let mut mailbox = Mailbox::open(&watched.config).await.expect("open");
        let uid = mailbox.unread().await.expect("unread")[0];
        let fetched = mailbox.fetch(uid).await.expect("fetch").expect("message");
        let (tenant_of, channel) = watched.context.clone();
        assert_eq!(tenant_of.company_id, tenant(&acme).company_id);
        let first = imap::receive(&app.state, &tenant_of, &channel, &fetched)
            .await
            .expect("stored");
        assert!(matches!(first, Outcome::Opened { .. }), "{first:?}");
        drop(mailbox);

        let again = drain(&app, &channel_id).await;

        assert_eq!(again, [Outcome::Duplicate]);
    }
}
