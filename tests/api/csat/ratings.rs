//! Rating a chat with the visitor token: once, changeable for 7 days, only
//! when closed, only the token's own session; the widget is asked over its
//! socket when the chat closes.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::{close_chat, closed_chat, open_chat, rate};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_closed_chat_is_rated_once_and_the_rating_changes_in_place,
    a_rating_is_changeable_for_seven_days_then_409,
    only_a_closed_chat_of_the_token_can_be_rated,
    bad_ratings_are_400_and_change_nothing,
    a_score_of_the_wrong_type_is_refused_naming_the_scale,
    a_changed_rating_without_a_comment_keeps_the_one_before,
    a_blank_comment_removes_the_one_before,
    closing_a_chat_asks_its_widget_for_a_rating,
);

async fn a_closed_chat_is_rated_once_and_the_rating_changes_in_place(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, token) = closed_chat(&app, &acme).await;

    let first = rate(
        &app,
        Some(&token),
        json!({"score": 4, "comment": " Quick "}),
    )
    .await;
    let first = first.assert_status(201).clone();
    assert_eq!(first["chatSessionId"], json!(id));
    assert_eq!(first["ticketId"], Value::Null);
    assert_eq!(first["entityId"], json!(acme.entity.id));
    assert_eq!(first["score"], 4);
    assert_eq!(first["comment"], "Quick");

    let again = rate(&app, Some(&token), json!({"score": 2, "sessionId": id})).await;
    let again = again.assert_status(200).clone();
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["score"], 2);
    assert_eq!(again["createdAt"], first["createdAt"]);

    let list = app.get("/ratings", &acme.key).await;
    let list = list.assert_status(200);
    assert_eq!(list["total"], 1);
    assert_eq!(list["data"][0]["score"], 2);
}

async fn a_rating_is_changeable_for_seven_days_then_409(backend: Backend) {
    // Visitor tokens that outlive the test's days: the rating's own rule is
    // under test here, not the token's lifetime (widget::tokens).
    let app = TestApp::spawn_with(backend, |c| {
        c.visitor_token_ttl = std::time::Duration::from_secs(9 * 24 * 3600);
        c.visitor_closed_write = std::time::Duration::from_secs(9 * 24 * 3600);
    })
    .await;
    let acme = app.company().await;
    let (_, token) = closed_chat(&app, &acme).await;
    rate(&app, Some(&token), json!({"score": 5}))
        .await
        .assert_status(201);

    // Nodes whose clocks run 6 and 8 days ahead play the visitor coming back.
    let six_days = app
        .spawn_peer_with(|c| c.clock_offset = chrono::TimeDelta::days(6))
        .await;
    rate(&six_days, Some(&token), json!({"score": 4}))
        .await
        .assert_status(200);
    let eight_days = app
        .spawn_peer_with(|c| c.clock_offset = chrono::TimeDelta::days(8))
        .await;
    let late = rate(&eight_days, Some(&token), json!({"score": 1})).await;
    late.assert_error(409, "conflict");

    let list = app.get("/ratings", &acme.key).await;
    assert_eq!(list.assert_status(200)["data"][0]["score"], 4);
}

async fn only_a_closed_chat_of_the_token_can_be_rated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (open_id, open_token) = open_chat(&app, &acme).await;
    let (other_id, _) = closed_chat(&app, &acme).await;

    rate(&app, Some(&open_token), json!({"score": 5}))
        .await
        .assert_error(409, "conflict");
    rate(
        &app,
        Some(&open_token),
        json!({"score": 5, "sessionId": other_id}),
    )
    .await
    .assert_error(404, "not_found");
    rate(&app, None, json!({"score": 5}))
        .await
        .assert_error(401, "invalid_token");
    rate(&app, Some("vt_forged"), json!({"score": 5}))
        .await
        .assert_error(401, "invalid_token");

    close_chat(&app, &acme, &open_id).await;
    rate(&app, Some(&open_token), json!({"score": 5}))
        .await
        .assert_status(201);
}

async fn bad_ratings_are_400_and_change_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, token) = closed_chat(&app, &acme).await;
    for body in [
        json!({}),
        json!({"score": 0}),
        json!({"score": 6}),
        json!({"score": 3, "comment": "x".repeat(2001)}),
    ] {
        let r = rate(&app, Some(&token), body).await;
        r.assert_error(400, "validation_failed");
    }
    let list = app.get("/ratings", &acme.key).await;
    assert_eq!(list.assert_status(200)["total"], 0);
    rate(
        &app,
        Some(&token),
        json!({"score": 3, "comment": "x".repeat(2000)}),
    )
    .await
    .assert_status(201);
}

async fn a_score_of_the_wrong_type_is_refused_naming_the_scale(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, token) = closed_chat(&app, &acme).await;
    for score in [json!("5"), json!(4.5), json!(true)] {
        let r = rate(&app, Some(&token), json!({ "score": score })).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(
            r.body["error"], "score: must be a whole number from 1 to 5",
            "{score}"
        );
    }
}

async fn a_changed_rating_without_a_comment_keeps_the_one_before(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, token) = closed_chat(&app, &acme).await;
    rate(&app, Some(&token), json!({"score": 4, "comment": "Quick"}))
        .await
        .assert_status(201);
    let again = rate(&app, Some(&token), json!({"score": 2})).await;
    assert_eq!(again.assert_status(200)["comment"], "Quick");
}

async fn a_blank_comment_removes_the_one_before(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, token) = closed_chat(&app, &acme).await;
    rate(&app, Some(&token), json!({"score": 4, "comment": "Quick"}))
        .await
        .assert_status(201);
    let again = rate(&app, Some(&token), json!({"score": 4, "comment": " "})).await;
    assert_eq!(again.assert_status(200)["comment"], Value::Null);
}

async fn closing_a_chat_asks_its_widget_for_a_rating(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, token) = open_chat(&app, &acme).await;
    let url = format!("ws://127.0.0.1:{}/api/v1/ws?token={token}", app.port);
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("socket opens");
    let subscribe = json!({"type": "subscribe", "channel": format!("session:{id}"), "id": "s1"});
    socket
        .send(Message::text(subscribe.to_string()))
        .await
        .expect("sent");
    next_of_type(&mut socket, "subscribed").await;

    close_chat(&app, &acme, &id).await;
    let frame = next_of_type(&mut socket, "rating_requested").await;
    assert_eq!(frame["channel"], format!("session:{id}"));
    assert_eq!(frame["data"]["chatSessionId"], json!(id));
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next frame of `kind` (others are skipped), within 15 s.
pub async fn next_of_type(socket: &mut Ws, kind: &str) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(15), socket.next())
            .await
            .unwrap_or_else(|_| panic!("a {kind} frame before the timeout"))
            .expect("socket open")
            .expect("frame read");
        if let Message::Text(text) = message {
            let frame: Value = serde_json::from_str(&text).expect("JSON frame");
            if frame["type"] == kind {
                return frame;
            }
        }
    }
}
