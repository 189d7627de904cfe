//! `/contacts` by hand: created, read with their tickets and chats, listed
//! with search and cursor paging, changed, deleted; bad input refused.

use serde_json::json;

use super::{chat_from, contact, ids, read, text, ticket_from};
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    a_contact_is_created_with_its_fields,
    a_contact_shows_their_tickets_and_chats_newest_first,
    contacts_are_found_by_part_of_a_name_or_an_email,
    contacts_page_by_cursor_newest_first,
    a_contact_is_changed,
    a_deleted_contacts_ticket_stays_without_a_contact,
    an_email_another_contact_holds_is_a_conflict,
    a_contact_with_a_bad_email_is_refused,
    another_companys_contact_is_not_found,
);

async fn a_contact_is_created_with_its_fields(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let created = contact(
        &app,
        &acme,
        json!({"name": "Kim Lee", "emails": ["Kim@Shop.Example"], "phone": "+1 555 0100",
            "externalId": "cust-7", "customFields": {"plan": "gold", "seats": 4},
            "tags": ["VIP"], "notes": "Prefers email"}),
    )
    .await;
    let read = read(&app, &acme, text(&created, "id")).await;
    let fields = [
        "name",
        "emails",
        "phone",
        "externalId",
        "externalIds",
        "organizationId",
        "customFields",
        "tags",
        "notes",
    ]
    .map(|field| read[field].clone());
    assert_eq!(
        fields.to_vec(),
        vec![
            json!("Kim Lee"),
            json!(["kim@shop.example"]),
            json!("+1 555 0100"),
            json!("cust-7"),
            json!(["cust-7"]),
            json!(null),
            json!({"plan": "gold", "seats": 4}),
            json!(["vip"]),
            json!("Prefers email"),
        ]
    );
}

async fn a_contact_shows_their_tickets_and_chats_newest_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"emails": ["kim@shop.example"]})).await;
    let first = ticket_from(&app, &acme, Some("kim@shop.example")).await;
    app.state.clock.advance(chrono::Duration::seconds(1));
    let chat = chat_from(&app, &acme, "kim@shop.example").await;
    app.state.clock.advance(chrono::Duration::seconds(1));
    let second = ticket_from(&app, &acme, Some("kim@shop.example")).await;
    ticket_from(&app, &acme, Some("someone@else.example")).await;

    let read = read(&app, &acme, text(&kim, "id")).await;
    assert_eq!(
        (ids(&read["tickets"]), ids(&read["chats"])),
        (
            vec![
                text(&second, "id").to_string(),
                text(&first, "id").to_string()
            ],
            vec![text(&chat, "id").to_string()]
        )
    );
}

async fn contacts_are_found_by_part_of_a_name_or_an_email(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let by_name = contact(&app, &acme, json!({"name": "Kim Lee"})).await;
    let by_email = contact(&app, &acme, json!({"emails": ["kimberly@shop.example"]})).await;
    contact(
        &app,
        &acme,
        json!({"name": "Ann", "emails": ["ann@shop.example"]}),
    )
    .await;

    let page = app.get("/contacts?q=KIM", &acme.key).await;
    let mut found = ids(&page.assert_status(200)["data"]);
    found.sort();
    let mut expected = vec![
        text(&by_name, "id").to_string(),
        text(&by_email, "id").to_string(),
    ];
    expected.sort();
    assert_eq!(found, expected);
}

async fn contacts_page_by_cursor_newest_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut made = Vec::new();
    for name in ["A", "B", "C"] {
        made.push(text(&contact(&app, &acme, json!({"name": name})).await, "id").to_string());
        app.state.clock.advance(chrono::Duration::seconds(1));
    }
    let first = app.get("/contacts?limit=2", &acme.key).await;
    let first = first.assert_status(200).clone();
    let cursor = text(&first, "nextCursor");
    let second = app
        .get(&format!("/contacts?limit=2&after={cursor}"), &acme.key)
        .await;
    let mut listed = ids(&first["data"]);
    listed.extend(ids(&second.assert_status(200)["data"]));
    made.reverse();
    assert_eq!(listed, made);
}

async fn a_contact_is_changed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(
        &app,
        &acme,
        json!({"name": "Kim", "emails": ["kim@shop.example"], "phone": "1"}),
    )
    .await;
    let path = format!("/contacts/{}", text(&kim, "id"));
    let changed = app
        .patch(
            &path,
            &acme.key,
            json!({"emails": ["kim@home.example", "KIM@shop.example"], "phone": null}),
        )
        .await;
    let changed = changed.assert_status(200);
    assert_eq!(
        (&changed["name"], &changed["emails"], &changed["phone"]),
        (
            &json!("Kim"),
            &json!(["kim@home.example", "kim@shop.example"]),
            &json!(null)
        )
    );
}

async fn a_deleted_contacts_ticket_stays_without_a_contact(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ticket = ticket_from(&app, &acme, Some("kim@shop.example")).await;
    let contact = text(&ticket, "contactId");
    app.delete(&format!("/contacts/{contact}"), &acme.key)
        .await
        .assert_status(200);
    let ticket = app
        .get(&format!("/tickets/{}", text(&ticket, "id")), &acme.key)
        .await;
    assert_eq!(ticket.assert_status(200)["contactId"], json!(null));
}

async fn an_email_another_contact_holds_is_a_conflict(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    contact(&app, &acme, json!({"emails": ["kim@shop.example"]})).await;
    let r = app
        .post(
            "/contacts",
            &acme.key,
            json!({"emails": ["KIM@shop.example"]}),
        )
        .await;
    r.assert_error(409, "conflict");
}

async fn a_contact_with_a_bad_email_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post("/contacts", &acme.key, json!({"emails": ["not an email"]}))
        .await;
    assert_invalid(&r, &["emails"]);
    let list = app.get("/contacts", &acme.key).await;
    assert_eq!(list.assert_status(200)["total"], 0);
}

async fn another_companys_contact_is_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let kim = contact(&app, &acme, json!({"name": "Kim"})).await;
    let r = app
        .get(&format!("/contacts/{}", text(&kim, "id")), &other.key)
        .await;
    r.assert_error(404, "not_found");
}
