//! Snoozing: `snoozedUntil` hides a ticket from the awake list until then;
//! the wake pass wakes it once (on one node of two), or the customer's reply
//! wakes it first; each wake emits `ticket.unsnoozed`.

use chrono::Duration;
use serde_json::{Value, json};

use super::{bodies, comment, event_count, get_ticket, quiet, subscribe, ticket};
use crate::actors::system_actor;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_snoozed_ticket_is_hidden_from_the_awake_list,
    a_snoozed_ticket_wakes_once_across_two_nodes,
    a_snoozed_ticket_does_not_wake_before_its_time,
    a_customer_reply_wakes_a_snoozed_ticket_early,
    an_agent_reply_leaves_a_ticket_snoozed,
    a_snooze_in_the_past_is_refused,
);

/// Snoozes ticket `id` for an hour of the app's clock; the time it wakes.
async fn snooze_an_hour(app: &TestApp, acme: &TestCompany, id: &str) -> String {
    let until = (app.state.clock.now().0 + Duration::hours(1)).to_rfc3339();
    let r = app
        .patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({"snoozedUntil": until}),
        )
        .await;
    r.assert_status(200)["snoozedUntil"]
        .as_str()
        .expect("snoozedUntil")
        .to_string()
}

/// The ids of a page of `GET /tickets?{query}`.
async fn listed(app: &TestApp, acme: &TestCompany, query: &str) -> Vec<Value> {
    let r = app.get(&format!("/tickets?{query}"), &acme.key).await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| t["id"].clone())
        .collect()
}

/// The wake pass of `node` at `minutes` past the app clock's now.
async fn wake_pass(node: &TestApp, now: supportdesk::time::Timestamp) -> usize {
    let signer = node.state.link_signer();
    supportdesk::tickets::store::wake_due(&node.state.db, now, &signer)
        .await
        .expect("wake pass")
}

async fn a_snoozed_ticket_is_hidden_from_the_awake_list(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let snoozed = ticket(&app, &acme, "Waiting on the vendor").await;
    let awake = ticket(&app, &acme, "Printer").await;
    snooze_an_hour(&app, &acme, &snoozed).await;

    assert_eq!(
        listed(&app, &acme, "snoozed=false").await,
        vec![json!(awake)]
    );
    assert_eq!(
        listed(&app, &acme, "snoozed=true").await,
        vec![json!(snoozed)]
    );
    // Its time come, it is awake in the list even before the pass runs.
    app.state.clock.advance(Duration::minutes(61));
    assert_eq!(
        listed(&app, &acme, "snoozed=true").await,
        Vec::<Value>::new()
    );
}

async fn a_snoozed_ticket_wakes_once_across_two_nodes(backend: Backend) {
    let app = quiet(backend).await;
    let peer = app.spawn_peer_with(|c| c.run_workers = false).await;
    let acme = app.company().await;
    subscribe(&app, &acme, &["ticket.unsnoozed"]).await;
    let id = ticket(&app, &acme, "Waiting on the vendor").await;
    snooze_an_hour(&app, &acme, &id).await;

    app.state.clock.advance(Duration::minutes(60));
    let now = app.state.clock.now();
    let (a, b) = tokio::join!(wake_pass(&app, now), wake_pass(&peer, now));
    assert_eq!(a + b, 1);
    let (a, b) = tokio::join!(wake_pass(&app, now), wake_pass(&peer, now));
    assert_eq!((a, b), (0, 0));

    assert_eq!(
        get_ticket(&app, &acme, &id).await["snoozedUntil"],
        Value::Null
    );
    let sent = bodies(&app, &acme)
        .await
        .remove("ticket.unsnoozed")
        .unwrap_or_default();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["data"]["reason"], "due");
    assert_eq!(sent[0]["actor"], system_actor());
    peer.stop().await;
}

async fn a_snoozed_ticket_does_not_wake_before_its_time(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, "Waiting on the vendor").await;
    let until = snooze_an_hour(&app, &acme, &id).await;

    app.state.clock.advance(Duration::minutes(59));
    assert_eq!(wake_pass(&app, app.state.clock.now()).await, 0);
    assert_eq!(
        get_ticket(&app, &acme, &id).await["snoozedUntil"],
        json!(until)
    );
}

async fn a_customer_reply_wakes_a_snoozed_ticket_early(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, "Waiting on the customer").await;
    snooze_an_hour(&app, &acme, &id).await;

    comment(
        &app,
        &acme,
        &id,
        json!({"body": "Here it is", "authorType": "customer"}),
    )
    .await
    .assert_status(201);
    assert_eq!(
        get_ticket(&app, &acme, &id).await["snoozedUntil"],
        Value::Null
    );
    assert_eq!(event_count(&app, &acme, "ticket.unsnoozed").await, 1);
    // Its old time passing wakes nothing again.
    app.state.clock.advance(Duration::minutes(61));
    assert_eq!(wake_pass(&app, app.state.clock.now()).await, 0);
    assert_eq!(event_count(&app, &acme, "ticket.unsnoozed").await, 1);
}

async fn an_agent_reply_leaves_a_ticket_snoozed(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, "Waiting on the customer").await;
    let until = snooze_an_hour(&app, &acme, &id).await;

    comment(&app, &acme, &id, json!({"body": "Any news?"}))
        .await
        .assert_status(201);
    assert_eq!(
        get_ticket(&app, &acme, &id).await["snoozedUntil"],
        json!(until)
    );
}

async fn a_snooze_in_the_past_is_refused(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, "Printer").await;
    let past = (app.state.clock.now().0 - Duration::minutes(1)).to_rfc3339();

    let r = app
        .patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({"snoozedUntil": past}),
        )
        .await;
    assert_invalid(&r, &["snoozedUntil"]);
    assert_eq!(
        get_ticket(&app, &acme, &id).await["snoozedUntil"],
        Value::Null
    );
}
