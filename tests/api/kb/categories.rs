//! /kb/categories: slugs, article counts, renames, deletes, tenancy.

use std::collections::HashMap;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::{create, field, new_category, patch_ok, read_only_key_scopes};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_category_gets_its_slug_from_its_name,
    colliding_category_names_get_numbered_slugs,
    a_taken_category_slug_is_a_conflict,
    an_explicit_category_slug_is_kept,
    category_input_is_validated,
    listed_categories_have_the_documented_shape,
    published_articles_count_and_drafts_do_not,
    counts_follow_publishing_moves_and_deletes,
    a_category_is_renamed_and_reslugged,
    deleting_a_category_needs_kb_delete,
    deleting_a_category_leaves_its_articles_uncategorised,
    another_company_cannot_edit_a_category,
    the_other_mode_lists_no_categories,
    listing_an_unknown_entitys_categories_is_a_field_error,
);

fn category_body(entity: &str, name: &str, slug: Option<&str>) -> Value {
    let mut body = json!({"name": name, "entityId": entity});
    if let Some(slug) = slug {
        body["slug"] = json!(slug);
    }
    body
}

/// `{slug: articleCount}` of the entity's categories.
async fn category_counts(app: &TestApp, key: &str, entity: &str) -> HashMap<String, i64> {
    let r = app
        .get(&format!("/kb/categories?entityId={entity}"), key)
        .await;
    let body = r.assert_status(200).clone();
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|c| {
            (
                field(c, "slug").to_string(),
                c["articleCount"].as_i64().expect("count"),
            )
        })
        .collect()
}

/// Categories "Billing & Plans" (`billing-plans`), "Billing plans"
/// (`billing-plans-2`) and "Account" (`acct`); articles A and B published
/// and C a draft in billing, D published in account.
struct Shelved {
    app: TestApp,
    acme: TestCompany,
    entity: String,
    billing: Value,
    account: Value,
    a: Value,
    b: Value,
    c: Value,
}

async fn shelved(backend: Backend) -> Shelved {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let entity = acme.entity.id.to_string();
    let billing = new_category(&app, key, category_body(&entity, "Billing & Plans", None)).await;
    new_category(&app, key, category_body(&entity, "Billing plans", None)).await;
    let account = new_category(&app, key, category_body(&entity, "Account", Some("acct"))).await;
    let make = |title: &'static str, category: &Value, published: bool| {
        json!({"title": title, "entityId": entity, "categoryId": category["id"],
               "isPublished": published})
    };
    let a = create(&app, key, make("A", &billing, true)).await;
    let b = create(&app, key, make("B", &billing, true)).await;
    let c = create(&app, key, make("C", &billing, false)).await;
    create(&app, key, make("D", &account, true)).await;
    Shelved {
        app,
        acme,
        entity,
        billing,
        account,
        a,
        b,
        c,
    }
}

async fn a_category_gets_its_slug_from_its_name(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    let billing = app
        .post(
            "/kb/categories",
            &acme.key,
            category_body(&entity, "Billing & Plans", None),
        )
        .await;
    let billing = billing.assert_status(201).clone();
    assert_eq!(billing["slug"], "billing-plans");
    assert_eq!(billing["name"], "Billing & Plans");
    assert_eq!(billing["articleCount"], 0);
}

async fn colliding_category_names_get_numbered_slugs(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    new_category(
        &app,
        &acme.key,
        category_body(&entity, "Billing & Plans", None),
    )
    .await;
    let again = app
        .post(
            "/kb/categories",
            &acme.key,
            category_body(&entity, "Billing plans", None),
        )
        .await;
    assert_eq!(again.assert_status(201)["slug"], "billing-plans-2");
}

async fn a_taken_category_slug_is_a_conflict(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    new_category(
        &app,
        &acme.key,
        category_body(&entity, "Billing & Plans", None),
    )
    .await;
    app.post(
        "/kb/categories",
        &acme.key,
        category_body(&entity, "X", Some("billing-plans")),
    )
    .await
    .assert_error(409, "conflict");
}

async fn an_explicit_category_slug_is_kept(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    let account = new_category(
        &app,
        &acme.key,
        category_body(&entity, "Account", Some("acct")),
    )
    .await;
    assert_eq!(account["slug"], "acct");
}

async fn category_input_is_validated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    app.post("/kb/categories", &acme.key, json!({"name": "No entity"}))
        .await
        .assert_error(400, "validation_failed");
    app.post(
        "/kb/categories",
        &acme.key,
        json!({"name": "Unknown", "entityId": uuid::Uuid::now_v7()}),
    )
    .await
    .assert_error(400, "validation_failed");
}

