//! Knowledge base: articles, categories, ranked search on both backends,
//! votes. The search corpus is one constant, and every query must give the
//! same top results on SQLite (FTS5) and Postgres (tsvector).

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    creates_articles_with_slugs_and_excerpts,
    gets_articles_by_tenant,
    lists_published_articles_with_filters,
    updates_and_deletes_articles,
    categories_count_published_articles,
    search_ranks_the_corpus_the_same_on_both_backends,
    search_validates_input_and_survives_any_text,
    votes_are_all_counted_under_concurrency,
    search_on_50000_articles_is_one_indexed_query,
);

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    app.post("/kb/articles", key, body)
        .await
        .assert_status(201)
        .clone()
}

fn field<'a>(body: &'a Value, name: &str) -> &'a str {
    body[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {body}"))
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|a| field(a, "id").to_string())
        .collect()
}

fn read_only_key_scopes() -> ScopeSet {
    ScopeSet::from_scopes([Scope::KbRead])
}

async fn creates_articles_with_slugs_and_excerpts(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key, entity) = (acme.key.as_str(), acme.entity.id.to_string());

    // The documented shape; isPublished defaults to false; slug from the title.
    let body = create(
        &app,
        key,
        json!({"title": "  Reset your Password!  ", "entityId": entity,
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

    // Collisions get -2, -3; an explicit slug that is taken is 409.
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
    app.post(
        "/kb/articles",
        key,
        json!({"title": "Other", "slug": "reset-your-password-2", "entityId": entity}),
    )
    .await
    .assert_error(409, "conflict");
    let explicit = create(
        &app,
        key,
        json!({"title": "Other", "slug": "custom-slug-1", "entityId": entity}),
    )
    .await;
    assert_eq!(explicit["slug"], "custom-slug-1");
    for bad in ["Upper-Case", "two--dashes", "-edge", "spa ce", "ünï"] {
        let r = app
            .post(
                "/kb/articles",
                key,
                json!({"title": "T", "slug": bad, "entityId": entity}),
            )
            .await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], "slug", "{bad}");
    }

    // Concurrent creates of one title all get their own slug.
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

    // Long and non-Latin titles still give valid slugs.
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
    let kanji = create(&app, key, json!({"title": "日本語", "entityId": entity})).await;
    assert_eq!(kanji["slug"], "article");

    // Slugs are unique per entity and per mode, not globally.
    let other_entity =
        supportdesk::entities::store::create(&app.state.db, acme.company.id, "Two", None)
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
        json!({"title": "Reset your password", "entityId": entity}),
    )
    .await;
    assert_eq!(live_article["slug"], "reset-your-password");

    // Excerpts: given ones are stored; otherwise ~160 characters of text.
    let given = create(
        &app,
        key,
        json!({"title": "Given", "entityId": entity, "excerpt": "  Short summary. ",
               "content": "Something else entirely."}),
    )
    .await;
    assert_eq!(given["excerpt"], "Short summary.");
    let words = "lorem ipsum dolor sit amet ".repeat(20);
    let auto = create(
        &app,
        key,
        json!({"title": "Auto", "entityId": entity, "content": format!("## Intro\n\n*{words}*")}),
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

    // Validation: title and entityId required; limits; unknown references.
    let r = app.post("/kb/articles", key, json!({})).await;
    r.assert_error(400, "validation_failed");
    let fields: HashSet<&str> = r.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|d| d["field"].as_str())
        .collect();
    assert_eq!(fields, HashSet::from(["title", "entityId"]));
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
    // A category of another entity, or of the other mode, is unknown here.
    let foreign = app
        .post(
            "/kb/categories",
            key,
            json!({"name": "Elsewhere", "entityId": other_entity.id}),
        )
        .await
        .assert_status(201)
        .clone();
    let live_category = app
        .post(
            "/kb/categories",
            &live,
            json!({"name": "Live", "entityId": entity}),
        )
        .await
        .assert_status(201)
        .clone();
    for category in [&foreign["id"], &live_category["id"]] {
        app.post(
            "/kb/articles",
            key,
            json!({"title": "T", "entityId": entity, "categoryId": category}),
        )
        .await
        .assert_error(400, "validation_failed");
    }
    app.post(
        "/kb/articles",
        key,
        json!({"title": "T", "entityId": entity, "isPublished": "yes"}),
    )
    .await
    .assert_error(400, "validation_failed");

    // Creating needs kb:write.
    let reader = app
        .key(acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    let denied = app
        .post(
            "/kb/articles",
            &reader,
            json!({"title": "T", "entityId": entity}),
        )
        .await;
    denied.assert_error(403, "insufficient_scope");
    assert_eq!(
        denied.body["error"],
        "Missing required permission: kb:write"
    );
}

