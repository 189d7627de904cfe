//! An agent's public reply on an email ticket, end to end: the service's
//! mailer sends it through postfix, which hands it to Dovecot, and the test
//! reads it from the customer's own IMAP mailbox as their mail client
//! would: threaded under the customer's last message, carrying the reply
//! token, with the reply's attachments as parts of the message. The mail
//! servers are those of `.ci/mail-servers.sh` (see `imap`).

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use supportdesk::email::parse::parse;
use supportdesk_mailbox::Mailbox;

use super::imap::{MailServer, config, fresh_mailbox, mail_server};
use super::outbound::header;
use super::{DESK, deliver, imap_channel, message, opened, reply_token};
use crate::backend_tests;
use crate::outbound::support::fast_retries;
use crate::support::{Backend, TestApp, TestCompany, TestResponse, eventually_within};

backend_tests!(
    an_agents_reply_arrives_in_the_customers_mailbox_threaded_under_their_last_message,
    an_agents_reply_arrives_with_its_attachments,
);

/// Far more than postfix and Dovecot take to deliver on a loaded machine.
const ARRIVES_WITHIN: Duration = Duration::from_secs(60);

/// The service with its mailer sending through the test's postfix.
async fn app_mailing_through(backend: Backend, server: &MailServer) -> TestApp {
    let smtp = format!("smtp://{}:{}", server.host, server.smtp_port);
    TestApp::spawn_with(backend, |c| {
        fast_retries(c);
        c.smtp_url = Some(smtp);
    })
    .await
}

/// The message in `customer`'s mailbox whose bytes hold `marker`, as
/// stored, once one is there (the outbox driven meanwhile, as its worker
/// would). Other mail may reach the customer first (the acknowledgement of
/// their request), so the reply is found by its words, not its place.
pub(super) async fn mail_of(
    app: &TestApp,
    server: &MailServer,
    customer: &str,
    marker: &str,
) -> String {
    let raw = eventually_within(
        "the reply in the customer's mailbox",
        ARRIVES_WITHIN,
        async || {
            supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
            let mut mailbox = Mailbox::open(&config(server, customer))
                .await
                .expect("open the customer's mailbox");
            let unread = mailbox.unread().await.expect("unread");
            let mut found = None;
            for uid in unread {
                if let Some(fetched) = mailbox.fetch(uid).await.expect("fetch")
                    && String::from_utf8_lossy(&fetched.raw).contains(marker)
                {
                    found = Some(fetched.raw);
                    break;
                }
            }
            mailbox.close().await.expect("sign out");
            found
        },
    )
    .await;
    String::from_utf8_lossy(&raw).into_owned()
}

/// Uploads `bytes` as the text file `name`: the upload's id.
async fn upload(app: &TestApp, acme: &TestCompany, name: &str, bytes: &[u8]) -> String {
    let response = TestResponse::from(
        app.api(Method::POST, "/attachments", Some(&acme.key))
            .header("Content-Type", "text/plain")
            .header(
                "Content-Disposition",
                format!("attachment; filename=\"{name}\""),
            )
            .body(bytes.to_vec())
            .send()
            .await,
    )
    .await;
    response.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_string()
}

/// A ticket opened by `customer`'s mail, answered again by them: its id.
pub(super) async fn ticket_from(
    app: &TestApp,
    acme: &TestCompany,
    customer: &str,
    tag: &str,
) -> String {
    let channel = imap_channel(app, acme).await;
    let first = message(
        customer,
        DESK,
        &format!("{tag}-1@{customer}"),
        "Printer",
        "",
        "Help",
    );
    let id = opened(&deliver(app, acme, &channel, &first).await);
    let again = message(
        customer,
        DESK,
        &format!("{tag}-2@{customer}"),
        "Re: Printer",
        &format!("In-Reply-To: <{tag}-1@{customer}>\r\n"),
        "Any news?",
    );
    deliver(app, acme, &channel, &again).await;
    id
}

async fn an_agents_reply_arrives_in_the_customers_mailbox_threaded_under_their_last_message(
    backend: Backend,
) {
    let Some(server) = mail_server("an_agents_reply_arrives_in_the_customers_mailbox") else {
        return;
    };
    let app = app_mailing_through(backend, &server).await;
    let acme = app.company().await;
    let customer = fresh_mailbox("customer");
    let id = ticket_from(&app, &acme, &customer, "thread").await;
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "Please try a new cartridge."}),
    )
    .await
    .assert_status(201);
    let token = reply_token(&app, &acme, &id).await;

    let raw = mail_of(&app, &server, &customer, "Please try a new cartridge.").await;

    let mail = parse(raw.as_bytes());
    assert_eq!(
        (
            mail.in_reply_to.clone(),
            mail.references.clone(),
            header(&raw, "Reply-To"),
            mail.to.clone(),
            mail.text
                .as_deref()
                .map(|t| t.contains("Please try a new cartridge.")),
        ),
        (
            vec![format!("thread-2@{customer}")],
            vec![
                format!("thread-1@{customer}"),
                format!("thread-2@{customer}")
            ],
            Some(format!("support+{token}@acme.example")),
            vec![customer.clone()],
            Some(true),
        ),
        "{raw}"
    );
}

async fn an_agents_reply_arrives_with_its_attachments(backend: Backend) {
    let Some(server) = mail_server("an_agents_reply_arrives_with_its_attachments") else {
        return;
    };
    let app = app_mailing_through(backend, &server).await;
    let acme = app.company().await;
    let customer = fresh_mailbox("files");
    let id = ticket_from(&app, &acme, &customer, "files").await;
    let manual = upload(&app, &acme, "manual.txt", b"Step 1: open the lid.").await;
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "The manual is attached.", "attachmentIds": [manual]}),
    )
    .await
    .assert_status(201);

    let raw = mail_of(&app, &server, &customer, "manual.txt").await;

    let mail = parse(raw.as_bytes());
    let parts: Vec<(String, String, Vec<u8>)> = mail
        .parts
        .iter()
        .map(|p| (p.filename.clone(), p.content_type.clone(), p.bytes.clone()))
        .collect();
    assert_eq!(
        parts,
        [(
            "manual.txt".to_string(),
            "text/plain".to_string(),
            b"Step 1: open the lid.".to_vec()
        )],
        "{raw}"
    );
}