async fn listed_categories_have_the_documented_shape(backend: Backend) {
    let s = shelved(backend).await;
    let shape = s
        .app
        .get(
            &format!("/kb/categories?entityId={}", s.entity),
            &s.acme.key,
        )
        .await;
    let shape = shape.assert_status(200);
    let first = shape["data"][0].as_object().expect("category");
    for name in ["id", "name", "slug", "articleCount"] {
        assert!(first.contains_key(name), "{name} in {first:?}");
    }
}

async fn published_articles_count_and_drafts_do_not(backend: Backend) {
    let s = shelved(backend).await;
    let now = category_counts(&s.app, &s.acme.key, &s.entity).await;
    assert_eq!(now["billing-plans"], 2);
    assert_eq!(now["acct"], 1);
    assert_eq!(now["billing-plans-2"], 0);
}

async fn counts_follow_publishing_moves_and_deletes(backend: Backend) {
    let s = shelved(backend).await;
    let (app, key, entity) = (&s.app, s.acme.key.as_str(), s.entity.as_str());
    patch_ok(app, key, &s.c, json!({"isPublished": true})).await;
    assert_eq!(category_counts(app, key, entity).await["billing-plans"], 3);
    patch_ok(app, key, &s.a, json!({"isPublished": false})).await;
    assert_eq!(category_counts(app, key, entity).await["billing-plans"], 2);
    patch_ok(app, key, &s.b, json!({"categoryId": s.account["id"]})).await;
    let now = category_counts(app, key, entity).await;
    assert_eq!((now["billing-plans"], now["acct"]), (1, 2));
    app.delete(&format!("/kb/articles/{}", field(&s.b, "id")), key)
        .await
        .assert_status(200);
    assert_eq!(category_counts(app, key, entity).await["acct"], 1);
}

async fn a_category_is_renamed_and_reslugged(backend: Backend) {
    let s = shelved(backend).await;
    let (app, key) = (&s.app, s.acme.key.as_str());
    let path = format!("/kb/categories/{}", field(&s.account, "id"));
    let renamed = app.patch(&path, key, json!({"name": "My account"})).await;
    let renamed = renamed.assert_status(200);
    assert_eq!(
        (renamed["name"].clone(), renamed["slug"].clone()),
        (json!("My account"), json!("acct"))
    );
    assert_eq!(renamed["articleCount"], 1);
    app.patch(&path, key, json!({"slug": "billing-plans"}))
        .await
        .assert_error(409, "conflict");
    app.patch(&path, key, json!({}))
        .await
        .assert_error(400, "validation_failed");
}

async fn deleting_a_category_needs_kb_delete(backend: Backend) {
    let s = shelved(backend).await;
    let reader = s
        .app
        .key(s.acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    s.app
        .delete(
            &format!("/kb/categories/{}", field(&s.billing, "id")),
            &reader,
        )
        .await
        .assert_error(403, "insufficient_scope");
}

async fn deleting_a_category_leaves_its_articles_uncategorised(backend: Backend) {
    let s = shelved(backend).await;
    let (app, key) = (&s.app, s.acme.key.as_str());
    let billing_path = format!("/kb/categories/{}", field(&s.billing, "id"));
    let deleted = app.delete(&billing_path, key).await;
    assert_eq!(deleted.assert_status(200)["deleted"], true);
    let orphan = app
        .get(&format!("/kb/articles/{}", field(&s.c, "id")), key)
        .await;
    assert_eq!(orphan.assert_status(200)["categoryId"], Value::Null);
    assert!(
        !category_counts(app, key, &s.entity)
            .await
            .contains_key("billing-plans")
    );
    app.get(&billing_path, key)
        .await
        .assert_error(404, "not_found");
}

async fn another_company_cannot_edit_a_category(backend: Backend) {
    let s = shelved(backend).await;
    let other = s.app.company().await;
    s.app
        .patch(
            &format!("/kb/categories/{}", field(&s.account, "id")),
            &other.key,
            json!({"name": "Mine"}),
        )
        .await
        .assert_error(404, "not_found");
}

async fn the_other_mode_lists_no_categories(backend: Backend) {
    let s = shelved(backend).await;
    let live = s
        .app
        .key(s.acme.company.id, Mode::Live, ScopeSet::all())
        .await;
    let live_list = s
        .app
        .get(&format!("/kb/categories?entityId={}", s.entity), &live)
        .await;
    assert_eq!(live_list.assert_status(200)["data"], json!([]));
}

async fn listing_an_unknown_entitys_categories_is_a_field_error(backend: Backend) {
    let s = shelved(backend).await;
    s.app
        .get(
            &format!("/kb/categories?entityId={}", uuid::Uuid::now_v7()),
            &s.acme.key,
        )
        .await
        .assert_error(400, "validation_failed");
}
