//! A new ticket or chat finds its contact, or makes one: from a ticket's
//! `visitorEmail`, a chat's visitor email (typed in the widget or given by
//! a key), a verified widget identity, or the chat a ticket is made from.
//! Emails match whatever their case; a verified identity wins.

use serde_json::{Value, json};
use supportdesk::widget::identity::sign;

use super::{chat_from, contact, read, text, ticket_from};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};
use crate::widget::{start_chat, widget_post};

backend_tests!(
    a_tickets_email_matches_its_contact_whatever_its_case,
    a_tickets_email_no_contact_holds_makes_a_contact,
    a_chats_email_matches_its_contact_whatever_its_case,
    a_widget_visitors_typed_email_matches_its_contact,
    a_verified_identity_matches_its_contact,
    a_verified_identity_wins_over_an_unverified_email,
    a_ticket_made_from_a_chat_takes_the_chats_contact,
    a_ticket_without_an_email_has_no_contact,
    a_made_contact_emits_contact_created,
);

/// A widget chat of a visitor the customer's backend vouches for as `sub`
/// with `email`.
async fn verified_chat(app: &TestApp, acme: &TestCompany, sub: &str, email: &str) -> Value {
    let path = format!("/entities/{}/widget-secret/rotate", acme.entity.id);
    let rotated = app.post(&path, &acme.key, json!({})).await;
    let secret = text(rotated.assert_status(200), "secret").to_string();
    let now = chrono::Utc::now().timestamp();
    let claims = json!({"sub": sub, "email": email, "name": "Kim", "iat": now, "exp": now + 600});
    let mut body = json!({"identityToken": sign(&claims, &secret)});
    body["widgetKey"] = json!(acme.entity.widget_key_test);
    widget_post(app, "/widget/v1/sessions", body)
        .await
        .assert_status(201)
        .clone()
}

async fn a_tickets_email_matches_its_contact_whatever_its_case(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"emails": ["kim@shop.example"]})).await;
    let ticket = ticket_from(&app, &acme, Some("KIM@Shop.Example")).await;
    assert_eq!(ticket["contactId"], kim["id"]);
}

async fn a_tickets_email_no_contact_holds_makes_a_contact(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ticket = ticket_from(&app, &acme, Some("New@Shop.Example")).await;
    let made = read(&app, &acme, text(&ticket, "contactId")).await;
    assert_eq!(made["emails"], json!(["new@shop.example"]));
}

async fn a_chats_email_matches_its_contact_whatever_its_case(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"emails": ["kim@shop.example"]})).await;
    let chat = chat_from(&app, &acme, "Kim@SHOP.example").await;
    assert_eq!(chat["contactId"], kim["id"]);
}

async fn a_widget_visitors_typed_email_matches_its_contact(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"emails": ["kim@shop.example"]})).await;
    let chat = start_chat(
        &app,
        &acme.entity.widget_key_test,
        json!({"visitorName": "Kim", "visitorEmail": "kim@shop.example"}),
    )
    .await;
    assert_eq!(chat["contactId"], kim["id"]);
}

async fn a_verified_identity_matches_its_contact(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"externalId": "cust-42"})).await;
    let chat = verified_chat(&app, &acme, "cust-42", "kim@shop.example").await;
    assert_eq!(chat["contactId"], kim["id"]);
}

async fn a_verified_identity_wins_over_an_unverified_email(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    // Someone typed Kim's email in the widget: a contact holds it, unproven.
    let typed = start_chat(
        &app,
        &acme.entity.widget_key_test,
        json!({"visitorName": "Not Kim", "visitorEmail": "kim@shop.example"}),
    )
    .await;
    let kim = contact(&app, &acme, json!({"externalId": "cust-42"})).await;
    let chat = verified_chat(&app, &acme, "cust-42", "kim@shop.example").await;
    assert_eq!(
        (&chat["contactId"], typed["contactId"] == kim["id"]),
        (&kim["id"], false)
    );
}

async fn a_ticket_made_from_a_chat_takes_the_chats_contact(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = verified_chat(&app, &acme, "cust-42", "kim@shop.example").await;
    let ticket = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "From the chat", "entityId": acme.entity.id,
                "chatSessionId": chat["id"]}),
        )
        .await;
    assert_eq!(ticket.assert_status(201)["contactId"], chat["contactId"]);
}

async fn a_ticket_without_an_email_has_no_contact(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ticket = ticket_from(&app, &acme, None).await;
    let contacts = app.get("/contacts", &acme.key).await;
    assert_eq!(
        (&ticket["contactId"], &contacts.assert_status(200)["total"]),
        (&json!(null), &json!(0))
    );
}

async fn a_made_contact_emits_contact_created(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ticket = ticket_from(&app, &acme, Some("kim@shop.example")).await;
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT data FROM events WHERE company_id = $1 AND name = 'contact.created'")
        .bind(acme.company.id)
        .fetch_all(c)
        .await
        .expect("events read"));
    let created: Vec<Value> = rows.into_iter().map(|(data,)| data.0).collect();
    assert_eq!(
        created
            .iter()
            .map(|data| (&data["id"], &data["emails"]))
            .collect::<Vec<_>>(),
        vec![(&ticket["contactId"], &json!(["kim@shop.example"]))]
    );
}
