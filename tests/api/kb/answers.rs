//! Retrieval for questions (`GET /kb/suggest`): stop words, a company's
//! synonym groups (`/kb/synonyms`), published articles of the tenant only;
//! and the suggestions a new ticket keeps for its agent (by a job the
//! create queues).

use serde_json::{Value, json};

use super::{
    article, published_with_synonyms, read_only_key_scopes, set_synonyms, titles, urlencode,
};
use crate::backend_tests;
use crate::idempotency::count;
use crate::support::{Backend, TestApp, TestCompany, eventually};

backend_tests!(
    suggestions_match_a_companys_synonyms,
    suggestions_never_include_unpublished_articles,
    suggestions_never_include_another_companys_articles,
    synonyms_are_stored_trimmed_and_lower_cased,
    setting_synonyms_needs_kb_write,
    a_bad_synonym_group_is_400_naming_it_and_changes_nothing,
    a_suggestion_without_a_question_is_400,
    a_new_ticket_keeps_its_suggestions_for_the_agent,
    a_new_ticket_answers_before_its_suggestions_are_kept,
    a_ticket_whose_entity_publishes_no_article_queues_no_suggestions_job,
);

async fn suggest(app: &TestApp, key: &str, q: &str) -> Vec<String> {
    let hits = app
        .get(&format!("/kb/suggest?q={}", urlencode(q)), key)
        .await
        .assert_status(200)
        .clone();
    titles(&hits)
}

async fn suggestions_match_a_companys_synonyms(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let articles = [
        ("Refunds", "A refund reaches your card in five days."),
        ("Money off", "Codes take money off an order."),
        ("Back orders", "Items back in stock ship at once."),
    ];
    published_with_synonyms(&app, &acme, &articles, json!([["refund", "money back"]])).await;

    let hits = suggest(&app, &acme.key, "Can I please get my money back?").await;
    assert_eq!(
        hits.first().map(String::as_str),
        Some("Refunds"),
        "{hits:?}"
    );
}

async fn suggestions_never_include_unpublished_articles(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    article(
        &app,
        &acme,
        "Descaling a kettle",
        "Limescale goes with vinegar.",
        true,
    )
    .await;
    article(
        &app,
        &acme,
        "Descaling a teapot",
        "Limescale goes with citric acid.",
        false,
    )
    .await;

    let hits = suggest(&app, &acme.key, "how do I descale my teapot?").await;
    assert_eq!(hits, vec!["Descaling a kettle"]);
}

async fn suggestions_never_include_another_companys_articles(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let rival = app.company().await;
    article(
        &app,
        &acme,
        "Gift cards",
        "Redeem a gift card at checkout.",
        true,
    )
    .await;
    article(
        &app,
        &rival,
        "Gift card balance",
        "Check a gift card's balance.",
        true,
    )
    .await;

    let hits = suggest(&app, &acme.key, "what is my gift card balance?").await;
    assert_eq!(hits, vec!["Gift cards"]);
}

async fn synonyms_are_stored_trimmed_and_lower_cased(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    set_synonyms(&app, &acme.key, json!([[" Lid ", "COVER", "Tea Cap"]])).await;

    let stored = app
        .get("/kb/synonyms", &acme.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(stored, json!({"groups": [["lid", "cover", "tea cap"]]}));
}

async fn setting_synonyms_needs_kb_write(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let reader = app
        .key(
            acme.company.id,
            supportdesk::auth::Mode::Test,
            read_only_key_scopes(),
        )
        .await;

    let refused = app
        .put(
            "/kb/synonyms",
            &reader,
            json!({"groups": [["lid", "cover"]]}),
        )
        .await;
    refused.assert_error(403, "insufficient_scope");
    assert_eq!(
        refused.body["error"],
        "Missing required permission: kb:write"
    );
}

async fn a_bad_synonym_group_is_400_naming_it_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    set_synonyms(&app, &acme.key, json!([["lid", "cover"]])).await;

    let bad = app
        .put(
            "/kb/synonyms",
            &acme.key,
            json!({"groups": [["refund", "money back"], ["lid"]]}),
        )
        .await;
    bad.assert_error(400, "validation_failed");
    assert_eq!(bad.body["details"][0]["field"], "groups[1]");
    let stored = app
        .get("/kb/synonyms", &acme.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(stored, json!({"groups": [["lid", "cover"]]}));
}

async fn a_suggestion_without_a_question_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let missing = app.get("/kb/suggest?limit=3", &acme.key).await;
    missing.assert_error(400, "validation_failed");
    assert_eq!(missing.body["details"][0]["field"], "q");
}

async fn a_new_ticket_keeps_its_suggestions_for_the_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = descaling_article(&app, &acme).await;
    let path = suggestions_path(&teapot_ticket(&app, &acme).await);

    let record = eventually("the ticket's suggestions kept", async || {
        let kept = app.get(&path, &acme.key).await.assert_status(200).clone();
        kept["data"].get(0).cloned()
    })
    .await;
    assert_eq!(record["outcome"], "shown");
    assert_eq!(record["articles"][0]["id"], id.as_str());
}

async fn a_new_ticket_answers_before_its_suggestions_are_kept(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let id = descaling_article(&app, &acme).await;
    let path = suggestions_path(&teapot_ticket(&app, &acme).await);

    let before = app.get(&path, &acme.key).await.assert_status(200).clone();
    assert_eq!(before["data"], json!([]));
    supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
    let after = app.get(&path, &acme.key).await.assert_status(200).clone();
    assert_eq!(after["data"][0]["articles"][0]["id"], id.as_str());
}

async fn a_ticket_whose_entity_publishes_no_article_queues_no_suggestions_job(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let draft = "Limescale goes with vinegar.";
    article(&app, &acme, "Descaling your teapot", draft, false).await;

    teapot_ticket(&app, &acme).await;

    let kind = format!("AND kind = '{}'", supportdesk::kb::jobs::JOB_KIND);
    assert_eq!(count(&app, "outbox_jobs", acme.company.id, &kind).await, 0);
}

async fn descaling_article(app: &TestApp, acme: &TestCompany) -> String {
    article(
        app,
        acme,
        "Descaling your teapot",
        "Limescale goes with vinegar.",
        true,
    )
    .await
}

/// A ticket whose subject and description match the descaling article.
async fn teapot_ticket(app: &TestApp, acme: &TestCompany) -> Value {
    app.post(
        "/tickets",
        &acme.key,
        json!({"subject": "White crust in my teapot", "entityId": acme.entity.id,
               "description": "How do I descale it?"}),
    )
    .await
    .assert_status(201)
    .clone()
}

fn suggestions_path(ticket: &Value) -> String {
    format!(
        "/kb/suggestions?ticketId={}",
        ticket["id"].as_str().expect("id")
    )
}
