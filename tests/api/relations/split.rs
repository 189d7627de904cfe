//! Splitting a ticket: a comment (and, optionally, those after it) becomes
//! a new ticket linked to the old one, with `ticket.split`.

use serde_json::{Value, json};

use super::{bodies, comment, comment_total, get_ticket, links_of, quiet, subscribe, ticket};
use crate::actors::key_actor;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_split_moves_the_comment_and_those_after_it_to_a_linked_ticket,
    a_split_without_following_moves_one_comment,
    a_split_emits_ticket_split_with_its_actor,
    a_comment_of_another_ticket_is_not_split,
);

/// A ticket with three comments; its id and the comments' ids.
async fn discussed(app: &TestApp, acme: &TestCompany) -> (String, Vec<String>) {
    let id = ticket(app, acme, "Invoice and password").await;
    let mut comments = Vec::new();
    for body in ["About the invoice", "Also: my password", "Still locked out"] {
        let r = comment(app, acme, &id, json!({"body": body})).await;
        comments.push(r.assert_status(201)["id"].as_str().expect("id").to_string());
    }
    (id, comments)
}

async fn split(app: &TestApp, acme: &TestCompany, id: &str, body: Value) -> Value {
    let r = app
        .post(&format!("/tickets/{id}/split"), &acme.key, body)
        .await;
    r.assert_status(201).clone()
}

async fn a_split_moves_the_comment_and_those_after_it_to_a_linked_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (old, comments) = discussed(&app, &acme).await;

    let new = split(
        &app,
        &acme,
        &old,
        json!({"commentId": comments[1], "following": true, "subject": "Password"}),
    )
    .await;
    let new_id = new["id"].as_str().expect("id").to_string();
    assert_eq!(new["subject"], "Password");
    assert_eq!(links_of(&new), vec![(old.clone(), "split_from".into())]);
    let old_now = get_ticket(&app, &acme, &old).await;
    assert_eq!(
        links_of(&old_now),
        vec![(new_id.clone(), "split_into".into())]
    );
    assert_eq!(comment_total(&app, &acme, &old).await, 1);
    assert_eq!(comment_total(&app, &acme, &new_id).await, 2);
}

async fn a_split_without_following_moves_one_comment(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (old, comments) = discussed(&app, &acme).await;

    let new = split(&app, &acme, &old, json!({"commentId": comments[1]})).await;
    let new_id = new["id"].as_str().expect("id").to_string();
    let number = get_ticket(&app, &acme, &old).await["ticketNumber"].clone();
    assert_eq!(
        new["subject"],
        json!(format!(
            "Split from {}: Invoice and password",
            number.as_str().expect("number")
        ))
    );
    assert_eq!(comment_total(&app, &acme, &old).await, 2);
    assert_eq!(comment_total(&app, &acme, &new_id).await, 1);
}

async fn a_split_emits_ticket_split_with_its_actor(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    subscribe(&app, &acme, &["ticket.split"]).await;
    let (old, comments) = discussed(&app, &acme).await;
    let new = split(&app, &acme, &old, json!({"commentId": comments[2]})).await;

    let sent = bodies(&app, &acme)
        .await
        .remove("ticket.split")
        .unwrap_or_default();
    assert_eq!(sent.len(), 1);
    let data = &sent[0]["data"];
    assert_eq!(
        (&data["id"], &data["splitFrom"]["id"], &data["commentIds"]),
        (&new["id"], &json!(old), &json!([comments[2]]))
    );
    assert_eq!(sent[0]["actor"], key_actor(&app, &acme).await);
}

async fn a_comment_of_another_ticket_is_not_split(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (old, _) = discussed(&app, &acme).await;
    let (_, others) = discussed(&app, &acme).await;

    let r = app
        .post(
            &format!("/tickets/{old}/split"),
            &acme.key,
            json!({"commentId": others[0]}),
        )
        .await;
    assert_invalid(&r, &["commentId"]);
    let listed = app.get("/tickets", &acme.key).await;
    assert_eq!(listed.assert_status(200)["total"], 2);
}
