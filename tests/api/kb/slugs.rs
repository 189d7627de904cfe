//! Slugs of new articles: derived from the title, numbered on collision,
//! unique per entity and mode, always valid.

use serde_json::json;
use supportdesk::auth::{Mode, ScopeSet};

use super::{create, field};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    colliding_titles_get_numbered_slugs,
    a_taken_explicit_slug_is_a_conflict,
    an_explicit_slug_is_kept,
    malformed_explicit_slugs_are_refused,
    concurrent_creates_of_one_title_get_their_own_slugs,
    long_titles_give_bounded_slugs,
    a_non_latin_title_gives_a_fallback_slug,
    slugs_are_unique_per_entity_and_mode_not_globally,
);

/// An app, a company key and its entity, and one article titled
/// "Reset your Password!" (slug `reset-your-password`).
async fn with_first_article(backend: Backend) -> (TestApp, crate::support::TestCompany) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    create(
        &app,
        &acme.key,
        json!({"title": "  Reset your Password!  ", "entityId": acme.entity.id}),
    )
    .await;
    (app, acme)
}

async fn colliding_titles_get_numbered_slugs(backend: Backend) {
    let (app, acme) = with_first_article(backend).await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());
    let second = create(
        &app,
        key,
        json!({"title": "Reset your password", "entityId": entity}),
    )
    .await;
    assert_eq!(second["slug"], "reset-your-password-2");
    let third = create(
        &app,
        key,
        json!({"title": "Reset YOUR password?", "entityId": entity}),
    )
    .await;
    assert_eq!(third["slug"], "reset-your-password-3");
}

async fn a_taken_explicit_slug_is_a_conflict(backend: Backend) {
    let (app, acme) = with_first_article(backend).await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());
    create(
        &app,
        key,
        json!({"title": "Reset your password", "entityId": entity}),
    )
    .await;
    app.post(
        "/kb/articles",
        key,
        json!({"title": "Other", "slug": "reset-your-password-2", "entityId": entity}),
    )
    .await
    .assert_error(409, "conflict");
}

async fn an_explicit_slug_is_kept(backend: Backend) {
    let (app, acme) = with_first_article(backend).await;
    let explicit = create(
        &app,
        &acme.key,
        json!({"title": "Other", "slug": "custom-slug-1", "entityId": acme.entity.id}),
    )
    .await;
    assert_eq!(explicit["slug"], "custom-slug-1");
}

async fn malformed_explicit_slugs_are_refused(backend: Backend) {
    let (app, acme) = with_first_article(backend).await;
    for bad in ["Upper-Case", "two--dashes", "-edge", "spa ce", "ünï"] {
        let r = app
            .post(
                "/kb/articles",
                &acme.key,
                json!({"title": "T", "slug": bad, "entityId": acme.entity.id}),
            )
            .await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], "slug", "{bad}");
    }
}

async fn concurrent_creates_of_one_title_get_their_own_slugs(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());
    let creates = (0..8).map(|_| {
        let (app, entity) = (&app, &entity);
        async move { create(app, key, json!({"title": "Same title", "entityId": entity})).await }
    });
    let mut slugs: Vec<String> = futures::future::join_all(creates)
        .await
        .iter()
        .map(|a| field(a, "slug").to_string())
        .collect();
    slugs.sort();
    let mut expected: Vec<String> = (2..=8).map(|n| format!("same-title-{n}")).collect();
    expected.push("same-title".into());
    expected.sort();
    assert_eq!(slugs, expected);
}

async fn long_titles_give_bounded_slugs(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());
    let long = create(
        &app,
        key,
        json!({"title": "Word ".repeat(50), "entityId": entity}),
    )
    .await;
    let long_slug = field(&long, "slug");
    assert!(
        long_slug.len() <= 100 && !long_slug.ends_with('-'),
        "{long_slug}"
    );
    let long2 = create(
        &app,
        key,
        json!({"title": "Word ".repeat(50), "entityId": entity}),
    )
    .await;
    let long2_slug = field(&long2, "slug");
    assert!(
        long2_slug.len() <= 100 && long2_slug.ends_with("-2"),
        "{long2_slug}"
    );
}

async fn a_non_latin_title_gives_a_fallback_slug(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kanji = create(
        &app,
        &acme.key,
        json!({"title": "日本語", "entityId": acme.entity.id}),
    )
    .await;
    assert_eq!(kanji["slug"], "article");
}

async fn slugs_are_unique_per_entity_and_mode_not_globally(backend: Backend) {
    let (app, acme) = with_first_article(backend).await;
    let key = acme.key.as_str();
    let other_entity = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Two",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity");
    let elsewhere = create(
        &app,
        key,
        json!({"title": "Reset your password", "entityId": other_entity.id}),
    )
    .await;
    assert_eq!(elsewhere["slug"], "reset-your-password");
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let live_article = create(
        &app,
        &live,
        json!({"title": "Reset your password", "entityId": acme.entity.id}),
    )
    .await;
    assert_eq!(live_article["slug"], "reset-your-password");
}
