//! Undo send on an email ticket: an agent's public reply is held for the
//! undo window, and one cancelled within it is never mailed.

use std::time::Duration;

use serde_json::json;

use super::{deliver, first_message, imap_channel, opened};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(a_reply_undone_within_the_window_is_never_mailed);

/// How many reply emails the company has queued (sent or not).
async fn reply_emails(app: &TestApp, acme: &TestCompany) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(
        "SELECT COUNT(*) FROM outbox_jobs WHERE company_id = $1 AND kind = $2")
        .bind(acme.company.id)
        .bind(supportdesk::mail::REPLY_JOB_KIND)
        .fetch_one(c)
        .await
        .expect("reply emails counted"))
}

async fn a_reply_undone_within_the_window_is_never_mailed(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.undo_send = Duration::from_secs(10);
        c.run_workers = false;
    })
    .await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("u1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &first).await);
    let reply = app
        .post(
            &format!("/tickets/{id}/comments"),
            &acme.key,
            json!({"body": "Please try a new cartridge."}),
        )
        .await;
    let reply = reply.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_string();
    app.state.clock.advance(chrono::TimeDelta::seconds(5));
    app.delete(&format!("/tickets/{id}/comments/{reply}"), &acme.key)
        .await
        .assert_status(200);

    app.state.clock.advance(chrono::TimeDelta::seconds(60));
    let signer = app.state.link_signer();
    let mail = supportdesk::sequences::email_outbound::MailReply;
    let delivered = supportdesk::tickets::store::deliver_due(
        &app.state.db,
        app.state.clock.now(),
        &signer,
        &mail,
    )
    .await
    .expect("delivery pass");

    assert_eq!((delivered, reply_emails(&app, &acme).await), (0, 0));
}
