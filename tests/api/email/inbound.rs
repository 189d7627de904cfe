//! A new message opens a ticket with its files; a reply becomes a comment
//! on its ticket, found by its headers, its reply token or the ticket
//! number in its subject; an agent's reply from their mail client is
//! theirs; a malformed message still opens a ticket; the ticket a message
//! opens keeps the knowledge base's suggestions for its agent.

use serde_json::json;
use supportdesk::sequences::email_inbound::Outcome;

use super::{
    DESK, comments, deliver, first_message, imap_channel, message, opened, reply_token, ticket,
};
use crate::backend_tests;
use crate::kb::article;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_new_message_opens_a_ticket_with_its_attachments,
    a_reply_threads_by_its_headers,
    a_reply_threads_by_its_reply_token,
    a_reply_threads_by_the_ticket_number_from_the_requester,
    a_ticket_number_from_a_stranger_opens_a_new_ticket,
    an_agents_reply_from_their_mail_client_is_their_comment,
    a_customer_reply_reopens_a_resolved_ticket,
    a_malformed_message_opens_a_ticket_with_the_raw_message_attached,
    a_new_messages_ticket_keeps_the_knowledge_bases_suggestions,
);

const WITH_FILES: &str = "From: Ada <ada@shop.example>\r\nTo: support@acme.example\r\n\
Subject: Printer on fire\r\nMessage-ID: <first@shop.example>\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"outer\"\r\n\r\n\
--outer\r\nContent-Type: multipart/related; boundary=\"inner\"\r\n\r\n\
--inner\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
<p>It is <b>burning</b><img src=\"cid:pic1\"></p><script>alert(1)</script>\r\n\
--inner\r\nContent-Type: image/png\r\nContent-ID: <pic1>\r\nContent-Transfer-Encoding: base64\r\n\r\n\
iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==\r\n\
--inner--\r\n\
--outer\r\nContent-Type: application/pdf; name=\"invoice.pdf\"\r\n\
Content-Disposition: attachment; filename=\"invoice.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDw+PgplbmRvYmoKdHJhaWxlcgo8PD4+CiUlRU9GCg==\r\n\
--outer--\r\n";

async fn a_new_message_opens_a_ticket_with_its_attachments(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let id = opened(&deliver(&app, &acme, &channel, WITH_FILES).await);
    let ticket = ticket(&app, &acme, &id).await;
    assert_eq!(ticket["subject"], "Printer on fire");
    assert_eq!(ticket["visitorEmail"], "ada@shop.example");
    let mut names: Vec<&str> = ticket["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .map(|a| a["filename"].as_str().expect("filename"))
        .collect();
    names.sort();
    assert_eq!(names, ["attachment", "invoice.pdf"], "{ticket}");
    let description = ticket["description"].as_str().expect("description");
    assert!(description.contains("It is burning"), "{description}");
    assert!(!description.contains("alert"), "{description}");
}

async fn a_reply_threads_by_its_headers(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("m1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let reply = message(
        "ada@shop.example",
        DESK,
        "m2@shop.example",
        "Something else entirely",
        "In-Reply-To: <m1@shop.example>\r\n",
        "Still broken",
    );
    let outcome = deliver(&app, &acme, &channel, &reply).await;
    assert!(
        matches!(outcome, Outcome::Commented { ticket_id, .. } if ticket_id.to_string() == id),
        "{outcome:?}"
    );
    let comments = comments(&app, &acme, &id).await;
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0]["body"], "Still broken");
    assert_eq!(comments[0]["authorType"], "customer");
}

async fn a_reply_threads_by_its_reply_token(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("t1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let token = reply_token(&app, &acme, &id).await;
    let to = format!("support+{token}@acme.example");
    let reply = message(
        "ada@shop.example",
        &to,
        "t2@shop.example",
        "New words",
        "",
        "Token reply",
    );
    let outcome = deliver(&app, &acme, &channel, &reply).await;
    assert!(
        matches!(outcome, Outcome::Commented { ticket_id, .. } if ticket_id.to_string() == id),
        "{outcome:?}"
    );
}

async fn a_reply_threads_by_the_ticket_number_from_the_requester(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("s1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let number = ticket(&app, &acme, &id).await["ticketNumber"]
        .as_str()
        .expect("number")
        .to_string();
    let subject = format!("Re: your ticket {number}");
    let reply = message(
        "Ada@Shop.example",
        DESK,
        "s2@shop.example",
        &subject,
        "",
        "By number",
    );
    let outcome = deliver(&app, &acme, &channel, &reply).await;
    assert!(
        matches!(outcome, Outcome::Commented { ticket_id, .. } if ticket_id.to_string() == id),
        "{outcome:?}"
    );
}

async fn a_ticket_number_from_a_stranger_opens_a_new_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("x1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let number = ticket(&app, &acme, &id).await["ticketNumber"]
        .as_str()
        .expect("number")
        .to_string();
    let subject = format!("About {number}");
    let other = message(
        "eve@else.example",
        DESK,
        "x2@else.example",
        &subject,
        "",
        "Me too",
    );
    let outcome = deliver(&app, &acme, &channel, &other).await;
    assert_ne!(opened(&outcome), id);
}

async fn an_agents_reply_from_their_mail_client_is_their_comment(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let agent = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Bob Agent", "email": "bob@acme.example"}),
        )
        .await
        .assert_status(201)["id"]
        .clone();
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("a1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let token = reply_token(&app, &acme, &id).await;
    let to = format!("support+{token}@acme.example");
    let reply = message(
        "Bob@acme.example",
        &to,
        "a2@acme.example",
        "Re: Printer",
        "",
        "Try again",
    );
    deliver(&app, &acme, &channel, &reply).await;
    let comments = comments(&app, &acme, &id).await;
    assert_eq!(
        (&comments[0]["authorType"], &comments[0]["authorId"]),
        (&json!("agent"), &agent)
    );
}

async fn a_customer_reply_reopens_a_resolved_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("r1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);
    let reply = message(
        "ada@shop.example",
        DESK,
        "r2@shop.example",
        "Re: Printer",
        "In-Reply-To: <r1@shop.example>\r\n",
        "It broke again",
    );
    deliver(&app, &acme, &channel, &reply).await;
    assert_eq!(ticket(&app, &acme, &id).await["status"], "OPEN");
}

async fn a_malformed_message_opens_a_ticket_with_the_raw_message_attached(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let garbage = "\u{1}\u{2} this is not a mail message at all";
    let id = opened(&deliver(&app, &acme, &channel, garbage).await);
    let ticket = ticket(&app, &acme, &id).await;
    let names: Vec<&str> = ticket["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .map(|a| a["filename"].as_str().expect("filename"))
        .collect();
    assert_eq!(names, ["original.eml"], "{ticket}");
}

async fn a_new_messages_ticket_keeps_the_knowledge_bases_suggestions(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let body = "Limescale goes with vinegar.";
    let article = article(&app, &acme, "Descaling your teapot", body, true).await;
    let channel = imap_channel(&app, &acme).await;
    let raw = message(
        "ada@shop.example",
        DESK,
        "tea@shop.example",
        "White crust in my teapot",
        "",
        "How do I descale it?",
    );
    let id = opened(&deliver(&app, &acme, &channel, &raw).await);

    supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;

    let path = format!("/kb/suggestions?ticketId={id}");
    let kept = app.get(&path, &acme.key).await.assert_status(200).clone();
    assert_eq!(kept["data"][0]["articles"][0]["id"], article.as_str());
}
