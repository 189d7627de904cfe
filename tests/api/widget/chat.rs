//! The widget's chats: sessions started with a widget key, the visitor
//! token's reach (REST and socket), public presence, the per-IP limit.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};
use tokio_tungstenite::tungstenite::Message;

use super::{start_chat, text, widget_get, widget_post};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    sessions_start_in_the_entity_and_mode_of_the_widget_key,
    the_visitor_token_reads_and_writes_only_its_own_session,
    presence_shows_public_agents_by_name_only,
    starting_chats_is_rate_limited_per_ip,
);

async fn read_with_token(app: &TestApp, session: &str, token: Option<&str>) -> TestResponse {
    let mut request = app
        .client
        .get(app.url(&format!("/widget/v1/sessions/{session}")));
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    TestResponse::from(request.send().await).await
}

async fn presence(app: &TestApp, widget_key: &str) -> TestResponse {
    widget_get(app, &format!("/widget/v1/presence?widgetKey={widget_key}")).await
}

/// A minimal socket client: JSON frames with a timeout.
struct Socket(
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
);

impl Socket {
    async fn open(app: &TestApp, token: &str) -> Socket {
        let url = format!("ws://127.0.0.1:{}/api/v1/ws?token={token}", app.port);
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("socket opens");
        Socket(ws)
    }

    async fn send(&mut self, frame: Value) {
        self.0
            .send(Message::text(frame.to_string()))
            .await
            .expect("frame sent");
    }

    /// The next frame answering client frame `id` (others are skipped).
    async fn reply_to(&mut self, id: &str) -> Value {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(15), self.0.next())
                .await
                .expect("a frame before the timeout")
                .expect("socket open")
                .expect("frame read");
            if let Message::Text(text) = message {
                let frame: Value = serde_json::from_str(&text).expect("JSON frame");
                if frame["id"] == id {
                    return frame;
                }
            }
        }
    }
}

async fn sessions_start_in_the_entity_and_mode_of_the_widget_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let live_key = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;

    // TEST widget key -> a test-mode session of that entity.
    let session = start_chat(
        &app,
        &acme.entity.widget_key_test,
        json!({"visitorName": "  Vic  ", "visitorEmail": "vic@example.com"}),
    )
    .await;
    assert_eq!(session["entityId"], acme.entity.id.to_string());
    assert_eq!(session["status"], "ACTIVE");
    assert_eq!(session["visitorName"], "Vic");
    assert_eq!(session["visitorEmail"], "vic@example.com");
    assert!(text(&session, "visitorToken").starts_with("vt_"));
    assert!(session["createdAt"].is_string());
    let id = text(&session, "id");
    app.get(&format!("/chat/sessions/{id}"), &acme.key)
        .await
        .assert_status(200);
    app.get(&format!("/chat/sessions/{id}"), &live_key)
        .await
        .assert_error(404, "not_found");

    // LIVE widget key -> live mode; the name defaults to "Visitor".
    let live = start_chat(&app, &acme.entity.widget_key_live, json!({})).await;
    assert_eq!(live["visitorName"], "Visitor");
    let live_id = text(&live, "id");
    app.get(&format!("/chat/sessions/{live_id}"), &live_key)
        .await
        .assert_status(200);
    app.get(&format!("/chat/sessions/{live_id}"), &acme.key)
        .await
        .assert_error(404, "not_found");

    // The agents' list shows it to the entity's watchers in that mode.
    let listed = app
        .get(
            &format!("/chat/sessions?entityId={}", acme.entity.id),
            &acme.key,
        )
        .await;
    let ids: Vec<&str> = listed.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|s| text(s, "id"))
        .collect();
    assert_eq!(ids, [id]);

    // Input errors and unknown keys, in our shape; nothing is created.
    let bad = widget_post(
        &app,
        "/widget/v1/sessions",
        json!({"widgetKey": acme.entity.widget_key_test, "visitorEmail": "nope",
               "visitorName": "x".repeat(256)}),
    )
    .await;
    bad.assert_error(400, "validation_failed");
    let fields: Vec<&str> = bad.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| text(d, "field"))
        .collect();
    assert_eq!(fields, ["visitorName", "visitorEmail"]);
    widget_post(&app, "/widget/v1/sessions", json!({}))
        .await
        .assert_error(400, "validation_failed");
    widget_post(
        &app,
        "/widget/v1/sessions",
        json!({"widgetKey": "wk_test_unknown00000000000000000"}),
    )
    .await
    .assert_error(404, "not_found");
    widget_post(&app, "/widget/v1/sessions", json!({"widgetKey": acme.key}))
        .await
        .assert_error(404, "not_found");
    let malformed = TestResponse::from(
        app.client
            .post(app.url("/widget/v1/sessions"))
            .header("content-type", "application/json")
            .body("{\"widgetKey\": ")
            .send()
            .await,
    )
    .await;
    malformed.assert_error(400, "invalid_json");
    let listed = app.get("/chat/sessions", &acme.key).await;
    assert_eq!(listed.assert_status(200)["total"], 1);

    // A cross-origin page may POST JSON here (preflight answered).
    let preflight = TestResponse::from(
        app.client
            .request(Method::OPTIONS, app.url("/widget/v1/sessions"))
            .header("Origin", "https://shop.example.com")
            .header("Access-Control-Request-Method", "POST")
            .header("Access-Control-Request-Headers", "content-type")
            .send()
            .await,
    )
    .await;
    assert!(preflight.status < 300, "preflight: {}", preflight.status);
    assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
}

