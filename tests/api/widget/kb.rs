//! The widget's knowledge base: search and article reads limited to the
//! published articles of the widget key's entity and mode.

use serde_json::json;
use supportdesk::auth::{Mode, ScopeSet};

use super::widget_get;
use crate::backend_tests;
use crate::kb::titles;
use crate::support::{Backend, TestApp};

backend_tests!(
    kb_search_returns_only_published_articles_of_that_entity,
    kb_article_reads_published_articles_of_that_entity_only,
    a_bad_search_limit_is_400_naming_it_before_the_key_is_looked_up,
);

async fn article(app: &TestApp, key: &str, entity: &str, title: &str, published: bool) -> String {
    let body = app
        .post(
            "/kb/articles",
            key,
            json!({"title": title, "entityId": entity, "isPublished": published,
                   "content": format!("{title}. Open Settings, then Security, and follow the steps.")}),
        )
        .await;
    body.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_string()
}

async fn kb_search_returns_only_published_articles_of_that_entity(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    let other = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "EU",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("second entity");
    let live_key = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let rival = app.company().await;

    article(&app, &acme.key, &entity, "Reset your password", true).await;
    article(&app, &acme.key, &entity, "Password rules (draft)", false).await;
    article(
        &app,
        &acme.key,
        &other.id.to_string(),
        "Password policy in the EU",
        true,
    )
    .await;
    article(&app, &live_key, &entity, "Live password help", true).await;
    article(
        &app,
        &rival.key,
        &rival.entity.id.to_string(),
        "Rival password",
        true,
    )
    .await;

    let search = |key: String, q: &str| {
        let q = q.to_string();
        let app = &app;
        async move { widget_get(app, &format!("/widget/v1/kb/search?widgetKey={key}&q={q}")).await }
    };

    // The TEST widget key: test-mode, published, this entity only.
    let hits = search(acme.entity.widget_key_test.clone(), "passw").await;
    assert_eq!(titles(hits.assert_status(200)), ["Reset your password"]);
    let hit = &hits.body[0];
    for name in ["id", "title", "slug", "excerpt"] {
        assert!(hit[name].is_string(), "{name} in {hit}");
    }
    assert!(hit.get("content").is_none(), "no content in a hit: {hit}");
    assert_eq!(hits.header("cache-control"), Some("no-store"));

    // The LIVE widget key of the same entity sees the live article only.
    let live = search(acme.entity.widget_key_live.clone(), "password").await;
    assert_eq!(titles(live.assert_status(200)), ["Live password help"]);

    // The other entity's key sees its own article.
    let eu = search(other.widget_key_test.clone(), "password").await;
    assert_eq!(titles(eu.assert_status(200)), ["Password policy in the EU"]);

    // Nothing matches, and text that is only punctuation: empty, not an error.
    let none = search(acme.entity.widget_key_test.clone(), "zebra").await;
    assert_eq!(none.assert_status(200), &json!([]));
    let punct = search(acme.entity.widget_key_test.clone(), "%22%2A%28").await;
    assert_eq!(punct.assert_status(200), &json!([]));

    // q is required; limit is checked and clamped.
    let key = &acme.entity.widget_key_test;
    let missing = widget_get(&app, &format!("/widget/v1/kb/search?widgetKey={key}")).await;
    missing.assert_error(400, "validation_failed");
    assert_eq!(missing.body["details"][0]["field"], "q");
    widget_get(
        &app,
        &format!("/widget/v1/kb/search?widgetKey={key}&q=reset&limit=0"),
    )
    .await
    .assert_error(400, "validation_failed");
    let clamped = widget_get(
        &app,
        &format!("/widget/v1/kb/search?widgetKey={key}&q=reset&limit=5000"),
    )
    .await;
    assert_eq!(titles(clamped.assert_status(200)), ["Reset your password"]);
}

async fn kb_article_reads_published_articles_of_that_entity_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    let other = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "EU",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("second entity");
    let published = article(&app, &acme.key, &entity, "Reset your password", true).await;
    let draft = article(&app, &acme.key, &entity, "Unfinished", false).await;
    let elsewhere = article(&app, &acme.key, &other.id.to_string(), "EU only", true).await;

    let key = &acme.entity.widget_key_test;
    let read = widget_get(
        &app,
        &format!("/widget/v1/kb/articles/{published}?widgetKey={key}"),
    )
    .await;
    let body = read.assert_status(200);
    assert_eq!(body["title"], "Reset your password");
    assert!(
        body["content"]
            .as_str()
            .expect("content")
            .contains("Settings")
    );

    for hidden in [&draft, &elsewhere, &"nope".to_string()] {
        widget_get(
            &app,
            &format!("/widget/v1/kb/articles/{hidden}?widgetKey={key}"),
        )
        .await
        .assert_error(404, "not_found");
    }
    // The LIVE key of the same entity does not see test-mode articles.
    let live = &acme.entity.widget_key_live;
    widget_get(
        &app,
        &format!("/widget/v1/kb/articles/{published}?widgetKey={live}"),
    )
    .await
    .assert_error(404, "not_found");
}

async fn a_bad_search_limit_is_400_naming_it_before_the_key_is_looked_up(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let r = widget_get(
        &app,
        "/widget/v1/kb/search?widgetKey=wk_test_unknown&q=reset&limit=0",
    )
    .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"][0]["field"], "limit");
}
