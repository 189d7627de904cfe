//! What the API shows of email: a ticket's `channel` (where it was opened)
//! and `cc` (the addresses its thread copies), and on a comment made from
//! an email, `email {messageId, from, to[], cc[]}`.

use serde_json::json;

use super::{DESK, comments, deliver, first_message, imap_channel, message, opened, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_ticket_opened_by_email_shows_channel_email_and_the_copied_addresses,
    a_ticket_made_through_the_api_shows_channel_api_and_no_copies,
    a_comment_made_from_an_email_shows_the_emails_headers,
    an_agents_comment_shows_no_email,
);

async fn a_ticket_opened_by_email_shows_channel_email_and_the_copied_addresses(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("c1@shop.example", "Cc: Bob <bob@shop.example>\r\n");

    let id = opened(&deliver(&app, &acme, &channel, &first).await);

    let ticket = ticket(&app, &acme, &id).await;
    assert_eq!(
        (&ticket["channel"], &ticket["cc"]),
        (&json!("email"), &json!(["bob@shop.example"])),
        "{ticket}"
    );
}

async fn a_ticket_made_through_the_api_shows_channel_api_and_no_copies(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let made = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Printer", "entityId": acme.entity.id}),
        )
        .await
        .assert_status(201)
        .clone();

    assert_eq!(
        (&made["channel"], &made["cc"]),
        (&json!("api"), &json!([])),
        "{made}"
    );
}

async fn a_comment_made_from_an_email_shows_the_emails_headers(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("h1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let reply = message(
        "ada@shop.example",
        DESK,
        "h2@shop.example",
        "Re: Printer",
        "In-Reply-To: <h1@shop.example>\r\nCc: carol@shop.example\r\n",
        "Still broken",
    );

    deliver(&app, &acme, &channel, &reply).await;

    let comments = comments(&app, &acme, &id).await;
    assert_eq!(
        comments[0]["email"],
        json!({"messageId": "h2@shop.example", "from": "ada@shop.example",
               "to": [DESK], "cc": ["carol@shop.example"]}),
        "{comments:?}"
    );
}

async fn an_agents_comment_shows_no_email(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("a1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);

    let made = app
        .post(
            &format!("/tickets/{id}/comments"),
            &acme.key,
            json!({"body": "Looking into it"}),
        )
        .await
        .assert_status(201)
        .clone();

    assert_eq!(
        (
            made.get("email"),
            &comments(&app, &acme, &id).await[0]["email"]
        ),
        (Some(&json!(null)), &json!(null)),
        "{made}"
    );
}