async fn gets_articles_by_tenant(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let category = app
        .post(
            "/kb/categories",
            key,
            json!({"name": "Account", "entityId": acme.entity.id}),
        )
        .await
        .assert_status(201)
        .clone();
    let article = create(
        &app,
        key,
        json!({"title": "Two-factor", "entityId": acme.entity.id, "content": "Use an app.",
               "categoryId": category["id"], "isPublished": true}),
    )
    .await;
    let id = field(&article, "id");
    let got = app.get(&format!("/kb/articles/{id}"), key).await;
    let got = got.assert_status(200);
    assert_eq!(got["content"], "Use an app.");
    assert_eq!(got["categoryId"], category["id"]);
    assert_eq!(got["entityId"], acme.entity.id.to_string());
    assert_eq!(got["isPublished"], true);
    assert_eq!(got["helpfulCount"], 0);
    assert_eq!(got["notHelpfulCount"], 0);
    assert!(got["updatedAt"].is_string());

    // Another company, the other mode, unknown and malformed ids: 404.
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
    app.get(&format!("/kb/articles/{}", uuid::Uuid::now_v7()), key)
        .await
        .assert_error(404, "not_found");
    app.get("/kb/articles/not-an-id", key)
        .await
        .assert_error(404, "not_found");

    // Drafts are visible to editors (kb:write) only.
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

async fn lists_published_articles_with_filters(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let entity = acme.entity.id.to_string();
    let second = supportdesk::entities::store::create(&app.state.db, acme.company.id, "Two", None)
        .await
        .expect("entity");
    let category = app
        .post(
            "/kb/categories",
            key,
            json!({"name": "Guides", "entityId": entity}),
        )
        .await
        .assert_status(201)
        .clone();
    let mut published = Vec::new();
    for i in 0..25 {
        let cat = if i % 5 == 0 {
            category["id"].clone()
        } else {
            Value::Null
        };
        let a = create(
            &app,
            key,
            json!({"title": format!("Guide {i}"), "entityId": entity, "isPublished": true,
                   "categoryId": cat, "content": format!("Text {i}")}),
        )
        .await;
        published.push(field(&a, "id").to_string());
    }
    let draft = create(&app, key, json!({"title": "Draft", "entityId": entity})).await;
    create(
        &app,
        key,
        json!({"title": "Elsewhere", "entityId": second.id, "isPublished": true}),
    )
    .await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    create(
        &app,
        &live,
        json!({"title": "Live", "entityId": entity, "isPublished": true}),
    )
    .await;

    // Shape, default limit 20, newest first, published only.
    let page = app
        .get(&format!("/kb/articles?entityId={entity}"), key)
        .await;
    let page = page.assert_status(200);
    assert_eq!(page["total"], 25);
    assert_eq!(page["limit"], 20);
    assert_eq!(page["offset"], 0);
    let data = page["data"].as_array().expect("data");
    assert_eq!(data.len(), 20);
    let first = data[0].as_object().expect("object");
    let keys: HashSet<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        HashSet::from([
            "id",
            "title",
            "slug",
            "excerpt",
            "categoryId",
            "isPublished",
            "createdAt"
        ])
    );
    assert_eq!(data[0]["id"], published[24].as_str());
    assert_eq!(data[0]["excerpt"], "Text 24");
    let rest = app
        .get(
            &format!("/kb/articles?entityId={entity}&limit=10&offset=20"),
            key,
        )
        .await;
    let rest = rest.assert_status(200);
    assert_eq!(
        ids(&rest["data"]),
        published[..5].iter().rev().cloned().collect::<Vec<_>>()
    );
    let clamped = app.get("/kb/articles?limit=1000", key).await;
    let clamped = clamped.assert_status(200);
    assert_eq!(clamped["limit"], 100);
    assert_eq!(clamped["total"], 26, "both entities, published, this mode");
    for bad in [
        "limit=0",
        "limit=abc",
        "offset=-1",
        "status=ALL",
        "entityId=nope",
    ] {
        app.get(&format!("/kb/articles?{bad}"), key)
            .await
            .assert_error(400, "validation_failed");
    }
    let unknown_entity = app
        .get(
            &format!("/kb/articles?entityId={}", uuid::Uuid::now_v7()),
            key,
        )
        .await;
    unknown_entity.assert_error(400, "validation_failed");
    let unknown_category = app
        .get(
            &format!("/kb/articles?categoryId={}", uuid::Uuid::now_v7()),
            key,
        )
        .await;
    unknown_category.assert_error(400, "validation_failed");

    // Category filter.
    let by_category = app
        .get(
            &format!("/kb/articles?categoryId={}", field(&category, "id")),
            key,
        )
        .await;
    assert_eq!(by_category.assert_status(200)["total"], 5);

    // Drafts: status=all|draft need kb:write.
    let drafts = app.get("/kb/articles?status=draft", key).await;
    let drafts = drafts.assert_status(200);
    assert_eq!(ids(&drafts["data"]), vec![field(&draft, "id").to_string()]);
    let all = app
        .get(&format!("/kb/articles?status=all&entityId={entity}"), key)
        .await;
    assert_eq!(all.assert_status(200)["total"], 26);
    let reader = app
        .key(acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    for status in ["all", "draft"] {
        let r = app
            .get(&format!("/kb/articles?status={status}"), &reader)
            .await;
        r.assert_error(403, "insufficient_scope");
        assert_eq!(r.body["error"], "Missing required permission: kb:write");
    }
    let as_reader = app.get("/kb/articles?status=published", &reader).await;
    assert_eq!(as_reader.assert_status(200)["total"], 26);

    // The other mode sees only its own.
    let live_list = app.get("/kb/articles", &live).await;
    assert_eq!(live_list.assert_status(200)["total"], 1);
}

async fn updates_and_deletes_articles(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let entity = acme.entity.id.to_string();
    let category = app
        .post(
            "/kb/categories",
            key,
            json!({"name": "Guides", "entityId": entity}),
        )
        .await
        .assert_status(201)
        .clone();
    let article = create(
        &app,
        key,
        json!({"title": "Old title", "entityId": entity, "content": "Old **text**."}),
    )
    .await;
    let path = format!("/kb/articles/{}", field(&article, "id"));
    create(&app, key, json!({"title": "Taken", "entityId": entity})).await;

    // The derived excerpt follows the content; the slug stays.
    let updated = app
        .patch(
            &path,
            key,
            json!({"title": "New title", "content": "New _text_ here.", "isPublished": true,
                   "categoryId": category["id"]}),
        )
        .await;
    let updated = updated.assert_status(200);
    assert_eq!(updated["title"], "New title");
    assert_eq!(updated["slug"], "old-title");
    assert_eq!(updated["excerpt"], "New text here.");
    assert_eq!(updated["content"], "New _text_ here.");
    assert_eq!(updated["isPublished"], true);
    assert_eq!(updated["categoryId"], category["id"]);

    // A given excerpt sticks through content changes until cleared.
    let custom = app.patch(&path, key, json!({"excerpt": "Custom."})).await;
    assert_eq!(custom.assert_status(200)["excerpt"], "Custom.");
    let kept = app
        .patch(&path, key, json!({"content": "Third text."}))
        .await;
    assert_eq!(kept.assert_status(200)["excerpt"], "Custom.");
    let cleared = app.patch(&path, key, json!({"excerpt": null})).await;
    assert_eq!(cleared.assert_status(200)["excerpt"], "Third text.");

    // Slugs: explicit change, taken → 409, invalid → 400.
    let renamed = app.patch(&path, key, json!({"slug": "new-title"})).await;
    assert_eq!(renamed.assert_status(200)["slug"], "new-title");
    app.patch(&path, key, json!({"slug": "taken"}))
        .await
        .assert_error(409, "conflict");
    app.patch(&path, key, json!({"slug": "Bad Slug"}))
        .await
        .assert_error(400, "validation_failed");
    app.patch(&path, key, json!({}))
        .await
        .assert_error(400, "validation_failed");
    app.patch(&path, key, json!({"title": ""}))
        .await
        .assert_error(400, "validation_failed");
    app.patch(&path, key, json!({"categoryId": uuid::Uuid::now_v7()}))
        .await
        .assert_error(400, "validation_failed");

    // Uncategorise, unpublish.
    let plain = app
        .patch(
            &path,
            key,
            json!({"categoryId": null, "isPublished": false}),
        )
        .await;
    let plain = plain.assert_status(200);
    assert_eq!(plain["categoryId"], Value::Null);
    assert_eq!(plain["isPublished"], false);

    // Delete needs kb:delete; then the article is gone.
    let writer = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::KbRead, Scope::KbWrite]),
        )
        .await;
    let denied = app.delete(&path, &writer).await;
    denied.assert_error(403, "insufficient_scope");
    assert_eq!(
        denied.body["error"],
        "Missing required permission: kb:delete"
    );
    let deleted = app.delete(&path, key).await;
    let deleted = deleted.assert_status(200);
    assert_eq!(deleted["deleted"], true);
    assert_eq!(deleted["id"], article["id"]);
    app.get(&path, key).await.assert_error(404, "not_found");
    app.delete(&path, key).await.assert_error(404, "not_found");
}

