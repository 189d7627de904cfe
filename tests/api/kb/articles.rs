//! Creating and reading articles: the shape, excerpts, validation, scopes,
//! tenancy, drafts.

use std::collections::HashSet;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::{create, field, new_category, read_only_key_scopes};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_new_article_has_the_documented_shape,
    a_given_excerpt_is_stored_trimmed,
    a_derived_excerpt_is_about_160_characters_of_plain_text,
    title_and_entity_are_required,
    text_lengths_and_nul_bytes_are_validated,
    unknown_references_are_field_errors,
    another_entitys_or_modes_category_is_unknown,
    is_published_must_be_a_boolean,
    creating_an_article_needs_kb_write,
    an_article_reads_back_with_every_field,
    another_tenants_article_is_404_on_every_route,
    unknown_and_malformed_article_ids_are_404,
    drafts_are_visible_to_editors_only,
);

async fn a_new_article_has_the_documented_shape(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    // isPublished defaults to false; the slug comes from the title.
    let body = create(
        &app,
        &acme.key,
        json!({"title": "  Reset your Password!  ", "entityId": acme.entity.id,
               "content": "# Reset\n\nOpen **Settings** and click [Reset](https://x.test/r)."}),
    )
    .await;
    for name in [
        "id",
        "title",
        "slug",
        "createdAt",
        "excerpt",
        "content",
        "entityId",
    ] {
        assert!(body[name].is_string(), "{name} in {body}");
    }
    assert_eq!(body["title"], "Reset your Password!");
    assert_eq!(body["slug"], "reset-your-password");
    assert_eq!(body["isPublished"], false);
    assert_eq!(body["categoryId"], Value::Null);
    assert_eq!(body["helpfulCount"], 0);
    assert_eq!(body["notHelpfulCount"], 0);
    assert_eq!(body["excerpt"], "Reset Open Settings and click Reset.");
    assert!(field(&body, "createdAt").ends_with('Z'));
}

async fn a_given_excerpt_is_stored_trimmed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let given = create(
        &app,
        &acme.key,
        json!({"title": "Given", "entityId": acme.entity.id, "excerpt": "  Short summary. ",
               "content": "Something else entirely."}),
    )
    .await;
    assert_eq!(given["excerpt"], "Short summary.");
}

async fn a_derived_excerpt_is_about_160_characters_of_plain_text(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let words = "lorem ipsum dolor sit amet ".repeat(20);
    let auto = create(
        &app,
        &acme.key,
        json!({"title": "Auto", "entityId": acme.entity.id,
               "content": format!("## Intro\n\n*{words}*")}),
    )
    .await;
    let excerpt = field(&auto, "excerpt");
    assert!(excerpt.starts_with("Intro lorem ipsum"), "{excerpt}");
    assert!(
        excerpt.ends_with('…') && excerpt.chars().count() <= 161,
        "{excerpt}"
    );
    assert!(
        !excerpt.contains('*') && !excerpt.contains('#'),
        "{excerpt}"
    );
}

async fn title_and_entity_are_required(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app.post("/kb/articles", &acme.key, json!({})).await;
    r.assert_error(400, "validation_failed");
    let fields: HashSet<&str> = r.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|d| d["field"].as_str())
        .collect();
    assert_eq!(fields, HashSet::from(["title", "entityId"]));
}

async fn text_lengths_and_nul_bytes_are_validated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());
    app.post(
        "/kb/articles",
        key,
        json!({"title": "x".repeat(256), "entityId": entity}),
    )
    .await
    .assert_error(400, "validation_failed");
    app.post(
        "/kb/articles",
        key,
        json!({"title": "Big", "entityId": entity, "content": "x".repeat(200_001)}),
    )
    .await
    .assert_error(400, "validation_failed");
    create(
        &app,
        key,
        json!({"title": "Big", "entityId": entity, "content": "x".repeat(200_000)}),
    )
    .await;
    for nul in [
        json!({"title": "a\u{0}b", "entityId": entity}),
        json!({"title": "T", "entityId": entity, "content": "x\u{0}"}),
    ] {
        app.post("/kb/articles", key, nul)
            .await
            .assert_error(400, "validation_failed");
    }
}

