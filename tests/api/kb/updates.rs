//! PATCH and DELETE /kb/articles/{id}.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{create, field, new_category};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    an_update_rederives_the_excerpt_and_keeps_the_slug,
    a_given_excerpt_sticks_through_content_changes_until_cleared,
    the_slug_can_be_changed_explicitly,
    a_taken_slug_is_a_conflict_on_update,
    invalid_updates_are_refused,
    an_article_is_uncategorised_and_unpublished,
    deleting_needs_kb_delete,
    a_deleted_article_is_gone,
);

/// A draft "Old title" with `Old **text**.`, a category "Guides", and
/// another article whose slug is `taken`.
struct Editing {
    app: TestApp,
    acme: TestCompany,
    category: Value,
    article: Value,
    path: String,
}

async fn editing(backend: Backend) -> Editing {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let entity = acme.entity.id.to_string();
    let category = new_category(&app, key, json!({"name": "Guides", "entityId": entity})).await;
    let article = create(
        &app,
        key,
        json!({"title": "Old title", "entityId": entity, "content": "Old **text**."}),
    )
    .await;
    let path = format!("/kb/articles/{}", field(&article, "id"));
    create(&app, key, json!({"title": "Taken", "entityId": entity})).await;
    Editing {
        app,
        acme,
        category,
        article,
        path,
    }
}

async fn an_update_rederives_the_excerpt_and_keeps_the_slug(backend: Backend) {
    let s = editing(backend).await;
    let updated = s
        .app
        .patch(
            &s.path,
            &s.acme.key,
            json!({"title": "New title", "content": "New _text_ here.", "isPublished": true,
                   "categoryId": s.category["id"]}),
        )
        .await;
    let updated = updated.assert_status(200);
    assert_eq!(updated["title"], "New title");
    assert_eq!(updated["slug"], "old-title");
    assert_eq!(updated["excerpt"], "New text here.");
    assert_eq!(updated["content"], "New _text_ here.");
    assert_eq!(updated["isPublished"], true);
    assert_eq!(updated["categoryId"], s.category["id"]);
}

async fn a_given_excerpt_sticks_through_content_changes_until_cleared(backend: Backend) {
    let s = editing(backend).await;
    let (app, key, path) = (&s.app, s.acme.key.as_str(), s.path.as_str());
    let custom = app.patch(path, key, json!({"excerpt": "Custom."})).await;
    assert_eq!(custom.assert_status(200)["excerpt"], "Custom.");
    let kept = app
        .patch(path, key, json!({"content": "Third text."}))
        .await;
    assert_eq!(kept.assert_status(200)["excerpt"], "Custom.");
    let cleared = app.patch(path, key, json!({"excerpt": null})).await;
    assert_eq!(cleared.assert_status(200)["excerpt"], "Third text.");
}

async fn the_slug_can_be_changed_explicitly(backend: Backend) {
    let s = editing(backend).await;
    let renamed = s
        .app
        .patch(&s.path, &s.acme.key, json!({"slug": "new-title"}))
        .await;
    assert_eq!(renamed.assert_status(200)["slug"], "new-title");
}

async fn a_taken_slug_is_a_conflict_on_update(backend: Backend) {
    let s = editing(backend).await;
    s.app
        .patch(&s.path, &s.acme.key, json!({"slug": "taken"}))
        .await
        .assert_error(409, "conflict");
}

async fn invalid_updates_are_refused(backend: Backend) {
    let s = editing(backend).await;
    for body in [
        json!({"slug": "Bad Slug"}),
        json!({}),
        json!({"title": ""}),
        json!({"categoryId": uuid::Uuid::now_v7()}),
    ] {
        s.app
            .patch(&s.path, &s.acme.key, body)
            .await
            .assert_error(400, "validation_failed");
    }
}

async fn an_article_is_uncategorised_and_unpublished(backend: Backend) {
    let s = editing(backend).await;
    let (app, key, path) = (&s.app, s.acme.key.as_str(), s.path.as_str());
    app.patch(
        path,
        key,
        json!({"isPublished": true, "categoryId": s.category["id"]}),
    )
    .await
    .assert_status(200);
    let plain = app
        .patch(path, key, json!({"categoryId": null, "isPublished": false}))
        .await;
    let plain = plain.assert_status(200);
    assert_eq!(plain["categoryId"], Value::Null);
    assert_eq!(plain["isPublished"], false);
}

async fn deleting_needs_kb_delete(backend: Backend) {
    let s = editing(backend).await;
    let writer = s
        .app
        .key(
            s.acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::KbRead, Scope::KbWrite]),
        )
        .await;
    let denied = s.app.delete(&s.path, &writer).await;
    denied.assert_error(403, "insufficient_scope");
    assert_eq!(
        denied.body["error"],
        "Missing required permission: kb:delete"
    );
}

async fn a_deleted_article_is_gone(backend: Backend) {
    let s = editing(backend).await;
    let (app, key, path) = (&s.app, s.acme.key.as_str(), s.path.as_str());
    let deleted = app.delete(path, key).await;
    let deleted = deleted.assert_status(200);
    assert_eq!(deleted["deleted"], true);
    assert_eq!(deleted["id"], s.article["id"]);
    app.get(path, key).await.assert_error(404, "not_found");
    app.delete(path, key).await.assert_error(404, "not_found");
}
