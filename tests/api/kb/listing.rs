//! GET /kb/articles: paging, limits, filters, drafts, modes.

use std::collections::HashSet;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::{create, field, ids, new_category, read_only_key_scopes};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    the_first_page_is_newest_first_in_the_documented_shape,
    a_later_page_continues_the_order,
    the_limit_is_clamped_to_100,
    list_parameters_are_validated,
    the_list_filters_by_category,
    editors_list_drafts,
    listing_drafts_needs_kb_write,
    the_other_mode_lists_only_its_own,
);

/// The list scenario: in the main entity 25 published "Guide i" (every
/// fifth in a category) and one draft; one published article in a second
/// entity; one in the live mode.
struct Listed {
    app: TestApp,
    acme: TestCompany,
    entity: String,
    category: Value,
    published: Vec<String>,
    draft: Value,
    live: String,
}

async fn listed(backend: Backend) -> Listed {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let entity = acme.entity.id.to_string();
    let second = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Two",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity");
    let category = new_category(&app, key, json!({"name": "Guides", "entityId": entity})).await;
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
    Listed {
        app,
        acme,
        entity,
        category,
        published,
        draft,
        live,
    }
}

async fn the_first_page_is_newest_first_in_the_documented_shape(backend: Backend) {
    let s = listed(backend).await;
    // Default limit 20, published only.
    let page = s
        .app
        .get(&format!("/kb/articles?entityId={}", s.entity), &s.acme.key)
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
    assert_eq!(data[0]["id"], s.published[24].as_str());
    assert_eq!(data[0]["excerpt"], "Text 24");
}

async fn a_later_page_continues_the_order(backend: Backend) {
    let s = listed(backend).await;
    let rest = s
        .app
        .get(
            &format!("/kb/articles?entityId={}&limit=10&offset=20", s.entity),
            &s.acme.key,
        )
        .await;
    let rest = rest.assert_status(200);
    assert_eq!(
        ids(&rest["data"]),
        s.published[..5].iter().rev().cloned().collect::<Vec<_>>()
    );
}

async fn the_limit_is_clamped_to_100(backend: Backend) {
    let s = listed(backend).await;
    let clamped = s.app.get("/kb/articles?limit=1000", &s.acme.key).await;
    let clamped = clamped.assert_status(200);
    assert_eq!(clamped["limit"], 100);
    assert_eq!(clamped["total"], 26, "both entities, published, this mode");
}

async fn list_parameters_are_validated(backend: Backend) {
    let s = listed(backend).await;
    let (app, key) = (&s.app, s.acme.key.as_str());
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
}

async fn the_list_filters_by_category(backend: Backend) {
    let s = listed(backend).await;
    let by_category = s
        .app
        .get(
            &format!("/kb/articles?categoryId={}", field(&s.category, "id")),
            &s.acme.key,
        )
        .await;
    assert_eq!(by_category.assert_status(200)["total"], 5);
}

async fn editors_list_drafts(backend: Backend) {
    let s = listed(backend).await;
    let (app, key) = (&s.app, s.acme.key.as_str());
    let drafts = app.get("/kb/articles?status=draft", key).await;
    let drafts = drafts.assert_status(200);
    assert_eq!(
        ids(&drafts["data"]),
        vec![field(&s.draft, "id").to_string()]
    );
    let all = app
        .get(
            &format!("/kb/articles?status=all&entityId={}", s.entity),
            key,
        )
        .await;
    assert_eq!(all.assert_status(200)["total"], 26);
}

async fn listing_drafts_needs_kb_write(backend: Backend) {
    let s = listed(backend).await;
    let reader = s
        .app
        .key(s.acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    for status in ["all", "draft"] {
        let r = s
            .app
            .get(&format!("/kb/articles?status={status}"), &reader)
            .await;
        r.assert_error(403, "insufficient_scope");
        assert_eq!(r.body["error"], "Missing required permission: kb:write");
    }
    let as_reader = s.app.get("/kb/articles?status=published", &reader).await;
    assert_eq!(as_reader.assert_status(200)["total"], 26);
}

async fn the_other_mode_lists_only_its_own(backend: Backend) {
    let s = listed(backend).await;
    let live_list = s.app.get("/kb/articles", &s.live).await;
    assert_eq!(live_list.assert_status(200)["total"], 1);
}
