//! `/organizations`: a domain collects the contacts with an email there
//! (those already known and those to come); an organisation lists its
//! contacts and their tickets; a domain is one organisation's.

use serde_json::json;

use super::{contact, ids, text, ticket_from};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_domain_collects_its_contacts,
    a_new_contact_at_a_domain_joins_its_organization,
    an_organization_lists_its_contacts_and_their_tickets,
    a_domain_another_organization_holds_is_a_conflict,
    an_organization_is_changed,
    a_deleted_organizations_contacts_stay,
);

async fn organization(app: &TestApp, acme: &TestCompany, domains: &[&str]) -> serde_json::Value {
    app.post(
        "/organizations",
        &acme.key,
        json!({"name": "Shop", "domains": domains, "customFields": {"tier": "gold"}}),
    )
    .await
    .assert_status(201)
    .clone()
}

async fn a_domain_collects_its_contacts(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = contact(&app, &acme, json!({"emails": ["kim@shop.example"]})).await;
    let ann = contact(&app, &acme, json!({"emails": ["ann@SHOP.example"]})).await;
    contact(&app, &acme, json!({"emails": ["bob@elsewhere.example"]})).await;
    let shop = organization(&app, &acme, &["shop.example", "shop.test"]).await;

    let path = format!("/contacts?organizationId={}", text(&shop, "id"));
    let members = app.get(&path, &acme.key).await;
    let mut members = ids(&members.assert_status(200)["data"]);
    members.sort();
    let mut expected = vec![text(&kim, "id").to_string(), text(&ann, "id").to_string()];
    expected.sort();
    assert_eq!(members, expected);
}

async fn a_new_contact_at_a_domain_joins_its_organization(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let shop = organization(&app, &acme, &["shop.example"]).await;
    let ticket = ticket_from(&app, &acme, Some("kim@shop.example")).await;
    let kim = app
        .get(
            &format!("/contacts/{}", text(&ticket, "contactId")),
            &acme.key,
        )
        .await;
    assert_eq!(kim.assert_status(200)["organizationId"], shop["id"]);
}

async fn an_organization_lists_its_contacts_and_their_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let shop = organization(&app, &acme, &["shop.example"]).await;
    let ticket = ticket_from(&app, &acme, Some("kim@shop.example")).await;
    ticket_from(&app, &acme, Some("bob@elsewhere.example")).await;

    let read = app
        .get(&format!("/organizations/{}", text(&shop, "id")), &acme.key)
        .await;
    let read = read.assert_status(200);
    assert_eq!(
        (
            ids(&read["contacts"]),
            ids(&read["tickets"]),
            &read["domains"]
        ),
        (
            vec![text(&ticket, "contactId").to_string()],
            vec![text(&ticket, "id").to_string()],
            &json!(["shop.example"])
        )
    );
}

async fn a_domain_another_organization_holds_is_a_conflict(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    organization(&app, &acme, &["shop.example"]).await;
    let r = app
        .post(
            "/organizations",
            &acme.key,
            json!({"name": "Copycat", "domains": ["@Shop.Example"]}),
        )
        .await;
    r.assert_error(409, "conflict");
}

async fn an_organization_is_changed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let shop = organization(&app, &acme, &["shop.example"]).await;
    let r = app
        .patch(
            &format!("/organizations/{}", text(&shop, "id")),
            &acme.key,
            json!({"name": "Shop Inc", "domains": ["shop.test"]}),
        )
        .await;
    let changed = r.assert_status(200);
    assert_eq!(
        (
            &changed["name"],
            &changed["domains"],
            &changed["customFields"]
        ),
        (
            &json!("Shop Inc"),
            &json!(["shop.test"]),
            &json!({"tier": "gold"})
        )
    );
}

async fn a_deleted_organizations_contacts_stay(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let shop = organization(&app, &acme, &["shop.example"]).await;
    let kim = contact(&app, &acme, json!({"emails": ["kim@shop.example"]})).await;
    app.delete(&format!("/organizations/{}", text(&shop, "id")), &acme.key)
        .await
        .assert_status(200);
    let kim = app
        .get(&format!("/contacts/{}", text(&kim, "id")), &acme.key)
        .await;
    assert_eq!(kim.assert_status(200)["organizationId"], json!(null));
}
