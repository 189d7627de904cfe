//! A channel's `reopenOnCustomerReply`: on by default, a customer's reply
//! by mail reopens a RESOLVED ticket; turned off, the ticket stays
//! resolved (the reply is still its comment).

use serde_json::{Value, json};
use supportdesk::email::Channel;

use super::{DESK, comments, deliver, first_message, message, opened, tenant, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_new_channel_reopens_on_customer_reply_until_patched_off,
    a_customer_reply_reopens_a_resolved_ticket_on_a_channel_set_to_reopen,
    a_customer_reply_leaves_a_resolved_ticket_resolved_on_a_channel_set_not_to_reopen,
);

/// A postmark channel of the company with `extra` fields, as the API
/// answers it.
async fn channel_made(app: &TestApp, acme: &TestCompany, extra: Value) -> Value {
    let mut body = json!({"address": DESK, "entityId": acme.entity.id,
        "inbound": {"kind": "postmark", "secret": "a-long-random-string"}});
    for (name, value) in extra.as_object().expect("fields") {
        body[name] = value.clone();
    }
    app.post("/channels/email", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

/// The channel as the inbound sequence reads it.
async fn stored(app: &TestApp, acme: &TestCompany, made: &Value) -> Channel {
    let id = made["id"].as_str().expect("id").parse().expect("uuid");
    supportdesk::email::store::channels::find(&app.state.db, &tenant(acme), id)
        .await
        .expect("channel")
}

/// A ticket opened by mail on `channel`, resolved, then answered by its
/// customer: the ticket's id.
async fn resolved_then_answered(app: &TestApp, acme: &TestCompany, channel: &Channel) -> String {
    let first = first_message("s1@shop.example", "");
    let id = opened(&deliver(app, acme, channel, &first).await);
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
        "s2@shop.example",
        "Re: Printer",
        "In-Reply-To: <s1@shop.example>\r\n",
        "It broke again",
    );
    deliver(app, acme, channel, &reply).await;
    id
}

async fn a_new_channel_reopens_on_customer_reply_until_patched_off(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let made = channel_made(&app, &acme, json!({})).await;
    let id = made["id"].as_str().expect("id");

    let patched = app
        .patch(
            &format!("/channels/email/{id}"),
            &acme.key,
            json!({"reopenOnCustomerReply": false}),
        )
        .await
        .assert_status(200)
        .clone();

    assert_eq!(
        (
            &made["reopenOnCustomerReply"],
            &patched["reopenOnCustomerReply"]
        ),
        (&json!(true), &json!(false))
    );
}

async fn a_customer_reply_reopens_a_resolved_ticket_on_a_channel_set_to_reopen(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let made = channel_made(&app, &acme, json!({"reopenOnCustomerReply": true})).await;
    let channel = stored(&app, &acme, &made).await;

    let id = resolved_then_answered(&app, &acme, &channel).await;

    assert_eq!(ticket(&app, &acme, &id).await["status"], "OPEN");
}

async fn a_customer_reply_leaves_a_resolved_ticket_resolved_on_a_channel_set_not_to_reopen(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let made = channel_made(&app, &acme, json!({"reopenOnCustomerReply": false})).await;
    let channel = stored(&app, &acme, &made).await;

    let id = resolved_then_answered(&app, &acme, &channel).await;

    let bodies: Vec<Value> = comments(&app, &acme, &id)
        .await
        .iter()
        .map(|c| c["body"].clone())
        .collect();
    assert_eq!(
        (ticket(&app, &acme, &id).await["status"].clone(), bodies),
        (json!("RESOLVED"), vec![json!("It broke again")])
    );
}
