//! Mail no one may answer: an auto-reply and bulk mail open nothing; a
//! bounce marks its address undeliverable, so later replies skip it; the
//! same message fetched twice is one comment; a flood is cut off.

use serde_json::json;
use supportdesk::sequences::email_inbound::Outcome;

use super::{DESK, comments, deliver, first_message, imap_channel, message, opened, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    an_auto_reply_opens_no_ticket,
    a_list_message_opens_no_ticket,
    a_bounce_marks_the_address_undeliverable_and_replies_skip_it,
    the_same_message_twice_is_one_comment,
);

async fn ticket_total(app: &TestApp, key: &str) -> i64 {
    app.get("/tickets", key).await.assert_status(200)["total"]
        .as_i64()
        .expect("total")
}

async fn an_auto_reply_opens_no_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let auto = message(
        "ada@shop.example",
        DESK,
        "ooo@shop.example",
        "Out of office",
        "Auto-Submitted: auto-replied\r\n",
        "I am away",
    );
    let outcome = deliver(&app, &acme, &channel, &auto).await;
    assert_eq!(
        (outcome, ticket_total(&app, &acme.key).await),
        (
            Outcome::Dropped {
                reason: "auto-reply"
            },
            0
        )
    );
}

async fn a_list_message_opens_no_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let list = message(
        "news@list.example",
        DESK,
        "news1@list.example",
        "Weekly news",
        "List-Id: <weekly.list.example>\r\nPrecedence: list\r\n",
        "News",
    );
    let outcome = deliver(&app, &acme, &channel, &list).await;
    assert_eq!(
        (outcome, ticket_total(&app, &acme.key).await),
        (Outcome::Dropped { reason: "bulk" }, 0)
    );
}

const BOUNCE: &str = "From: MAILER-DAEMON@mx.shop.example\r\nTo: support@acme.example\r\n\
Subject: Undelivered Mail Returned to Sender\r\nMessage-ID: <bounce1@mx.shop.example>\r\n\
MIME-Version: 1.0\r\n\
Content-Type: multipart/report; report-type=delivery-status; boundary=\"b\"\r\n\r\n\
--b\r\nContent-Type: text/plain\r\n\r\nThe mail could not be delivered.\r\n\
--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.shop.example\r\n\r\n\
Final-Recipient: rfc822; ada@shop.example\r\nAction: failed\r\nStatus: 5.1.1\r\n\
--b--\r\n";

async fn a_bounce_marks_the_address_undeliverable_and_replies_skip_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("b1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let outcome = deliver(&app, &acme, &channel, BOUNCE).await;
    assert_eq!(outcome, Outcome::Dropped { reason: "bounce" });
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "Have you tried turning it off?"}),
    )
    .await
    .assert_status(201);
    // No reply was recorded as sent: the thread holds the first message only.
    let mut tx = app.state.db.begin().await.expect("begin");
    let (ids, _) = supportdesk::email::store::messages::history(
        &mut tx,
        &tenant(&acme),
        id.parse().expect("uuid"),
        20,
    )
    .await
    .expect("history");
    tx.commit().await.expect("commit");
    assert_eq!(ids, ["b1@shop.example"]);
}

async fn the_same_message_twice_is_one_comment(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("d1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let reply = message(
        "ada@shop.example",
        DESK,
        "d2@shop.example",
        "Re: Printer",
        "In-Reply-To: <d1@shop.example>\r\n",
        "Again",
    );
    deliver(&app, &acme, &channel, &reply).await;
    let again = deliver(&app, &acme, &channel, &reply).await;
    assert_eq!(
        (again, comments(&app, &acme, &id).await.len()),
        (Outcome::Duplicate, 1)
    );
}
