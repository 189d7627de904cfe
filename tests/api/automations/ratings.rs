//! Triggers on a changed rating (`csat.updated`): run like those on a
//! first rating, on each ticket opened from the rated chat, with the
//! score it replaced readable by `changed_from`.

use serde_json::json;

use super::events::ticket_from;
use super::{mark, quiet, tags, trigger, triggers};
use crate::backend_tests;
use crate::csat::{open_chat, rate};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_changed_rating_runs_the_updated_triggers,
    a_first_rating_runs_no_updated_trigger,
    a_changed_from_condition_reads_the_replaced_score,
);

/// A widget chat with a ticket opened from it, closed and rated `score`
/// by its visitor: the ticket's id and the visitor's token.
async fn rated(app: &TestApp, acme: &TestCompany, score: i64) -> (String, String) {
    let (chat, token) = open_chat(app, acme).await;
    let id = ticket_from(app, acme, &chat).await;
    let path = format!("/chat/sessions/{chat}");
    app.patch(&path, &acme.key, json!({"status": "CLOSED"}))
        .await
        .assert_status(200);
    rate(app, Some(&token), json!({"score": score}))
        .await
        .assert_status(201);
    (id, token)
}

async fn a_changed_rating_runs_the_updated_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["csat.updated"]), json!([]), mark()).await;
    let (id, token) = rated(&app, &acme, 4).await;
    rate(&app, Some(&token), json!({"score": 1}))
        .await
        .assert_status(200);
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_first_rating_runs_no_updated_trigger(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["csat.updated"]), json!([]), mark()).await;
    let (id, _) = rated(&app, &acme, 4).await;
    assert_eq!(triggers(&app).await, 0);
    assert_eq!(tags(&app, &acme, &id).await, json!([]));
}

async fn a_changed_from_condition_reads_the_replaced_score(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let was_happy = json!([{"field": "csatScore", "operator": "changed_from", "value": 5}]);
    trigger(&app, &acme, json!(["csat.updated"]), was_happy, mark()).await;
    let mut tickets = Vec::new();
    for first in [5, 4] {
        let (id, token) = rated(&app, &acme, first).await;
        rate(&app, Some(&token), json!({"score": 2}))
            .await
            .assert_status(200);
        tickets.push(id);
    }
    assert_eq!(triggers(&app).await, 1);
    let mut tagged = Vec::new();
    for id in &tickets {
        tagged.push(tags(&app, &acme, id).await);
    }
    assert_eq!(tagged, vec![json!(["hit"]), json!([])]);
}
