//! A follower that applies every entry ends with exactly the store's
//! records, whatever kind of write made them.

use serde_json::json;

use super::{Follower, id_of, new_article, new_session, new_ticket, store_records};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_follower_of_every_kind_of_write_ends_with_the_stores_records,
    deleting_a_ticket_deletes_its_comments_in_the_feed,
    a_change_appears_after_the_cursor_of_an_earlier_read,
);

async fn a_follower_of_every_kind_of_write_ends_with_the_stores_records(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = &acme.key;
    let kept = id_of(&new_ticket(&app, &acme, "Kept").await);
    let gone = id_of(&new_ticket(&app, &acme, "Gone").await);
    for ticket in [&kept, &gone] {
        app.post(
            &format!("/tickets/{ticket}/comments"),
            key,
            json!({"body": "Hi"}),
        )
        .await
        .assert_status(201);
    }
    app.patch(
        &format!("/tickets/{kept}"),
        key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);
    app.post(
        &format!("/tickets/{kept}/tags"),
        key,
        json!({"add": ["vip"]}),
    )
    .await
    .assert_status(200);
    app.delete(&format!("/tickets/{gone}"), key)
        .await
        .assert_status(200);
    let session = id_of(&new_session(&app, &acme).await);
    app.post(
        &format!("/chat/sessions/{session}/messages"),
        key,
        json!({"body": "Hello", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    app.patch(
        &format!("/chat/sessions/{session}"),
        key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    let category = app
        .post(
            "/kb/categories",
            key,
            json!({"entityId": acme.entity.id, "name": "Billing"}),
        )
        .await
        .assert_status(201)
        .clone();
    let article = app
        .post(
            "/kb/articles",
            key,
            json!({"entityId": acme.entity.id, "categoryId": category["id"], "title": "Refunds",
                   "content": "How refunds work", "isPublished": true}),
        )
        .await
        .assert_status(201)
        .clone();
    let article = id_of(&article);
    app.patch(
        &format!("/kb/articles/{article}"),
        key,
        json!({"title": "Refunds, fast"}),
    )
    .await
    .assert_status(200);
    app.post(
        &format!("/kb/articles/{article}/helpful"),
        key,
        json!({"helpful": true}),
    )
    .await
    .assert_status(200);
    app.delete(&format!("/kb/categories/{}", id_of(&category)), key)
        .await
        .assert_status(200);
    let dropped = id_of(&new_article(&app, &acme, "Dropped").await);
    app.delete(&format!("/kb/articles/{dropped}"), key)
        .await
        .assert_status(200);

    let mut follower = Follower::default();
    follower.catch_up(&app, key).await;

    assert_eq!(follower.mirror, store_records(&app, &acme).await);
}

async fn deleting_a_ticket_deletes_its_comments_in_the_feed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ticket = id_of(&new_ticket(&app, &acme, "Gone").await);
    let mut comments = Vec::new();
    for body in ["one", "two"] {
        let comment = app
            .post(
                &format!("/tickets/{ticket}/comments"),
                &acme.key,
                json!({"body": body}),
            )
            .await
            .assert_status(201)
            .clone();
        comments.push(id_of(&comment));
    }
    let mut follower = Follower::default();
    follower.catch_up(&app, &acme.key).await;
    let before = follower.seen.len();

    app.delete(&format!("/tickets/{ticket}"), &acme.key)
        .await
        .assert_status(200);
    follower.catch_up(&app, &acme.key).await;

    let deletes: Vec<(String, String, String)> = follower.seen[before..]
        .iter()
        .map(|entry| {
            (
                entry["type"].as_str().expect("type").to_string(),
                id_of(entry),
                entry["op"].as_str().expect("op").to_string(),
            )
        })
        .collect();
    let expected = vec![
        (
            "comment".to_string(),
            comments[0].clone(),
            "delete".to_string(),
        ),
        (
            "comment".to_string(),
            comments[1].clone(),
            "delete".to_string(),
        ),
        ("ticket".to_string(), ticket, "delete".to_string()),
    ];
    assert_eq!(deletes, expected);
}

async fn a_change_appears_after_the_cursor_of_an_earlier_read(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    new_ticket(&app, &acme, "First").await;
    let mut follower = Follower::default();
    follower.catch_up(&app, &acme.key).await;
    let before = follower.seen.len();

    let second = id_of(&new_ticket(&app, &acme, "Second").await);
    follower.catch_up(&app, &acme.key).await;

    let later: Vec<String> = follower.seen[before..].iter().map(id_of).collect();
    assert_eq!(later, vec![second]);
}
