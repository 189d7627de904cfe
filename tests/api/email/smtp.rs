//! A channel's own SMTP identity: its replies leave through its server,
//! not the service's (`SMTP_URL`); the settings are checked when written,
//! and the password is sealed and never shown.

use serde_json::{Value, json};

use super::delivered::{mail_of, ticket_from};
use super::imap::{fresh_mailbox, mail_server};
use super::outbound::{delivered_containing, header, sink};
use super::{DESK, deliver, first_message, imap_channel, opened};
use crate::backend_tests;
use crate::outbound::support::fast_retries;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_reply_leaves_through_the_channels_smtp_server_not_the_services,
    a_reply_reaches_the_customer_through_postfix_as_the_channels_server,
    bad_smtp_settings_are_refused_naming_each_field,
    the_smtp_password_is_kept_sealed_and_never_shown,
);

/// The service with its own SMTP server, a sink that keeps what it gets.
async fn app_with_service_sink(backend: Backend) -> (TestApp, sink::Sink) {
    let (service, port) = sink::start();
    let app = TestApp::spawn_with(backend, |c| {
        fast_retries(c);
        c.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
    })
    .await;
    (app, service)
}

/// Sets the channel's SMTP identity; the answer's body.
async fn set_smtp(app: &TestApp, acme: &TestCompany, channel: &str, smtp: Value) -> Value {
    app.patch(
        &format!("/channels/email/{channel}"),
        &acme.key,
        json!({"smtp": smtp}),
    )
    .await
    .assert_status(200)
    .clone()
}

async fn a_reply_leaves_through_the_channels_smtp_server_not_the_services(backend: Backend) {
    let (app, service) = app_with_service_sink(backend).await;
    let (own, own_port) = sink::start();
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    set_smtp(
        &app,
        &acme,
        &channel.id.to_string(),
        json!({"host": "127.0.0.1", "port": own_port, "tls": "none"}),
    )
    .await;
    let id = opened(&deliver(&app, &acme, &channel, &first_message("s1@shop.example", "")).await);
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "Sent by the channel's own server."}),
    )
    .await
    .assert_status(201);

    let raw = delivered_containing(&app, &own, "Sent by the channel's own server.").await;

    assert_eq!(
        (
            header(&raw, "From"),
            service
                .containing("Sent by the channel's own server.")
                .is_some()
        ),
        (Some(DESK.to_string()), false),
        "{raw}"
    );
}

async fn a_reply_reaches_the_customer_through_postfix_as_the_channels_server(backend: Backend) {
    let Some(server) = mail_server("a_reply_reaches_the_customer_through_postfix") else {
        return;
    };
    let (app, service) = app_with_service_sink(backend).await;
    let acme = app.company().await;
    let customer = fresh_mailbox("own-smtp");
    let id = ticket_from(&app, &acme, &customer, "own-smtp").await;
    let channel = app.get("/channels/email", &acme.key).await.body[0]["id"]
        .as_str()
        .expect("channel")
        .to_string();
    set_smtp(
        &app,
        &acme,
        &channel,
        json!({"host": server.host.clone(), "port": server.smtp_port, "tls": "none"}),
    )
    .await;
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "Through the desk's own relay."}),
    )
    .await
    .assert_status(201);

    let raw = mail_of(&app, &server, &customer, "Through the desk's own relay.").await;

    assert_eq!(
        (
            raw.contains("Through the desk's own relay."),
            service
                .containing("Through the desk's own relay.")
                .is_some()
        ),
        (true, false),
        "{raw}"
    );
}

/// The fields a refused PATCH of the SMTP identity names.
async fn refused_fields(
    app: &TestApp,
    acme: &TestCompany,
    channel: &str,
    smtp: Value,
) -> Vec<String> {
    let r = app
        .patch(
            &format!("/channels/email/{channel}"),
            &acme.key,
            json!({"smtp": smtp}),
        )
        .await;
    r.assert_status(400);
    let mut fields: Vec<String> = r.body["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|p| p["field"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    fields.sort();
    fields
}

async fn bad_smtp_settings_are_refused_naming_each_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await.id.to_string();

    let refused = [
        refused_fields(
            &app,
            &acme,
            &channel,
            json!({"host": " ", "port": 0, "username": "", "password": "p"}),
        )
        .await,
        refused_fields(
            &app,
            &acme,
            &channel,
            json!({"host": "smtp example.com", "password": "p"}),
        )
        .await,
        refused_fields(
            &app,
            &acme,
            &channel,
            json!({"host": "smtp.acme.example", "username": "desk"}),
        )
        .await,
    ];
    let unknown_mode = app
        .patch(
            &format!("/channels/email/{channel}"),
            &acme.key,
            json!({"smtp": {"host": "smtp.acme.example", "tls": "ssl"}}),
        )
        .await;

    assert_eq!(
        (
            refused,
            unknown_mode.status,
            unknown_mode.body["details"][0]["field"].clone()
        ),
        (
            [
                ["smtp.host", "smtp.port", "smtp.username"]
                    .map(String::from)
                    .to_vec(),
                ["smtp.host", "smtp.password"].map(String::from).to_vec(),
                ["smtp.password"].map(String::from).to_vec(),
            ],
            400,
            json!("smtp.tls"),
        ),
        "{}",
        unknown_mode.text
    );
}

async fn the_smtp_password_is_kept_sealed_and_never_shown(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await.id.to_string();
    let set = set_smtp(
        &app,
        &acme,
        &channel,
        json!({"host": "smtp.acme.example", "username": "desk", "password": "relay-pass-1"}),
    )
    .await;
    // The same user name without a password keeps the password.
    let kept = set_smtp(
        &app,
        &acme,
        &channel,
        json!({"host": "smtp2.acme.example", "tls": "implicit", "username": "desk"}),
    )
    .await;
    let read = app
        .get(&format!("/channels/email/{channel}"), &acme.key)
        .await;
    let stored = stored_password(&app, &channel).await;

    assert_eq!(
        (
            set["smtp"].clone(),
            kept["smtp"].clone(),
            read.text.contains("relay-pass-1"),
            stored.is_some_and(|s| !s.contains("relay-pass-1")),
        ),
        (
            json!({"host": "smtp.acme.example", "port": 587, "tls": "starttls",
                "username": "desk", "passwordSet": true}),
            json!({"host": "smtp2.acme.example", "port": 465, "tls": "implicit",
                "username": "desk", "passwordSet": true}),
            false,
            true,
        ),
        "{}",
        read.text
    );
}

/// The channel's SMTP password as its row holds it.
async fn stored_password(app: &TestApp, channel: &str) -> Option<String> {
    supportdesk::db::Query::new("SELECT smtp_password FROM email_channels WHERE id = $1")
        .bind(channel.parse::<uuid::Uuid>().expect("uuid"))
        .fetch_scalar::<Option<String>>(&app.state.db)
        .await
        .expect("the channel")
}