async fn categories_count_published_articles(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let entity = acme.entity.id.to_string();
    let new_category = |name: &'static str, slug: Option<&'static str>| {
        let mut body = json!({"name": name, "entityId": entity});
        if let Some(slug) = slug {
            body["slug"] = json!(slug);
        }
        body
    };
    let billing = app
        .post("/kb/categories", key, new_category("Billing & Plans", None))
        .await;
    let billing = billing.assert_status(201).clone();
    assert_eq!(billing["slug"], "billing-plans");
    assert_eq!(billing["name"], "Billing & Plans");
    assert_eq!(billing["articleCount"], 0);
    let again = app
        .post("/kb/categories", key, new_category("Billing plans", None))
        .await;
    assert_eq!(again.assert_status(201)["slug"], "billing-plans-2");
    app.post(
        "/kb/categories",
        key,
        new_category("X", Some("billing-plans")),
    )
    .await
    .assert_error(409, "conflict");
    let account = app
        .post("/kb/categories", key, new_category("Account", Some("acct")))
        .await
        .assert_status(201)
        .clone();
    assert_eq!(account["slug"], "acct");
    app.post("/kb/categories", key, json!({"name": "No entity"}))
        .await
        .assert_error(400, "validation_failed");
    app.post(
        "/kb/categories",
        key,
        json!({"name": "Unknown", "entityId": uuid::Uuid::now_v7()}),
    )
    .await
    .assert_error(400, "validation_failed");

    let shape = app
        .get(&format!("/kb/categories?entityId={entity}"), key)
        .await;
    let shape = shape.assert_status(200);
    let first = shape["data"][0].as_object().expect("category");
    for name in ["id", "name", "slug", "articleCount"] {
        assert!(first.contains_key(name), "{name} in {first:?}");
    }

    // Published articles count; drafts do not.
    let make = |title: &'static str, category: &Value, published: bool| {
        json!({"title": title, "entityId": entity, "categoryId": category["id"],
               "isPublished": published})
    };
    let a = create(&app, key, make("A", &billing, true)).await;
    let b = create(&app, key, make("B", &billing, true)).await;
    let c = create(&app, key, make("C", &billing, false)).await;
    create(&app, key, make("D", &account, true)).await;
    let now = category_counts(&app, key, &entity).await;
    assert_eq!(now["billing-plans"], 2);
    assert_eq!(now["acct"], 1);
    assert_eq!(now["billing-plans-2"], 0);

    // Publish, unpublish, move, delete.
    patch_ok(&app, key, &c, json!({"isPublished": true})).await;
    assert_eq!(
        category_counts(&app, key, &entity).await["billing-plans"],
        3
    );
    patch_ok(&app, key, &a, json!({"isPublished": false})).await;
    assert_eq!(
        category_counts(&app, key, &entity).await["billing-plans"],
        2
    );
    patch_ok(&app, key, &b, json!({"categoryId": account["id"]})).await;
    let now = category_counts(&app, key, &entity).await;
    assert_eq!((now["billing-plans"], now["acct"]), (1, 2));
    app.delete(&format!("/kb/articles/{}", field(&b, "id")), key)
        .await
        .assert_status(200);
    assert_eq!(category_counts(&app, key, &entity).await["acct"], 1);

    // Rename and re-slug a category; a taken slug is 409.
    let path = format!("/kb/categories/{}", field(&account, "id"));
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

    // Deleting a category leaves its articles uncategorised.
    let billing_path = format!("/kb/categories/{}", field(&billing, "id"));
    let reader = app
        .key(acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    app.delete(&billing_path, &reader)
        .await
        .assert_error(403, "insufficient_scope");
    let deleted = app.delete(&billing_path, key).await;
    assert_eq!(deleted.assert_status(200)["deleted"], true);
    let orphan = app
        .get(&format!("/kb/articles/{}", field(&c, "id")), key)
        .await;
    assert_eq!(orphan.assert_status(200)["categoryId"], Value::Null);
    assert!(
        !category_counts(&app, key, &entity)
            .await
            .contains_key("billing-plans")
    );
    app.get(&billing_path, key)
        .await
        .assert_error(404, "not_found");

    // Tenancy: another company or mode sees none of it.
    let other = app.company().await;
    app.patch(&path, &other.key, json!({"name": "Mine"}))
        .await
        .assert_error(404, "not_found");
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let live_list = app
        .get(&format!("/kb/categories?entityId={entity}"), &live)
        .await;
    assert_eq!(live_list.assert_status(200)["data"], json!([]));
    app.get(
        &format!("/kb/categories?entityId={}", uuid::Uuid::now_v7()),
        key,
    )
    .await
    .assert_error(400, "validation_failed");
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

async fn patch_ok(app: &TestApp, key: &str, article: &Value, body: Value) -> Value {
    let path = format!("/kb/articles/{}", field(article, "id"));
    app.patch(&path, key, body).await.assert_status(200).clone()
}

/// Where a corpus article lives; only `Main` articles may ever be found.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Main,
    Draft,
    OtherEntity,
    LiveMode,
    OtherCompany,
}