async fn unknown_references_are_field_errors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());
    let unknown_entity = app
        .post(
            "/kb/articles",
            key,
            json!({"title": "T", "entityId": uuid::Uuid::now_v7()}),
        )
        .await;
    unknown_entity.assert_error(400, "validation_failed");
    assert_eq!(unknown_entity.body["details"][0]["field"], "entityId");
    app.post(
        "/kb/articles",
        key,
        json!({"title": "T", "entityId": "nope"}),
    )
    .await
    .assert_error(400, "validation_failed");
    let unknown_category = app
        .post(
            "/kb/articles",
            key,
            json!({"title": "T", "entityId": entity, "categoryId": uuid::Uuid::now_v7()}),
        )
        .await;
    unknown_category.assert_error(400, "validation_failed");
    assert_eq!(unknown_category.body["details"][0]["field"], "categoryId");
}

async fn another_entitys_or_modes_category_is_unknown(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());
    let other_entity = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Two",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity");
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let foreign = new_category(
        &app,
        key,
        json!({"name": "Elsewhere", "entityId": other_entity.id}),
    )
    .await;
    let live_category =
        new_category(&app, &live, json!({"name": "Live", "entityId": entity})).await;
    for category in [&foreign["id"], &live_category["id"]] {
        app.post(
            "/kb/articles",
            key,
            json!({"title": "T", "entityId": entity, "categoryId": category}),
        )
        .await
        .assert_error(400, "validation_failed");
    }
}

async fn is_published_must_be_a_boolean(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    app.post(
        "/kb/articles",
        &acme.key,
        json!({"title": "T", "entityId": acme.entity.id, "isPublished": "yes"}),
    )
    .await
    .assert_error(400, "validation_failed");
}

async fn creating_an_article_needs_kb_write(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let reader = app
        .key(acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    let denied = app
        .post(
            "/kb/articles",
            &reader,
            json!({"title": "T", "entityId": acme.entity.id}),
        )
        .await;
    denied.assert_error(403, "insufficient_scope");
    assert_eq!(
        denied.body["error"],
        "Missing required permission: kb:write"
    );
}

/// A published article "Two-factor" in a new category: its id, the category.
async fn published_article(app: &TestApp, acme: &crate::support::TestCompany) -> (String, Value) {
    let category = new_category(
        app,
        &acme.key,
        json!({"name": "Account", "entityId": acme.entity.id}),
    )
    .await;
    let article = create(
        app,
        &acme.key,
        json!({"title": "Two-factor", "entityId": acme.entity.id, "content": "Use an app.",
               "categoryId": category["id"], "isPublished": true}),
    )
    .await;
    (field(&article, "id").to_string(), category)
}

async fn an_article_reads_back_with_every_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, category) = published_article(&app, &acme).await;
    let got = app.get(&format!("/kb/articles/{id}"), &acme.key).await;
    let got = got.assert_status(200);
    assert_eq!(got["content"], "Use an app.");
    assert_eq!(got["categoryId"], category["id"]);
    assert_eq!(got["entityId"], acme.entity.id.to_string());
    assert_eq!(got["isPublished"], true);
    assert_eq!(got["helpfulCount"], 0);
    assert_eq!(got["notHelpfulCount"], 0);
    assert!(got["updatedAt"].is_string());
}

async fn another_tenants_article_is_404_on_every_route(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, _) = published_article(&app, &acme).await;
    // Another company, and the other mode of the same company.
    let other = app.company().await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    for k in [other.key.as_str(), live.as_str()] {
        app.get(&format!("/kb/articles/{id}"), k)
            .await
            .assert_error(404, "not_found");
        app.patch(&format!("/kb/articles/{id}"), k, json!({"title": "Mine"}))
            .await
            .assert_error(404, "not_found");
        app.post(
            &format!("/kb/articles/{id}/helpful"),
            k,
            json!({"helpful": true}),
        )
        .await
        .assert_error(404, "not_found");
        app.delete(&format!("/kb/articles/{id}"), k)
            .await
            .assert_error(404, "not_found");
    }
}

async fn unknown_and_malformed_article_ids_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    app.get(&format!("/kb/articles/{}", uuid::Uuid::now_v7()), &acme.key)
        .await
        .assert_error(404, "not_found");
    app.get("/kb/articles/not-an-id", &acme.key)
        .await
        .assert_error(404, "not_found");
}

async fn drafts_are_visible_to_editors_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let (id, _) = published_article(&app, &acme).await;
    let draft = create(
        &app,
        key,
        json!({"title": "Draft", "entityId": acme.entity.id}),
    )
    .await;
    let reader = app
        .key(acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    app.get(&format!("/kb/articles/{}", field(&draft, "id")), &reader)
        .await
        .assert_error(404, "not_found");
    app.get(&format!("/kb/articles/{}", field(&draft, "id")), key)
        .await
        .assert_status(200);
    app.get(&format!("/kb/articles/{id}"), &reader)
        .await
        .assert_status(200);
}
