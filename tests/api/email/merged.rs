//! A ticket opened by email and then merged into another: the customer's
//! reply on the merged ticket's thread becomes a comment of the ticket it
//! was merged into, not of the closed one.

use serde_json::json;
use supportdesk::sequences::email_inbound::Outcome;

use super::{DESK, comments, deliver, first_message, imap_channel, message, opened};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(a_reply_to_a_merged_ticket_threads_to_the_ticket_it_was_merged_into);

async fn a_reply_to_a_merged_ticket_threads_to_the_ticket_it_was_merged_into(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let first = first_message("mg1@shop.example", "");
    let source = opened(&deliver(&app, &acme, &channel, &first).await);
    let target = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Printer, the case", "entityId": acme.entity.id}),
        )
        .await
        .assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_string();
    app.post(
        &format!("/tickets/{source}/merge"),
        &acme.key,
        json!({"into": target}),
    )
    .await
    .assert_status(200);

    let reply = message(
        "ada@shop.example",
        DESK,
        "mg2@shop.example",
        "Re: Printer",
        "In-Reply-To: <mg1@shop.example>\r\n",
        "Still broken",
    );
    let outcome = deliver(&app, &acme, &channel, &reply).await;

    let on_target: Vec<_> = comments(&app, &acme, &target)
        .await
        .iter()
        .map(|c| c["body"].clone())
        .collect();
    assert_eq!(
        (
            matches!(&outcome, Outcome::Commented { ticket_id, .. } if ticket_id.to_string() == target),
            on_target,
            comments(&app, &acme, &source).await.len(),
        ),
        (true, vec![json!("Still broken")], 0),
        "{outcome:?}"
    );
}