struct Doc {
    key: &'static str,
    title: &'static str,
    content: &'static str,
    category: Option<&'static str>,
    place: Place,
}

const fn doc(
    key: &'static str,
    title: &'static str,
    content: &'static str,
    category: Option<&'static str>,
    place: Place,
) -> Doc {
    Doc {
        key,
        title,
        content,
        category,
        place,
    }
}

const DECOY_TEXT: &str = "Reset any password, download an invoice, export tickets to CSV, \
     ask for a refund, keep backup codes.";

/// The search corpus: 30 articles. Decoys hold every query word in their
/// title and content, so a leak would rank them first.
const CORPUS: &[Doc] = &[
    doc(
        "reset-password",
        "Reset your password",
        "If you forgot your password, open the sign-in page and choose **Forgot password**. \
         We email you a link that works for one hour.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "password-rules",
        "Password strength rules",
        "Choose at least twelve characters with one digit and one symbol. Longer phrases are \
         stronger than short ones, and a manager app can remember them for you.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "security-checklist",
        "Account security checklist",
        "Turn on two-step sign-in, review active sessions and change old passwords every year.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "download-invoice",
        "Download an invoice",
        "Open Billing, pick the invoice you need and press Download.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "invoice-address",
        "Invoice address changes",
        "Update the company name, postal address and tax number printed on future bills. \
         Changes apply from the next billing cycle onwards.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "payment-methods",
        "Payment methods",
        "We accept cards and bank transfers. Invoicing is available on annual plans.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "export-csv",
        "Export tickets to CSV",
        "Go to Reports and export your tickets as a CSV file.",
        Some("Reports"),
        Place::Main,
    ),
    doc(
        "export-reports",
        "Export reports",
        "You can export tickets or chats to CSV from the reports page.",
        Some("Reports"),
        Place::Main,
    ),
    doc(
        "data-portability",
        "Data portability",
        "Every ticket can be exported to CSV or JSON at any time.",
        None,
        Place::Main,
    ),
    doc(
        "export-chats",
        "Export chat transcripts",
        "Chat transcripts download as JSON.",
        Some("Reports"),
        Place::Main,
    ),
    doc(
        "refund-policy",
        "Refund policy",
        "Annual plans can be cancelled within thirty days of purchase.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "cancel-subscription",
        "Cancel a subscription",
        "Cancelling stops the renewal. A refund is issued for unused months; refund requests \
         take five days.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "billing-faq",
        "Billing questions",
        "Most answers about cards, currencies, taxes, receipts, discounts, coupons, seats, \
         trials and plan changes are collected here, and every refund goes back to the \
         original card within a week.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "two-factor",
        "Two-factor authentication",
        "Protect every agent account with a second step at sign-in. Open your profile, scan \
         the QR code with an authenticator app and type the six digits it shows. From then on \
         each sign-in asks for a fresh code. Keep your backup codes somewhere safe: each one \
         works once.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "getting-started",
        "Getting started",
        "Create your first entity, invite agents and install the chat widget.",
        None,
        Place::Main,
    ),
    doc(
        "invite-team",
        "Invite your team",
        "Agents receive an email invitation and join in one click.",
        None,
        Place::Main,
    ),
    doc(
        "widget-setup",
        "Chat widget setup",
        "Paste the snippet before the closing body tag of your site.",
        None,
        Place::Main,
    ),
    doc(
        "business-hours",
        "Business hours",
        "Outside business hours the widget offers a contact form instead of live chat.",
        None,
        Place::Main,
    ),
    doc(
        "webhooks",
        "Webhooks overview",
        "Subscribe a URL to ticket events and verify each signature.",
        None,
        Place::Main,
    ),
    doc(
        "api-keys",
        "API keys",
        "Keys carry scopes and a rate limit; test keys never touch live data.",
        None,
        Place::Main,
    ),
    doc(
        "email-notifications",
        "Email notifications",
        "Visitors get an email when an agent replies or a ticket is resolved.",
        None,
        Place::Main,
    ),
    doc(
        "shortcuts",
        "Keyboard shortcuts",
        "Press the question mark in the console to list every shortcut.",
        None,
        Place::Main,
    ),
    doc(
        "languages",
        "Language settings",
        "The widget speaks the browser language of the visitor when a translation exists.",
        None,
        Place::Main,
    ),
    doc(
        "merge-tickets",
        "Merge duplicate tickets",
        "Select two tickets and choose Merge; comments move to the surviving one.",
        None,
        Place::Main,
    ),
    doc(
        "draft-password",
        "Password reset for admins",
        DECOY_TEXT,
        Some("Account"),
        Place::Draft,
    ),
    doc(
        "draft-invoice",
        "Invoice export refund draft",
        DECOY_TEXT,
        None,
        Place::Draft,
    ),
    doc(
        "other-entity",
        "Password reset elsewhere",
        DECOY_TEXT,
        None,
        Place::OtherEntity,
    ),
    doc(
        "live-mode",
        "Password reset in live mode",
        DECOY_TEXT,
        None,
        Place::LiveMode,
    ),
    doc(
        "live-invoice",
        "Invoice export refund live",
        DECOY_TEXT,
        None,
        Place::LiveMode,
    ),
    doc(
        "other-company",
        "Password reset of another company",
        DECOY_TEXT,
        None,
        Place::OtherCompany,
    ),
];

