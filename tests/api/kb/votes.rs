//! POST /kb/articles/{id}/helpful.

use serde_json::{Value, json};
use supportdesk::auth::Mode;

use super::{create, field, read_only_key_scopes};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_reader_votes_and_gets_the_documented_answer,
    concurrent_votes_are_all_counted,
    vote_bodies_are_validated,
    a_vote_on_an_unknown_article_is_404,
    a_draft_is_not_the_readers_to_vote_on,
);

/// A published article, its vote path, and a kb:read key.
struct Ballot {
    app: TestApp,
    acme: TestCompany,
    article: Value,
    path: String,
    reader: String,
}

async fn ballot(backend: Backend) -> Ballot {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let article = create(
        &app,
        &acme.key,
        json!({"title": "Vote on me", "entityId": acme.entity.id, "isPublished": true}),
    )
    .await;
    let path = format!("/kb/articles/{}/helpful", field(&article, "id"));
    let reader = app
        .key(acme.company.id, Mode::Test, read_only_key_scopes())
        .await;
    Ballot {
        app,
        acme,
        article,
        path,
        reader,
    }
}

async fn a_reader_votes_and_gets_the_documented_answer(backend: Backend) {
    let s = ballot(backend).await;
    // kb:read is enough.
    let r = s
        .app
        .post(&s.path, &s.reader, json!({"helpful": true}))
        .await;
    assert_eq!(r.assert_status(200), &json!({"recorded": true}));
}

async fn concurrent_votes_are_all_counted(backend: Backend) {
    let s = ballot(backend).await;
    s.app
        .post(&s.path, &s.reader, json!({"helpful": true}))
        .await
        .assert_status(200);
    let votes = (0..40).map(|i| {
        let (app, path, reader) = (&s.app, &s.path, &s.reader);
        async move {
            app.post(path, reader, json!({"helpful": i % 4 != 0}))
                .await
                .assert_status(200)
                .clone()
        }
    });
    futures::future::join_all(votes).await;
    let got = s
        .app
        .get(
            &format!("/kb/articles/{}", field(&s.article, "id")),
            &s.acme.key,
        )
        .await;
    let got = got.assert_status(200);
    assert_eq!(got["helpfulCount"], 31);
    assert_eq!(got["notHelpfulCount"], 10);
}

async fn vote_bodies_are_validated(backend: Backend) {
    let s = ballot(backend).await;
    for bad in [
        json!({}),
        json!({"helpful": "yes"}),
        json!({"helpful": null}),
    ] {
        s.app
            .post(&s.path, &s.acme.key, bad)
            .await
            .assert_error(400, "validation_failed");
    }
}

async fn a_vote_on_an_unknown_article_is_404(backend: Backend) {
    let s = ballot(backend).await;
    s.app
        .post(
            &format!("/kb/articles/{}/helpful", uuid::Uuid::now_v7()),
            &s.acme.key,
            json!({"helpful": true}),
        )
        .await
        .assert_error(404, "not_found");
}

async fn a_draft_is_not_the_readers_to_vote_on(backend: Backend) {
    let s = ballot(backend).await;
    let draft = create(
        &s.app,
        &s.acme.key,
        json!({"title": "Draft", "entityId": s.acme.entity.id}),
    )
    .await;
    s.app
        .post(
            &format!("/kb/articles/{}/helpful", field(&draft, "id")),
            &s.reader,
            json!({"helpful": true}),
        )
        .await
        .assert_error(404, "not_found");
}