async fn the_visitor_token_reads_and_writes_only_its_own_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let widget_key = acme.entity.widget_key_test.clone();
    let mine = start_chat(&app, &widget_key, json!({"visitorName": "Me"})).await;
    let theirs = start_chat(&app, &widget_key, json!({"visitorName": "Them"})).await;
    let (my_id, my_token) = (text(&mine, "id"), text(&mine, "visitorToken"));
    let (their_id, their_token) = (text(&theirs, "id"), text(&theirs, "visitorToken"));

    // REST: the token reads its own session (with messages), nothing else.
    let own = read_with_token(&app, my_id, Some(my_token)).await;
    assert_eq!(own.assert_status(200)["visitorName"], "Me");
    assert_eq!(own.body["messages"], json!([]));
    read_with_token(&app, their_id, Some(my_token))
        .await
        .assert_error(404, "not_found");
    read_with_token(&app, my_id, None)
        .await
        .assert_error(401, "invalid_token");
    read_with_token(&app, my_id, Some("vt_forged"))
        .await
        .assert_error(401, "invalid_token");
    read_with_token(&app, my_id, Some(&acme.key))
        .await
        .assert_error(401, "invalid_token");
    // A visitor token is no API key either.
    app.get(&format!("/chat/sessions/{my_id}"), my_token)
        .await
        .assert_error(401, "invalid_api_key");

    // The socket: its own session only.
    let mut socket = Socket::open(&app, my_token).await;
    socket
        .send(json!({"type": "subscribe", "channel": format!("session:{their_id}"), "id": "s1"}))
        .await;
    let refused = socket.reply_to("s1").await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(refused["code"], "not_found");
    socket
        .send(json!({"type": "subscribe", "channel": format!("entity:{}", acme.entity.id), "id": "s2"}))
        .await;
    assert_eq!(socket.reply_to("s2").await["type"], "error");
    socket
        .send(json!({"type": "message", "sessionId": their_id, "body": "intruding", "id": "m1"}))
        .await;
    let refused = socket.reply_to("m1").await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(refused["code"], "not_found");

    socket
        .send(json!({"type": "subscribe", "channel": format!("session:{my_id}"), "id": "s3"}))
        .await;
    assert_eq!(socket.reply_to("s3").await["type"], "subscribed");
    socket
        .send(json!({"type": "message", "sessionId": my_id, "body": "hello", "id": "m2"}))
        .await;
    let sent = socket.reply_to("m2").await;
    assert_eq!(sent["type"], "chat.message", "{sent}");
    assert_eq!(sent["data"]["senderType"], "visitor");

    // What the store holds: my message in my session, nothing in theirs.
    let own = read_with_token(&app, my_id, Some(my_token)).await;
    let bodies: Vec<&str> = own.assert_status(200)["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| text(m, "body"))
        .collect();
    assert_eq!(bodies, ["hello"]);
    let other = read_with_token(&app, their_id, Some(their_token)).await;
    assert_eq!(other.assert_status(200)["messages"], json!([]));

    // An agent's reply is there for the visitor to read back.
    let agent = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ann", "email": "ann@example.com", "role": "AGENT"}),
        )
        .await;
    let agent_id = text(agent.assert_status(201), "id").to_string();
    app.post(
        &format!("/chat/sessions/{my_id}/messages"),
        &acme.key,
        json!({"body": "Hi, Ann here", "senderType": "agent", "senderId": agent_id}),
    )
    .await
    .assert_status(201);
    let own = read_with_token(&app, my_id, Some(my_token)).await;
    let last = &own.assert_status(200)["messages"][1];
    assert_eq!(last["senderName"], "Ann");
    assert_eq!(last["senderType"], "agent");
}