/// Queries and their expected top results, in order, on both backends.
const QUERIES: &[(&str, &[&str])] = &[
    // Title matches above content-only ones; stemming (passwords).
    (
        "password",
        &["reset-password", "password-rules", "security-checklist"],
    ),
    (
        "Passwords",
        &["reset-password", "password-rules", "security-checklist"],
    ),
    // Search as you type: the last word is a prefix; stop words are ignored.
    ("how do I reset my passw", &["reset-password"]),
    (
        "invoi",
        &["download-invoice", "invoice-address", "payment-methods"],
    ),
    // Multi-word: every word must match.
    (
        "export tickets csv",
        &["export-csv", "export-reports", "data-portability"],
    ),
    (
        "refund",
        &["refund-policy", "cancel-subscription", "billing-faq"],
    ),
    ("backup codes", &["two-factor"]),
    ("zebra", &[]),
];

async fn search_ranks_the_corpus_the_same_on_both_backends(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let other_company = app.company().await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let second = supportdesk::entities::store::create(&app.state.db, acme.company.id, "Two", None)
        .await
        .expect("entity");
    let mut categories = HashMap::new();
    for name in ["Account", "Billing", "Reports"] {
        let c = app
            .post(
                "/kb/categories",
                key,
                json!({"name": name, "entityId": acme.entity.id}),
            )
            .await
            .assert_status(201)
            .clone();
        categories.insert(name, c["id"].clone());
    }
    let mut by_id: HashMap<String, &Doc> = HashMap::new();
    for d in CORPUS {
        let (k, entity): (&str, uuid::Uuid) = match d.place {
            Place::Main | Place::Draft => (key, acme.entity.id),
            Place::OtherEntity => (key, second.id),
            Place::LiveMode => (&live, acme.entity.id),
            Place::OtherCompany => (&other_company.key, other_company.entity.id),
        };
        let category = match (d.place, d.category) {
            (Place::Main | Place::Draft, Some(name)) => categories[name].clone(),
            _ => Value::Null,
        };
        let article = create(
            &app,
            k,
            json!({"title": d.title, "content": d.content, "entityId": entity,
                   "categoryId": category, "isPublished": d.place != Place::Draft}),
        )
        .await;
        by_id.insert(field(&article, "id").to_string(), d);
    }
    let keys_of =
        |hits: &Value| -> Vec<&'static str> { ids(hits).iter().map(|id| by_id[id].key).collect() };

    let entity = acme.entity.id;
    for (q, expected) in QUERIES {
        let path = format!("/kb/search?entityId={entity}&q={}", urlencode(q));
        let r = app.get(&path, key).await;
        let hits = r.assert_status(200);
        let got = keys_of(hits);
        let top: Vec<&str> = got.iter().take(3).copied().collect();
        assert_eq!(top, *expected, "query {q:?} gave {got:?} on {backend:?}");
        for hit in hits.as_array().expect("array") {
            let d = by_id[field(hit, "id")];
            assert!(d.place == Place::Main, "{q:?} found {}", d.key);
        }
    }

    // Without entityId: every entity of this company and mode, never drafts,
    // the other mode or another company.
    let r = app.get("/kb/search?q=password%20reset", key).await;
    let got: HashSet<&str> = keys_of(r.assert_status(200)).into_iter().collect();
    assert_eq!(got, HashSet::from(["reset-password", "other-entity"]));
    let r = app.get("/kb/search?q=password", &live).await;
    let got = keys_of(r.assert_status(200));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|k| k.starts_with("live-")), "{got:?}");
    let r = app.get("/kb/search?q=password", &other_company.key).await;
    assert_eq!(keys_of(r.assert_status(200)), vec!["other-company"]);

    // The documented shape: a bare array of {id, title, slug, excerpt, category}.
    let r = app
        .get(&format!("/kb/search?entityId={entity}&q=password"), key)
        .await;
    let hits = r.assert_status(200);
    let first = hits[0].as_object().expect("hit");
    let keys: HashSet<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        HashSet::from(["id", "title", "slug", "excerpt", "category"])
    );
    assert_eq!(hits[0]["title"], "Reset your password");
    assert_eq!(hits[0]["slug"], "reset-your-password");
    assert_eq!(
        hits[0]["category"],
        json!({"name": "Account", "slug": "account"})
    );
    let r = app
        .get(&format!("/kb/search?entityId={entity}&q=portability"), key)
        .await;
    let hits = r.assert_status(200);
    assert_eq!(hits[0]["category"], Value::Null);
    // A title-only match shows the stored excerpt.
    assert!(field(&hits[0], "excerpt").starts_with("Every ticket can be exported"));

    // A match deep in the content shows that passage, not the excerpt.
    let r = app
        .get(
            &format!("/kb/search?entityId={entity}&q=backup%20codes"),
            key,
        )
        .await;
    let hit = &r.assert_status(200)[0];
    let excerpt = field(hit, "excerpt");
    assert!(excerpt.contains("backup codes"), "{excerpt}");
    assert!(
        !excerpt.contains('\u{2}') && !excerpt.contains('\u{3}'),
        "{excerpt:?}"
    );
    let full = app
        .get(&format!("/kb/articles/{}", field(hit, "id")), key)
        .await;
    let stored = field(full.assert_status(200), "excerpt").to_string();
    assert!(!stored.contains("backup"), "{stored}");

    // Edits reach the index: a new title is found, the old one is not.
    let id = field(hit, "id").to_string();
    app.patch(
        &format!("/kb/articles/{id}"),
        key,
        json!({"title": "Second factor sign-in", "content": "Use recovery keys."}),
    )
    .await
    .assert_status(200);
    let r = app
        .get(
            &format!("/kb/search?entityId={entity}&q=backup%20codes"),
            key,
        )
        .await;
    assert_eq!(r.assert_status(200), &json!([]));
    let r = app
        .get(&format!("/kb/search?entityId={entity}&q=recovery"), key)
        .await;
    assert_eq!(ids(r.assert_status(200)), vec![id.clone()]);
    // Unpublished and deleted articles drop out.
    app.patch(
        &format!("/kb/articles/{id}"),
        key,
        json!({"isPublished": false}),
    )
    .await
    .assert_status(200);
    let r = app
        .get(&format!("/kb/search?entityId={entity}&q=recovery"), key)
        .await;
    assert_eq!(r.assert_status(200), &json!([]));
    let r = app
        .get(&format!("/kb/search?entityId={entity}&q=refund"), key)
        .await;
    let refund_first = ids(r.assert_status(200))[0].clone();
    app.delete(&format!("/kb/articles/{refund_first}"), key)
        .await
        .assert_status(200);
    let r = app
        .get(&format!("/kb/search?entityId={entity}&q=refund"), key)
        .await;
    assert_eq!(
        keys_of(r.assert_status(200)),
        vec!["cancel-subscription", "billing-faq"]
    );
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn search_validates_input_and_survives_any_text(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    for i in 0..60 {
        create(
            &app,
            key,
            json!({"title": format!("Widget guide {i}"), "entityId": acme.entity.id,
                   "isPublished": true}),
        )
        .await;
    }

    for bad in ["", "?q=", "?q=%20%20", "?entityId=x"] {
        let r = app.get(&format!("/kb/search{bad}"), key).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], "q", "{bad}");
    }
    for bad in ["limit=0", "limit=-3", "limit=ten", "entityId=nope"] {
        app.get(&format!("/kb/search?q=widget&{bad}"), key)
            .await
            .assert_error(400, "validation_failed");
    }
    app.get(
        &format!("/kb/search?q=widget&entityId={}", uuid::Uuid::now_v7()),
        key,
    )
    .await
    .assert_error(400, "validation_failed");

    // Default 10, clamped to 50.
    let r = app.get("/kb/search?q=widget", key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 10);
    let r = app.get("/kb/search?q=widget&limit=500", key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 50);
    let r = app.get("/kb/search?q=guid&limit=3", key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 3);

    // FTS syntax, quotes, operators, stop words only, odd Unicode: never a 500.
    let nasty = [
        "\"",
        "\"widget",
        "widget\"",
        "*",
        "widget*",
        "(",
        "widget)",
        "NEAR(widget guide)",
        "widget OR",
        "AND",
        "-widget",
        "widget:guide",
        "title:widget",
        "^widget",
        "'",
        "\\",
        "!!!",
        "the of and",
        "widget & | ! <->",
        ":*",
        "日本語 widget",
        "ﬁle",
        "%",
        "_",
        "{}[]",
        "x".repeat(300).as_str(),
        "widget   guide  ",
    ]
    .map(str::to_string);
    for q in nasty {
        let r = app
            .get(&format!("/kb/search?q={}", urlencode(&q)), key)
            .await;
        assert_eq!(r.status, 200, "query {q:?}: {}", r.text);
        assert!(r.body.is_array(), "query {q:?}: {}", r.text);
    }
    // NUL is refused in every text field, search included (Postgres
    // cannot hold it): a clear 400, never a 500.
    app.get("/kb/search?q=a%00b", key)
        .await
        .assert_error(400, "validation_failed");
    let r = app.get("/kb/search?q=%22widget%22", key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 10);
    let r = app
        .get(&format!("/kb/search?q={}", "w".repeat(501)), key)
        .await;
    r.assert_error(400, "validation_failed");

    // Search needs kb:read.
    let no_kb = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::KbRead),
        )
        .await;
    let r = app.get("/kb/search?q=widget", &no_kb).await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"], "Missing required permission: kb:read");
}

