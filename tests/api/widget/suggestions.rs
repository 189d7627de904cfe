//! Suggestions as a visitor types a question before a chat: ranked with
//! the company's synonyms, published articles of the key's entity only;
//! "this answered my question" is recorded as self-served, "I still need
//! help" opens a chat whose agent sees what was suggested.

use serde_json::{Value, json};

use super::{start_chat, widget_get, widget_post};
use crate::backend_tests;
use crate::kb::{article, published_with_synonyms, titles};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    widget_suggestions_rank_with_the_companys_synonyms,
    widget_suggestions_leave_out_drafts,
    widget_suggestions_leave_out_other_companies_articles,
    this_answered_my_question_is_recorded_as_self_served,
    an_answer_that_is_not_a_published_article_of_the_entity_is_400,
    still_needing_help_shows_the_suggestions_to_the_agent,
    bad_suggestion_input_is_400_naming_each_field,
);

async fn suggest(app: &TestApp, acme: &TestCompany, q: &str) -> Vec<String> {
    let q: String = q.replace(' ', "%20").replace('?', "%3F");
    let path = format!(
        "/widget/v1/kb/suggest?widgetKey={}&q={q}",
        acme.entity.widget_key_test
    );
    titles(widget_get(app, &path).await.assert_status(200))
}

async fn widget_suggestions_rank_with_the_companys_synonyms(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let articles = [
        ("Replacement lids", "We sell a spare lid for most teapots."),
        ("Tea covers", "Knitted cosies keep a pot warm."),
    ];
    published_with_synonyms(&app, &acme, &articles, json!([["lid", "cover"]])).await;

    let hits = suggest(&app, &acme, "I need a cover for my teapot?").await;
    assert_eq!(
        hits.first().map(String::as_str),
        Some("Replacement lids"),
        "{hits:?}"
    );
}

async fn widget_suggestions_leave_out_drafts(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    tracking_article(&app, &acme).await;
    article(&app, &acme, TRACKING_DRAFT, "Draft about tracking.", false).await;

    assert_eq!(tracking_hits(&app, &acme).await, vec![TRACKING]);
}

async fn widget_suggestions_leave_out_other_companies_articles(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let rival = app.company().await;
    tracking_article(&app, &acme).await;
    article(
        &app,
        &rival,
        "Tracking a parcel",
        "Rival's tracking help.",
        true,
    )
    .await;

    assert_eq!(tracking_hits(&app, &acme).await, vec![TRACKING]);
}

/// The published article a question about a tracking link finds.
const TRACKING: &str = "Tracking your order";

/// A draft that the same question would find if it were published.
const TRACKING_DRAFT: &str = "Tracking in the app";

async fn tracking_article(app: &TestApp, acme: &TestCompany) {
    article(app, acme, TRACKING, "A tracking link is emailed.", true).await;
}

/// What the widget suggests for a question about a tracking link.
async fn tracking_hits(app: &TestApp, acme: &TestCompany) -> Vec<String> {
    suggest(app, acme, "where is my tracking link?").await
}

async fn this_answered_my_question_is_recorded_as_self_served(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = article(
        &app,
        &acme,
        "Gift cards",
        "Redeem a gift card at checkout.",
        true,
    )
    .await;

    let recorded = widget_post(
        &app,
        "/widget/v1/kb/answered",
        json!({"widgetKey": acme.entity.widget_key_test, "question": "How do I use a gift card?",
               "articleId": id}),
    )
    .await
    .assert_status(201)
    .clone();
    assert_eq!(
        (recorded["outcome"].clone(), recorded["answeredBy"].clone()),
        (json!("self_served"), json!(id))
    );
}

async fn an_answer_that_is_not_a_published_article_of_the_entity_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let rival = app.company().await;
    let theirs = article(&app, &rival, "Gift cards", "Rival's gift cards.", true).await;

    let refused = widget_post(
        &app,
        "/widget/v1/kb/answered",
        json!({"widgetKey": acme.entity.widget_key_test, "question": "gift card",
               "articleId": theirs}),
    )
    .await;
    refused.assert_error(400, "validation_failed");
    assert_eq!(refused.body["details"][0]["field"], "articleId");
}

async fn still_needing_help_shows_the_suggestions_to_the_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = article(
        &app,
        &acme,
        "Refunds",
        "A refund reaches your card in five days.",
        true,
    )
    .await;

    let chat = start_chat(
        &app,
        &acme.entity.widget_key_test,
        json!({"visitorName": "Dana", "question": "When does my refund arrive?"}),
    )
    .await;
    let path = format!(
        "/kb/suggestions?chatSessionId={}",
        chat["id"].as_str().expect("id")
    );
    let kept: Value = app.get(&path, &acme.key).await.assert_status(200).clone();
    let record = &kept["data"][0];
    assert_eq!(
        (
            record["outcome"].clone(),
            record["question"].clone(),
            record["articles"][0]["id"].clone()
        ),
        (
            json!("handed_off"),
            json!("When does my refund arrive?"),
            json!(id)
        )
    );
}

async fn bad_suggestion_input_is_400_naming_each_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let path = format!(
        "/widget/v1/kb/suggest?widgetKey={}&limit=0",
        acme.entity.widget_key_test
    );
    let bad = widget_get(&app, &path).await;
    bad.assert_error(400, "validation_failed");
    let fields: Vec<&str> = bad.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["field"].as_str().expect("field"))
        .collect();
    assert_eq!(fields, vec!["q", "limit"]);
}