async fn presence_shows_public_agents_by_name_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = &acme.entity.widget_key_test;

    let nobody = presence(&app, key).await;
    assert_eq!(
        nobody.assert_status(200),
        &json!({"online": false, "agents": []})
    );

    let beat = |user: &str, name: &str, visibility: &str| {
        json!({"userId": user, "name": name, "email": format!("{}@example.com", name.to_lowercase()),
               "role": "AGENT", "visibility": visibility})
    };
    let ann = uuid::Uuid::now_v7().to_string();
    let bob = uuid::Uuid::now_v7().to_string();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        beat(&ann, "Ann", "PUBLIC"),
    )
    .await
    .assert_status(200);
    app.post(
        "/chat/agent-presence",
        &acme.key,
        beat(&bob, "Bob", "PRIVATE"),
    )
    .await
    .assert_status(200);

    let online = presence(&app, key).await;
    assert_eq!(
        online.assert_status(200),
        &json!({"online": true, "agents": [{"name": "Ann"}]})
    );
    assert!(!online.text.contains("Bob"), "{}", online.text);
    assert!(!online.text.contains('@'), "no emails: {}", online.text);
    assert!(!online.text.contains(&ann), "no ids: {}", online.text);

    // A PRIVATE agent alone means "away" for visitors.
    app.delete(&format!("/chat/agent-presence/{ann}"), &acme.key)
        .await
        .assert_status(200);
    let private_only = presence(&app, key).await;
    assert_eq!(
        private_only.assert_status(200),
        &json!({"online": false, "agents": []})
    );

    // Presence is per mode: the LIVE widget does not see TEST agents.
    app.post(
        "/chat/agent-presence",
        &acme.key,
        beat(&ann, "Ann", "PUBLIC"),
    )
    .await
    .assert_status(200);
    let live = presence(&app, &acme.entity.widget_key_live).await;
    assert_eq!(live.assert_status(200)["online"], false);
    let test = presence(&app, key).await;
    assert_eq!(test.assert_status(200)["online"], true);
}

async fn starting_chats_is_rate_limited_per_ip(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.entity.widget_key_test.clone();
    // The burst of chats one IP may start at once, then a 429.
    for _ in 0..10 {
        start_chat(&app, &key, json!({})).await;
    }
    let refused = TestResponse::from(
        app.client
            .post(app.url("/widget/v1/sessions"))
            .header("Origin", "https://shop.example.com")
            .json(&json!({"widgetKey": key}))
            .send()
            .await,
    )
    .await;
    refused.assert_error(429, "rate_limited");
    let wait: u64 = refused
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!(wait >= 1);
    assert_eq!(
        refused.body["error"],
        format!("Rate limit exceeded. Try again in {wait} seconds.")
    );
    // The page can read the refusal (CORS headers on the 429 too).
    assert_eq!(refused.header("access-control-allow-origin"), Some("*"));
    // Reading (presence, search) still works for that IP.
    widget_get(&app, &format!("/widget/v1/presence?widgetKey={key}"))
        .await
        .assert_status(200);
    let listed = app.get("/chat/sessions", &acme.key).await;
    assert_eq!(listed.assert_status(200)["total"], 10);
}