async fn votes_are_all_counted_under_concurrency(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let article = create(
        &app,
        key,
        json!({"title": "Vote on me", "entityId": acme.entity.id, "isPublished": true}),
    )
    .await;
    let path = format!("/kb/articles/{}/helpful", field(&article, "id"));

    // Readers vote (kb:read is enough); the documented shape.
    let reader = app
        .key(acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    let r = app.post(&path, &reader, json!({"helpful": true})).await;
    assert_eq!(r.assert_status(200), &json!({"recorded": true}));

    let votes = (0..40).map(|i| {
        let (app, path, reader) = (&app, &path, &reader);
        async move {
            app.post(path, reader, json!({"helpful": i % 4 != 0}))
                .await
                .assert_status(200)
                .clone()
        }
    });
    futures::future::join_all(votes).await;
    let got = app
        .get(&format!("/kb/articles/{}", field(&article, "id")), key)
        .await;
    let got = got.assert_status(200);
    assert_eq!(got["helpfulCount"], 31);
    assert_eq!(got["notHelpfulCount"], 10);

    for bad in [
        json!({}),
        json!({"helpful": "yes"}),
        json!({"helpful": null}),
    ] {
        app.post(&path, key, bad)
            .await
            .assert_error(400, "validation_failed");
    }
    app.post(
        &format!("/kb/articles/{}/helpful", uuid::Uuid::now_v7()),
        key,
        json!({"helpful": true}),
    )
    .await
    .assert_error(404, "not_found");
    // A draft is not the reader's to vote on.
    let draft = create(
        &app,
        key,
        json!({"title": "Draft", "entityId": acme.entity.id}),
    )
    .await;
    app.post(
        &format!("/kb/articles/{}/helpful", field(&draft, "id")),
        &reader,
        json!({"helpful": true}),
    )
    .await
    .assert_error(404, "not_found");
}

async fn search_on_50000_articles_is_one_indexed_query(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme: TestCompany = app.company().await;
    let tenant = Tenant {
        company_id: acme.company.id,
        mode: Mode::Test,
    };
    bulk_insert(&app, &acme, 50_000).await;

    let plan = supportdesk::kb::store::explain_search(
        &app.state.db,
        &tenant,
        Some(acme.entity.id),
        "zebra cross",
        10,
    )
    .await
    .expect("explain");
    let text = plan.join("\n");
    match backend {
        Backend::Postgres => {
            assert!(
                text.contains("Bitmap Index Scan on kb_articles_search"),
                "plan:\n{text}"
            );
        }
        Backend::Sqlite => {
            assert!(
                plan[0].starts_with("SCAN kb_articles_fts VIRTUAL TABLE INDEX"),
                "plan:\n{text}"
            );
            assert!(
                text.contains("SEARCH a USING INTEGER PRIMARY KEY"),
                "plan:\n{text}"
            );
            assert!(!text.contains("TEMP B-TREE"), "plan:\n{text}");
        }
    }

    // And it answers: the 50 zebra articles, 10 at a time.
    let r = app
        .get(
            &format!("/kb/search?q=zebra%20cross&entityId={}", acme.entity.id),
            &acme.key,
        )
        .await;
    let hits = r.assert_status(200).as_array().expect("array").clone();
    assert_eq!(hits.len(), 10);
    for hit in &hits {
        assert!(field(hit, "excerpt").contains("zebra crossing"), "{hit}");
    }
}

/// Inserts `n` published articles in one statement; one in 1000 mentions a
/// zebra crossing.
async fn bulk_insert(app: &TestApp, acme: &TestCompany, n: i64) {
    use supportdesk::db::Db;
    let now = supportdesk::time::Timestamp::now();
    let body = "CASE WHEN i % 1000 = 0 THEN 'How to use the zebra crossing near office ' || i \
                ELSE 'Ordinary help text about settings and preferences ' || i END";
    match &app.state.db {
        Db::Postgres(pool) => {
            let sql = format!(
                "INSERT INTO kb_articles (id, company_id, mode, entity_id, title, slug, content, \
                 content_text, excerpt, is_published, created_at, updated_at) \
                 SELECT md5('kb' || i)::uuid, $1, 'test', $2, 'Bulk article ' || i, \
                   'bulk-' || i, {body}, {body}, '', TRUE, $3, $3 \
                 FROM generate_series(1, $4::bigint) AS i"
            );
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(acme.company.id)
                .bind(acme.entity.id)
                .bind(now)
                .bind(n)
                .execute(pool)
                .await
                .expect("bulk insert");
            sqlx::query("ANALYZE kb_articles")
                .execute(pool)
                .await
                .expect("analyze");
        }
        Db::Sqlite(pool) => {
            let sql = format!(
                "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $4) \
                 INSERT INTO kb_articles (id, company_id, mode, entity_id, title, slug, content, \
                 content_text, excerpt, is_published, created_at, updated_at) \
                 SELECT randomblob(16), $1, 'test', $2, 'Bulk article ' || i, 'bulk-' || i, \
                   {body}, {body}, '', 1, $3, $3 FROM s"
            );
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(acme.company.id)
                .bind(acme.entity.id)
                .bind(now)
                .bind(n)
                .execute(pool)
                .await
                .expect("bulk insert");
            sqlx::query("ANALYZE").execute(pool).await.expect("analyze");
        }
    }
}
