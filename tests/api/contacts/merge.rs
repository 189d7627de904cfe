//! `POST /contacts/{id}/merge`: every ticket, chat, email and identity of
//! the merged contact moves to the one that remains; `contact.merged`.

use serde_json::{Value, json};

use super::{chat_from, contact, ids, read, text, ticket_from};
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    a_merge_keeps_every_link,
    a_merge_emits_contact_merged,
    a_merged_contact_is_gone,
    a_contact_cannot_be_merged_into_itself,
);

async fn a_merge_keeps_every_link(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(
        &app,
        &acme,
        json!({"emails": ["kim@shop.example"], "externalId": "cust-1"}),
    )
    .await;
    let other = contact(
        &app,
        &acme,
        json!({"emails": ["kim@home.example"], "externalId": "cust-2"}),
    )
    .await;
    let kims_ticket = ticket_from(&app, &acme, Some("kim@shop.example")).await;
    let moved_ticket = ticket_from(&app, &acme, Some("kim@home.example")).await;
    let moved_chat = chat_from(&app, &acme, "kim@home.example").await;

    let path = format!("/contacts/{}/merge", text(&other, "id"));
    app.post(&path, &acme.key, json!({"into": kim["id"]}))
        .await
        .assert_status(200);

    let merged = read(&app, &acme, text(&kim, "id")).await;
    let mut tickets = ids(&merged["tickets"]);
    tickets.sort();
    let mut expected = vec![
        text(&kims_ticket, "id").to_string(),
        text(&moved_ticket, "id").to_string(),
    ];
    expected.sort();
    assert_eq!(
        (
            tickets,
            ids(&merged["chats"]),
            merged["emails"].clone(),
            merged["externalIds"].clone()
        ),
        (
            expected,
            vec![text(&moved_chat, "id").to_string()],
            json!(["kim@shop.example", "kim@home.example"]),
            json!(["cust-1", "cust-2"])
        )
    );
}

async fn a_merge_emits_contact_merged(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"name": "Kim"})).await;
    let other = contact(&app, &acme, json!({"emails": ["kim@home.example"]})).await;
    let path = format!("/contacts/{}/merge", text(&other, "id"));
    app.post(&path, &acme.key, json!({"into": kim["id"]}))
        .await
        .assert_status(200);
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT data FROM events WHERE company_id = $1 AND name = 'contact.merged'")
        .bind(acme.company.id)
        .fetch_all(c)
        .await
        .expect("events read"));
    let data: Vec<(Value, Value, Value)> = rows
        .into_iter()
        .map(|(data,)| {
            let data = data.0;
            (
                data["contact"]["id"].clone(),
                data["contact"]["emails"].clone(),
                data["mergedContactId"].clone(),
            )
        })
        .collect();
    assert_eq!(
        data,
        vec![(
            kim["id"].clone(),
            json!(["kim@home.example"]),
            other["id"].clone()
        )]
    );
}

async fn a_merged_contact_is_gone(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"name": "Kim"})).await;
    let other = contact(&app, &acme, json!({"name": "Kim L."})).await;
    let path = format!("/contacts/{}", text(&other, "id"));
    app.post(
        &format!("{path}/merge"),
        &acme.key,
        json!({"into": kim["id"]}),
    )
    .await
    .assert_status(200);
    app.get(&path, &acme.key)
        .await
        .assert_error(404, "not_found");
}

async fn a_contact_cannot_be_merged_into_itself(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"name": "Kim"})).await;
    let path = format!("/contacts/{}/merge", text(&kim, "id"));
    let r = app.post(&path, &acme.key, json!({"into": kim["id"]})).await;
    assert_invalid(&r, &["into"]);
}
