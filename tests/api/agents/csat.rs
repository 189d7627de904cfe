//! A rating names the agent who handled the rated chat or ticket (its
//! assignee when first rated), in the rating and in `GET /ratings`.

use serde_json::json;

use crate::backend_tests;
use crate::csat::{close_chat, email_texts, link_token, open_chat, rate, resolved_ticket};
use crate::support::{Backend, TestApp};
use crate::tickets::user;

backend_tests!(
    a_chats_rating_names_the_agent_who_handled_it,
    a_tickets_rating_names_its_assignee,
);

async fn a_chats_rating_names_the_agent_who_handled_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let (chat, token) = open_chat(&app, &acme).await;
    app.patch(
        &format!("/chat/sessions/{chat}"),
        &acme.key,
        json!({"assigneeId": bob.id}),
    )
    .await
    .assert_status(200);
    close_chat(&app, &acme, &chat).await;

    let r = rate(&app, Some(&token), json!({"score": 5})).await;

    let rating = r.assert_status(201);
    assert_eq!(rating["agentId"], json!(bob.id));
    assert_eq!(rating["agentName"], "Bob");
    let listed = app.get("/ratings", &acme.key).await;
    let first = &listed.assert_status(200)["data"][0];
    assert_eq!(first["agentId"], json!(bob.id));
    assert_eq!(first["agentName"], "Bob");
}

async fn a_tickets_rating_names_its_assignee(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let ticket = resolved_ticket(&app, &acme).await;
    app.patch(
        &format!("/tickets/{ticket}"),
        &acme.key,
        json!({"assignedToId": bob.id}),
    )
    .await
    .assert_status(200);

    let token = email_texts(&app, acme.company.id)
        .await
        .iter()
        .find_map(|text| link_token(text))
        .expect("a rating link");

    let r = rate(&app, None, json!({"token": token, "score": 4})).await;

    assert_eq!(r.assert_status(201)["agentId"], json!(bob.id));
}
