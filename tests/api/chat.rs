//! Chat and realtime: sessions, messages, agent presence, and the socket
//! (`/api/v1/ws`) on one node and across nodes. Redis-specific behaviour
//! (presence in Redis, fan-out between nodes) runs on the postgres backend
//! when `TEST_REDIS_URL` is set; the sqlite backend runs the in-process
//! versions of the same tests.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};
use supportdesk::realtime::bus::BusMessage;
use supportdesk::realtime::protocol::{HubChannel, Topic};
use supportdesk::users::store::NewUser;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use uuid::Uuid;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    sessions_are_created_listed_and_read,
    messages_are_validated_stored_and_closed_sessions_refuse_them,
    an_agent_reply_emails_the_visitor_a_link_back,
    presence_api_registers_refreshes_and_removes_agents,
    chat_routes_need_their_scopes,
    socket_handshake_refusals_have_the_rest_shape,
    a_rest_message_reaches_subscribed_sockets,
    a_visitor_socket_reads_and_writes_only_its_session,
    typing_reaches_the_other_side,
    presence_transitions_are_pushed_and_private_agents_hidden,
    presence_expiry_is_pushed,
    sockets_are_isolated_by_mode,
    two_nodes_share_messages_and_presence,
    reconnecting_with_since_replays_exactly_the_missed_messages,
    a_socket_that_stops_reading_is_closed,
    a_thousand_sockets_each_receive_the_message,
    shutdown_closes_sockets,
);

// ---------------------------------------------------------------- helpers

const WAIT: Duration = Duration::from_secs(10);

fn tenant(acme: &TestCompany) -> Tenant {
    Tenant {
        company_id: acme.company.id,
        mode: Mode::Test,
    }
}

async fn new_session(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    let mut body = body;
    if body.get("entityId").is_none() {
        body["entityId"] = json!(acme.entity.id);
    }
    app.post("/chat/sessions", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

async fn agent(app: &TestApp, acme: &TestCompany, name: &str) -> Uuid {
    supportdesk::users::store::create(
        &app.state.db,
        &tenant(acme),
        NewUser {
            id: None,
            name: name.into(),
            email: format!("{}@acme.test", name.to_lowercase()),
            role: "AGENT".into(),
        },
    )
    .await
    .expect("user")
    .id
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

type Stream = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A socket client that reads JSON text frames.
struct Client {
    ws: Stream,
}

fn client_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(4096)
}

impl Client {
    async fn connect(app: &TestApp, key: Option<&str>, token: Option<&str>) -> Client {
        Self::try_connect(app, key, token)
            .await
            .expect("socket opens")
    }

    async fn try_connect(
        app: &TestApp,
        key: Option<&str>,
        token: Option<&str>,
    ) -> Result<Client, tungstenite::Error> {
        let mut url = format!("ws://127.0.0.1:{}/api/v1/ws", app.port);
        if let Some(token) = token {
            url.push_str(&format!("?token={token}"));
        }
        let mut request = url.into_client_request().expect("request");
        if let Some(key) = key {
            request
                .headers_mut()
                .insert("X-API-Key", key.parse().expect("header"));
        }
        let (ws, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(client_config()), false)
                .await?;
        Ok(Client { ws })
    }

    async fn key(app: &TestApp, key: &str) -> Client {
        Self::connect(app, Some(key), None).await
    }

    async fn token(app: &TestApp, token: &str) -> Client {
        Self::connect(app, None, Some(token)).await
    }

    async fn send(&mut self, frame: Value) {
        self.ws
            .send(Message::text(frame.to_string()))
            .await
            .expect("frame sent");
    }

    /// The next JSON frame (pings and pongs skipped).
    async fn next(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a frame before the timeout")
                .expect("socket open")
                .expect("frame read");
            match message {
                Message::Text(text) => return serde_json::from_str(&text).expect("JSON frame"),
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    /// The next frame of `kind`, skipping others (e.g. a presence snapshot).
    async fn next_of(&mut self, kind: &str) -> Value {
        loop {
            let frame = self.next().await;
            if frame["type"] == kind {
                return frame;
            }
        }
    }

    async fn subscribe(&mut self, channel: &str) {
        self.send(json!({"type": "subscribe", "channel": channel}))
            .await;
        let reply = self.next().await;
        assert_eq!(reply["type"], "subscribed", "reply {reply}");
        assert_eq!(reply["channel"], channel);
    }

    /// Proves that nothing was queued before `marker` reaches this socket:
    /// the next frame is the marker (a ping answered with a pong).
    async fn assert_nothing_before_pong(&mut self) {
        self.send(json!({"type": "ping", "id": "marker"})).await;
        let frame = self.next().await;
        assert_eq!(frame, json!({"type": "pong", "id": "marker"}));
    }
}

/// Polls `check` until it holds (or panics after `WAIT`).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

// ---------------------------------------------------------------- REST

async fn sessions_are_created_listed_and_read(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();

    let created = new_session(
        &app,
        &acme,
        json!({"visitorName": "  Vic  ", "visitorEmail": "vic@example.com"}),
    )
    .await;
    assert_eq!(created["entityId"], json!(acme.entity.id));
    assert_eq!(created["status"], "ACTIVE");
    assert_eq!(created["visitorName"], "Vic");
    assert_eq!(created["visitorEmail"], "vic@example.com");
    assert!(
        created["createdAt"]
            .as_str()
            .expect("createdAt")
            .ends_with('Z')
    );
    assert!(
        created["visitorToken"]
            .as_str()
            .expect("token")
            .starts_with("vt_")
    );
    let anonymous = new_session(&app, &acme, json!({})).await;
    assert_eq!(anonymous["visitorName"], "Visitor");
    assert_eq!(anonymous["visitorEmail"], Value::Null);

    // Validation: entityId required and the company's; email checked.
    let missing = app.post("/chat/sessions", key, json!({})).await;
    missing.assert_error(400, "validation_failed");
    assert_eq!(missing.body["details"][0]["field"], "entityId");
    let other = app.company().await;
    app.post("/chat/sessions", key, json!({"entityId": other.entity.id}))
        .await
        .assert_error(400, "validation_failed");
    let bad_email = app
        .post(
            "/chat/sessions",
            key,
            json!({"entityId": acme.entity.id, "visitorEmail": "nope"}),
        )
        .await;
    bad_email.assert_error(400, "validation_failed");
    assert_eq!(bad_email.body["details"][0]["field"], "visitorEmail");

    // Read with messages (none yet); the token is not shown again.
    let id = id_of(&created);
    let read = app.get(&format!("/chat/sessions/{id}"), key).await;
    let read = read.assert_status(200);
    assert_eq!(read["id"], id.as_str());
    assert_eq!(read["status"], "ACTIVE");
    assert_eq!(read["visitorName"], "Vic");
    assert_eq!(read["messages"], json!([]));
    assert!(read.get("visitorToken").is_none());

    // List: newest first, filters, pagination.
    app.patch(
        &format!("/chat/sessions/{}", id_of(&anonymous)),
        key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    let list = app.get("/chat/sessions", key).await;
    let list = list.assert_status(200);
    assert_eq!(list["total"], 2);
    assert_eq!(list["limit"], 20);
    assert_eq!(list["offset"], 0);
    assert_eq!(list["data"][0]["id"], anonymous["id"]);
    let active = app.get("/chat/sessions?status=ACTIVE", key).await;
    let active = active.assert_status(200);
    assert_eq!(active["total"], 1);
    assert_eq!(active["data"][0]["id"], id.as_str());
    let by_entity = app
        .get(
            &format!(
                "/chat/sessions?entityId={}&limit=1&offset=1",
                acme.entity.id
            ),
            key,
        )
        .await;
    let by_entity = by_entity.assert_status(200);
    assert_eq!(by_entity["total"], 2);
    assert_eq!(by_entity["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(by_entity["data"][0]["id"], id.as_str());
    app.get("/chat/sessions?status=active", key)
        .await
        .assert_error(400, "validation_failed");
    app.get("/chat/sessions?limit=0", key)
        .await
        .assert_error(400, "validation_failed");
    let clamped = app.get("/chat/sessions?limit=500", key).await;
    assert_eq!(clamped.assert_status(200)["limit"], 100);

    // Another company's or mode's session is 404; malformed ids too.
    app.get(&format!("/chat/sessions/{id}"), &other.key)
        .await
        .assert_error(404, "not_found");
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    app.get(&format!("/chat/sessions/{id}"), &live)
        .await
        .assert_error(404, "not_found");
    let live_list = app.get("/chat/sessions", &live).await;
    assert_eq!(live_list.assert_status(200)["total"], 0);
    app.get("/chat/sessions/nope", key)
        .await
        .assert_error(404, "not_found");
}

async fn messages_are_validated_stored_and_closed_sessions_refuse_them(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let path = format!("/chat/sessions/{}/messages", id_of(&session));
    let ann = agent(&app, &acme, "Ann").await;

    let visitor = app
        .post(
            &path,
            key,
            json!({"body": "Hello?", "senderType": "visitor"}),
        )
        .await;
    let visitor = visitor.assert_status(201).clone();
    assert_eq!(visitor["body"], "Hello?");
    assert_eq!(visitor["senderType"], "visitor");
    assert_eq!(visitor["senderId"], Value::Null);
    assert!(visitor["id"].is_string() && visitor["createdAt"].is_string());

    let reply = app
        .post(
            &path,
            key,
            json!({"body": "Hi, I'm Ann", "senderType": "agent", "senderId": ann}),
        )
        .await;
    let reply = reply.assert_status(201).clone();
    assert_eq!(reply["senderType"], "agent");
    assert_eq!(reply["senderId"], json!(ann));
    app.post(
        &path,
        key,
        json!({"body": "Ann joined", "senderType": "system"}),
    )
    .await
    .assert_status(201);

    // Validation.
    for (body, field) in [
        (json!({"senderType": "visitor"}), "body"),
        (json!({"body": "   ", "senderType": "visitor"}), "body"),
        (
            json!({"body": "x".repeat(10_001), "senderType": "visitor"}),
            "body",
        ),
        (json!({"body": "x"}), "senderType"),
        (json!({"body": "x", "senderType": "Visitor"}), "senderType"),
        (json!({"body": "x", "senderType": "agent"}), "senderId"),
        (
            json!({"body": "x", "senderType": "agent", "senderId": "nope"}),
            "senderId",
        ),
        (
            json!({"body": "x", "senderType": "agent", "senderId": Uuid::now_v7()}),
            "senderId",
        ),
    ] {
        let refused = app.post(&path, key, body.clone()).await;
        refused.assert_error(400, "validation_failed");
        assert_eq!(refused.body["details"][0]["field"], field, "for {body}");
    }
    app.post(
        &path,
        key,
        json!({"body": "x".repeat(10_000), "senderType": "visitor"}),
    )
    .await
    .assert_status(201);

    // Read: oldest first, senderName on agent messages only.
    let read = app
        .get(&format!("/chat/sessions/{}", id_of(&session)), key)
        .await;
    let messages = read.assert_status(200)["messages"].clone();
    let messages = messages.as_array().expect("messages");
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[0]["id"], visitor["id"]);
    assert!(messages[0].get("senderName").is_none());
    assert_eq!(messages[1]["id"], reply["id"]);
    assert_eq!(messages[1]["senderName"], "Ann");
    assert_eq!(messages[2]["senderType"], "system");
    assert!(messages[2].get("senderName").is_none());

    // Close: status and closedAt; a message is then 409 session_closed.
    let session_path = format!("/chat/sessions/{}", id_of(&session));
    app.patch(&session_path, key, json!({}))
        .await
        .assert_error(400, "validation_failed");
    app.patch(&session_path, key, json!({"status": "closed"}))
        .await
        .assert_error(400, "validation_failed");
    let closed = app
        .patch(&session_path, key, json!({"status": "CLOSED"}))
        .await;
    let closed = closed.assert_status(200);
    assert_eq!(closed["status"], "CLOSED");
    assert!(closed["closedAt"].is_string());
    let refused = app
        .post(
            &path,
            key,
            json!({"body": "Still there?", "senderType": "visitor"}),
        )
        .await;
    refused.assert_error(409, "session_closed");
    // Reopening is allowed; then messages are accepted again.
    let reopened = app
        .patch(&session_path, key, json!({"status": "ACTIVE"}))
        .await;
    assert_eq!(reopened.assert_status(200)["closedAt"], Value::Null);
    app.post(&path, key, json!({"body": "Back", "senderType": "visitor"}))
        .await
        .assert_status(201);

    // Unknown session, or another company's: 404.
    let other = app.company().await;
    app.post(
        &path,
        &other.key,
        json!({"body": "x", "senderType": "visitor"}),
    )
    .await
    .assert_error(404, "not_found");
    app.post(
        &format!("/chat/sessions/{}/messages", Uuid::now_v7()),
        key,
        json!({"body": "x", "senderType": "visitor"}),
    )
    .await
    .assert_error(404, "not_found");
    app.patch(
        &format!("/chat/sessions/{}", Uuid::now_v7()),
        key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_error(404, "not_found");
}

async fn queued_emails(app: &TestApp) -> Vec<Value> {
    let db = &app.state.db;
    let rows: Vec<sqlx::types::Json<Value>> = supportdesk::on_db!(db, c => sqlx::query_scalar(
        "SELECT payload FROM outbox_jobs WHERE kind = 'email' ORDER BY created_at")
        .fetch_all(c)
        .await
        .expect("emails"));
    rows.into_iter().map(|json| json.0).collect()
}

async fn an_agent_reply_emails_the_visitor_a_link_back(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let ann = agent(&app, &acme, "Ann").await;
    let session = new_session(
        &app,
        &acme,
        json!({"visitorName": "Vic", "visitorEmail": "vic@example.com"}),
    )
    .await;
    let path = format!("/chat/sessions/{}/messages", id_of(&session));

    // Visitor and system messages send nothing.
    app.post(
        &path,
        key,
        json!({"body": "Hello?", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    assert!(queued_emails(&app).await.is_empty());

    app.post(
        &path,
        key,
        json!({"body": "Try turning it off and on.", "senderType": "agent", "senderId": ann}),
    )
    .await
    .assert_status(201);
    let emails = queued_emails(&app).await;
    assert_eq!(emails.len(), 1, "{emails:?}");
    let email = &emails[0];
    assert_eq!(email["to"], "vic@example.com");
    let text = email["text"].as_str().expect("text");
    assert!(text.contains("Try turning it off and on."), "{text}");
    let link = format!(
        "{}/demo/visitor.html#session={}&token={}",
        app.state.public_url,
        id_of(&session),
        session["visitorToken"].as_str().expect("token")
    );
    assert!(text.contains(&link), "{text} should contain {link}");

    // No visitor email: no email.
    let anonymous = new_session(&app, &acme, json!({})).await;
    app.post(
        &format!("/chat/sessions/{}/messages", id_of(&anonymous)),
        key,
        json!({"body": "Hi", "senderType": "agent", "senderId": ann}),
    )
    .await
    .assert_status(201);
    assert_eq!(queued_emails(&app).await.len(), 1);
}

async fn count_events(app: &TestApp, name: &str) -> i64 {
    let db = &app.state.db;
    supportdesk::on_db!(db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM events WHERE name = $1")
        .bind(name)
        .fetch_one(c)
        .await
        .expect("count"))
}

async fn presence_api_registers_refreshes_and_removes_agents(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let user_id = Uuid::now_v7();
    let body = json!({"userId": user_id, "name": "Ann", "email": "ann@acme.test",
                      "role": "ADMIN", "visibility": "PRIVATE"});

    // An unknown user id registers the user (user.created) and goes online.
    let first = app.post("/chat/agent-presence", key, body.clone()).await;
    let first = first.assert_status(200).clone();
    assert_eq!(first["online"], true);
    assert!(first["lastSeen"].as_str().expect("lastSeen").ends_with('Z'));
    let user = supportdesk::users::store::find(&app.state.db, acme.company.id, user_id)
        .await
        .expect("registered");
    assert_eq!((user.name.as_str(), user.role.as_str()), ("Ann", "ADMIN"));
    assert_eq!(count_events(&app, "user.created").await, 1);

    // A heartbeat refreshes; a known user needs only the id.
    let again = app
        .post("/chat/agent-presence", key, json!({"userId": user_id}))
        .await;
    assert_eq!(again.assert_status(200)["online"], true);
    assert_eq!(count_events(&app, "user.created").await, 1);

    let listed = app.get("/chat/agent-presence", key).await;
    let listed = listed.assert_status(200);
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1));
    let entry = &listed["data"][0];
    assert_eq!(entry["userId"], json!(user_id));
    assert_eq!(entry["name"], "Ann");
    assert_eq!(entry["email"], "ann@acme.test");
    assert_eq!(entry["role"], "ADMIN");
    assert_eq!(
        entry["visibility"], "PUBLIC",
        "visibility defaults to PUBLIC"
    );
    assert_eq!(entry["online"], true);

    // Another mode sees nobody.
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let live_list = app.get("/chat/agent-presence", &live).await;
    assert_eq!(live_list.assert_status(200)["data"], json!([]));

    // Removal.
    let removed = app
        .delete(&format!("/chat/agent-presence/{user_id}"), key)
        .await;
    assert_eq!(removed.assert_status(200), &json!({"removed": true}));
    let removed = app
        .delete(&format!("/chat/agent-presence/{user_id}"), key)
        .await;
    assert_eq!(removed.assert_status(200), &json!({"removed": false}));
    let listed = app.get("/chat/agent-presence", key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));

    // Validation.
    for (body, field) in [
        (json!({}), "userId"),
        (json!({"userId": "nope"}), "userId"),
        (json!({"userId": user_id, "role": "agent"}), "role"),
        (
            json!({"userId": user_id, "visibility": "HIDDEN"}),
            "visibility",
        ),
        (json!({"userId": user_id, "email": "x"}), "email"),
        (json!({"userId": Uuid::now_v7(), "name": "Bob"}), "email"),
    ] {
        let refused = app.post("/chat/agent-presence", key, body.clone()).await;
        refused.assert_error(400, "validation_failed");
        assert_eq!(refused.body["details"][0]["field"], field, "for {body}");
    }
    // A new id with a taken email is a conflict.
    app.post(
        "/chat/agent-presence",
        key,
        json!({"userId": Uuid::now_v7(), "name": "Ann 2", "email": "ann@acme.test"}),
    )
    .await
    .assert_error(409, "conflict");
}

async fn chat_routes_need_their_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let reader = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ChatRead]),
        )
        .await;
    let session = new_session(&app, &acme, json!({})).await;
    app.get(&format!("/chat/sessions/{}", id_of(&session)), &reader)
        .await
        .assert_status(200);
    let refused = app
        .post(
            &format!("/chat/sessions/{}/messages", id_of(&session)),
            &reader,
            json!({"body": "x", "senderType": "visitor"}),
        )
        .await;
    refused.assert_error(403, "insufficient_scope");
    assert_eq!(
        refused.body["error"],
        "Missing required permission: chat:write"
    );
    app.post(
        "/chat/agent-presence",
        &reader,
        json!({"userId": Uuid::now_v7()}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    let writer = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ChatWrite]),
        )
        .await;
    app.get("/chat/sessions", &writer)
        .await
        .assert_error(403, "insufficient_scope");
    app.post("/ws/tokens", &writer, json!({}))
        .await
        .assert_error(403, "insufficient_scope");
    for spec in supportdesk::app::api_route_specs() {
        if spec.path.starts_with("/chat") || spec.path.starts_with("/ws") {
            assert!(
                matches!(spec.scope, Scope::ChatRead | Scope::ChatWrite),
                "{spec:?}"
            );
        }
    }
}

// ---------------------------------------------------------------- sockets

async fn socket_handshake_refusals_have_the_rest_shape(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let plain = |token: Option<&str>, key: Option<&str>| {
        let mut url = app.url("/api/v1/ws");
        if let Some(token) = token {
            url.push_str(&format!("?token={token}"));
        }
        let mut request = app.client.get(url);
        if let Some(key) = key {
            request = request.header("X-API-Key", key);
        }
        request.send()
    };
    TestResponse::from(plain(None, None).await)
        .await
        .assert_error(401, "missing_api_key");
    TestResponse::from(plain(None, Some("svc_test_nope")).await)
        .await
        .assert_error(401, "invalid_api_key");
    TestResponse::from(plain(Some("vt_forged"), None).await)
        .await
        .assert_error(401, "invalid_token");
    let no_chat = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::TicketsRead]),
        )
        .await;
    let refused = TestResponse::from(plain(None, Some(&no_chat)).await).await;
    refused.assert_error(403, "insufficient_scope");
    assert_eq!(
        refused.body["error"],
        "Missing required permission: chat:read"
    );
    // Authenticated but not an upgrade.
    TestResponse::from(plain(None, Some(&acme.key)).await)
        .await
        .assert_error(426, "upgrade_required");

    // The same refusals on a real handshake are HTTP errors.
    match Client::try_connect(&app, None, Some("st_forged")).await {
        Err(tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 401);
            let body: Value =
                serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                    .expect("JSON body");
            assert_eq!(body["code"], "invalid_token");
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a forged token opened a socket"),
    }

    // A socket token from POST /ws/tokens works; a key header too.
    let minted = app.post("/ws/tokens", &acme.key, json!({})).await;
    let minted = minted.assert_status(201).clone();
    let token = minted["token"].as_str().expect("token");
    assert!(token.starts_with("st_") && minted["expiresAt"].is_string());
    let mut console = Client::token(&app, token).await;
    console.subscribe("presence").await;
    console.assert_nothing_before_pong().await;
    let mut server = Client::key(&app, &acme.key).await;
    server.assert_nothing_before_pong().await;

    // Bad frames get error frames with REST's codes; the socket stays open.
    server
        .ws
        .send(Message::text("not json"))
        .await
        .expect("sent");
    assert_eq!(server.next().await["code"], "invalid_json");
    server.send(json!({"type": "dance", "id": 7})).await;
    let error = server.next().await;
    assert_eq!(
        (error["type"].as_str(), error["code"].as_str(), &error["id"]),
        (Some("error"), Some("validation_failed"), &json!(7))
    );
    server
        .send(json!({"type": "subscribe", "channel": "tickets"}))
        .await;
    assert_eq!(server.next().await["code"], "validation_failed");
    server
        .send(json!({"type": "subscribe", "channel": format!("session:{}", Uuid::now_v7())}))
        .await;
    assert_eq!(server.next().await["code"], "not_found");
    server.assert_nothing_before_pong().await;
}

async fn a_rest_message_reaches_subscribed_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let mut by_session = Client::key(&app, &acme.key).await;
    by_session.subscribe(&format!("session:{id}")).await;
    let mut by_entity = Client::key(&app, &acme.key).await;
    by_entity
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;

    let sent = app
        .post(
            &format!("/chat/sessions/{id}/messages"),
            &acme.key,
            json!({"body": "Hello", "senderType": "visitor"}),
        )
        .await;
    let sent = sent.assert_status(201).clone();
    let pushed = by_session.next().await;
    assert_eq!(pushed["type"], "chat.message");
    assert_eq!(pushed["channel"], format!("session:{id}"));
    assert_eq!(pushed["data"]["id"], sent["id"]);
    assert_eq!(pushed["data"]["body"], "Hello");
    assert_eq!(pushed["data"]["senderType"], "visitor");
    assert_eq!(pushed["data"]["sessionId"], id.as_str());
    assert_eq!(pushed["data"]["createdAt"], sent["createdAt"]);
    let on_entity = by_entity.next().await;
    assert_eq!(on_entity["type"], "chat.message");
    assert_eq!(on_entity["channel"], format!("entity:{}", acme.entity.id));
    assert_eq!(on_entity["data"]["id"], sent["id"]);

    // Closing pushes chat.session to both.
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    let closed = by_session.next().await;
    assert_eq!(closed["type"], "chat.session");
    assert_eq!(closed["data"]["status"], "CLOSED");
    assert_eq!(closed["data"]["id"], id.as_str());
    assert_eq!(by_entity.next().await["type"], "chat.session");
    // A no-op close pushes nothing.
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    by_session.assert_nothing_before_pong().await;

    // A new session of the entity is announced on the entity channel.
    let fresh = new_session(&app, &acme, json!({"visitorName": "Newcomer"})).await;
    let announced = by_entity.next().await;
    assert_eq!(announced["type"], "chat.session");
    assert_eq!(announced["data"]["id"], fresh["id"]);
    assert!(announced["data"].get("visitorToken").is_none());

    // After unsubscribing nothing more arrives.
    by_session
        .send(json!({"type": "unsubscribe", "channel": format!("session:{id}"), "id": "u"}))
        .await;
    assert_eq!(
        by_session.next().await,
        json!({"type": "unsubscribed", "channel": format!("session:{id}"), "id": "u"})
    );
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "ACTIVE"}),
    )
    .await
    .assert_status(200);
    assert_eq!(by_entity.next().await["data"]["status"], "ACTIVE");
    by_session.assert_nothing_before_pong().await;
}

async fn a_visitor_socket_reads_and_writes_only_its_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let mine = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let theirs = new_session(&app, &acme, json!({})).await;
    let mine_id = id_of(&mine);
    let theirs_id = id_of(&theirs);
    let mut visitor = Client::token(&app, mine["visitorToken"].as_str().expect("token")).await;

    // Reads: its session and presence only.
    visitor.subscribe(&format!("session:{mine_id}")).await;
    visitor
        .send(json!({"type": "subscribe", "channel": format!("session:{theirs_id}"), "id": 1}))
        .await;
    let error = visitor.next().await;
    assert_eq!(
        (&error["code"], &error["id"]),
        (&json!("not_found"), &json!(1))
    );
    visitor
        .send(json!({"type": "subscribe", "channel": format!("entity:{}", acme.entity.id)}))
        .await;
    assert_eq!(visitor.next().await["code"], "insufficient_scope");
    visitor.subscribe("presence").await;

    // An agent's REST reply reaches the visitor, with the agent's name.
    app.post(
        &format!("/chat/sessions/{mine_id}/messages"),
        &acme.key,
        json!({"body": "How can I help?", "senderType": "agent", "senderId": ann}),
    )
    .await
    .assert_status(201);
    let reply = visitor.next().await;
    assert_eq!(reply["type"], "chat.message");
    assert_eq!(reply["data"]["senderName"], "Ann");
    // Messages in another session do not.
    app.post(
        &format!("/chat/sessions/{theirs_id}/messages"),
        &acme.key,
        json!({"body": "Private", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    visitor.assert_nothing_before_pong().await;

    // Writes: its own session only, always as the visitor.
    let mut agent_socket = Client::key(&app, &acme.key).await;
    agent_socket.subscribe(&format!("session:{mine_id}")).await;
    visitor
        .send(
            json!({"type": "message", "body": " My printer is on fire ", "id": "m1",
                     "senderId": ann}),
        )
        .await;
    let ack = visitor.next().await;
    assert_eq!(ack["type"], "chat.message");
    assert_eq!(ack["id"], "m1");
    assert_eq!(ack["data"]["body"], "My printer is on fire");
    assert_eq!(ack["data"]["senderType"], "visitor");
    assert_eq!(ack["data"]["senderId"], Value::Null);
    // The broadcast copy (same message) also reaches the subscribers.
    let copy = visitor.next().await;
    assert_eq!(copy["data"]["id"], ack["data"]["id"]);
    assert!(copy.get("id").is_none());
    assert_eq!(agent_socket.next().await["data"]["id"], ack["data"]["id"]);

    visitor
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "sneaky"}))
        .await;
    assert_eq!(visitor.next().await["code"], "not_found");
    visitor.send(json!({"type": "message", "body": ""})).await;
    assert_eq!(visitor.next().await["code"], "validation_failed");
    let read = app
        .get(&format!("/chat/sessions/{theirs_id}"), &acme.key)
        .await;
    let messages = read.assert_status(200)["messages"].clone();
    assert_eq!(
        messages.as_array().map(Vec::len),
        Some(1),
        "no sneaky message"
    );

    // Closed session: the visitor gets session_closed.
    app.patch(
        &format!("/chat/sessions/{mine_id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    assert_eq!(
        visitor.next_of("chat.session").await["data"]["status"],
        "CLOSED"
    );
    assert_eq!(agent_socket.next().await["type"], "chat.session");
    visitor
        .send(json!({"type": "message", "body": "hello?"}))
        .await;
    assert_eq!(visitor.next().await["code"], "session_closed");

    // An agent socket posts with a senderId, and needs chat:write.
    let reader = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ChatRead]),
        )
        .await;
    let mut read_only = Client::key(&app, &reader).await;
    read_only
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "x", "senderId": ann}))
        .await;
    assert_eq!(read_only.next().await["code"], "insufficient_scope");
    agent_socket
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "x"}))
        .await;
    assert_eq!(agent_socket.next().await["code"], "validation_failed");
    agent_socket
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "On it", "senderId": ann}))
        .await;
    let sent = agent_socket.next().await;
    assert_eq!(sent["data"]["senderType"], "agent");
    assert_eq!(sent["data"]["senderName"], "Ann");
}

async fn typing_reaches_the_other_side(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let mut visitor = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    visitor.subscribe(&format!("session:{id}")).await;
    let mut console = Client::key(&app, &acme.key).await;
    console
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;

    visitor.send(json!({"type": "typing"})).await;
    let typing = console.next().await;
    assert_eq!(typing["type"], "typing");
    assert_eq!(typing["channel"], format!("entity:{}", acme.entity.id));
    assert_eq!(
        typing["data"],
        json!({"sessionId": id, "senderType": "visitor", "senderId": null})
    );

    console
        .send(json!({"type": "typing", "sessionId": id, "senderId": ann}))
        .await;
    // The visitor sees its own typing echo first, then the agent's.
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let frame = visitor.next().await;
        assert_eq!(frame["type"], "typing");
        seen.push(
            frame["data"]["senderType"]
                .as_str()
                .expect("type")
                .to_string(),
        );
    }
    assert_eq!(seen, ["visitor", "agent"]);
}

async fn presence_transitions_are_pushed_and_private_agents_hidden(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    let mut visitor = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    visitor.subscribe("presence").await;

    let ann = Uuid::now_v7();
    let beat = json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"});
    app.post("/chat/agent-presence", &acme.key, beat.clone())
        .await
        .assert_status(200);
    for socket in [&mut console, &mut visitor] {
        let online = socket.next().await;
        assert_eq!(online["type"], "presence");
        assert_eq!(online["channel"], "presence");
        assert_eq!(online["data"]["userId"], json!(ann));
        assert_eq!(online["data"]["name"], "Ann");
        assert_eq!(online["data"]["online"], true);
        assert_eq!(online["data"]["visibility"], "PUBLIC");
        assert!(online["data"]["lastSeen"].is_string());
    }

    // A heartbeat that changes nothing pushes nothing.
    app.post("/chat/agent-presence", &acme.key, json!({"userId": ann}))
        .await
        .assert_status(200);
    console.assert_nothing_before_pong().await;
    visitor.assert_nothing_before_pong().await;

    // A PRIVATE agent: agents see it, visitors never do.
    let bob = Uuid::now_v7();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({"userId": bob, "name": "Bob", "email": "bob@acme.test", "visibility": "PRIVATE"}),
    )
    .await
    .assert_status(200);
    let private = console.next().await;
    assert_eq!(private["data"]["userId"], json!(bob));
    assert_eq!(private["data"]["visibility"], "PRIVATE");
    visitor.assert_nothing_before_pong().await;

    // A late subscriber gets a snapshot of who is online.
    let mut late_visitor =
        Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    late_visitor.subscribe("presence").await;
    let snapshot = late_visitor.next().await;
    assert_eq!(snapshot["data"]["userId"], json!(ann));
    late_visitor.assert_nothing_before_pong().await;

    // DELETE pushes offline (to visitors only for public agents).
    app.delete(&format!("/chat/agent-presence/{bob}"), &acme.key)
        .await
        .assert_status(200);
    let gone = console.next().await;
    assert_eq!(
        (&gone["data"]["userId"], &gone["data"]["online"]),
        (&json!(bob), &json!(false))
    );
    visitor.assert_nothing_before_pong().await;
    app.delete(&format!("/chat/agent-presence/{ann}"), &acme.key)
        .await
        .assert_status(200);
    for socket in [&mut console, &mut visitor] {
        let offline = socket.next().await;
        assert_eq!(offline["data"]["userId"], json!(ann));
        assert_eq!(offline["data"]["online"], false);
    }
    // Removing an absent agent pushes nothing.
    app.delete(&format!("/chat/agent-presence/{ann}"), &acme.key)
        .await
        .assert_status(200);
    console.assert_nothing_before_pong().await;
}

async fn presence_expiry_is_pushed(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.presence_ttl = Duration::from_secs(2)).await;
    let acme = app.company().await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    let ann = Uuid::now_v7();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"}),
    )
    .await
    .assert_status(200);
    assert_eq!(console.next().await["data"]["online"], true);
    let sent_at = std::time::Instant::now();

    // No more heartbeats: the sweeper announces the expiry.
    let offline = console.next().await;
    assert_eq!(offline["type"], "presence");
    assert_eq!(offline["data"]["userId"], json!(ann));
    assert_eq!(offline["data"]["online"], false);
    assert!(
        sent_at.elapsed() >= Duration::from_millis(1500),
        "not before the TTL"
    );
    let listed = app.get("/chat/agent-presence", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
    // Exactly once.
    console.assert_nothing_before_pong().await;

    // Coming back after expiry is a new online transition.
    app.post("/chat/agent-presence", &acme.key, json!({"userId": ann}))
        .await
        .assert_status(200);
    assert_eq!(console.next().await["data"]["online"], true);
}

async fn sockets_are_isolated_by_mode(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let live_key = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let mut test_socket = Client::key(&app, &acme.key).await;
    let mut live_socket = Client::key(&app, &live_key).await;
    let entity = format!("entity:{}", acme.entity.id);
    for socket in [&mut test_socket, &mut live_socket] {
        socket.subscribe(&entity).await;
        socket.subscribe("presence").await;
    }

    // A LIVE session's message and a LIVE agent reach only the LIVE socket.
    let live_session = app
        .post(
            "/chat/sessions",
            &live_key,
            json!({"entityId": acme.entity.id}),
        )
        .await;
    let live_session = live_session.assert_status(201).clone();
    assert_eq!(live_socket.next().await["type"], "chat.session");
    app.post(
        &format!("/chat/sessions/{}/messages", id_of(&live_session)),
        &live_key,
        json!({"body": "live", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    assert_eq!(live_socket.next().await["data"]["body"], "live");
    app.post(
        "/chat/agent-presence",
        &live_key,
        json!({"userId": Uuid::now_v7(), "name": "Liv", "email": "liv@acme.test"}),
    )
    .await
    .assert_status(200);
    assert_eq!(live_socket.next().await["type"], "presence");
    test_socket.assert_nothing_before_pong().await;

    // A TEST socket cannot subscribe to a LIVE session.
    test_socket
        .send(json!({"type": "subscribe", "channel": format!("session:{}", id_of(&live_session))}))
        .await;
    assert_eq!(test_socket.next().await["code"], "not_found");
}

async fn two_nodes_share_messages_and_presence(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let session = new_session(&node_a, &acme, json!({})).await;
    let id = id_of(&session);
    let mut on_a = Client::key(&node_a, &acme.key).await;
    on_a.subscribe(&format!("session:{id}")).await;
    on_a.subscribe("presence").await;

    // Posted on B (the shared database has the session).
    node_b
        .post(
            &format!("/chat/sessions/{id}/messages"),
            &acme.key,
            json!({"body": "via B", "senderType": "visitor"}),
        )
        .await
        .assert_status(201);
    let ann = Uuid::now_v7();
    node_b
        .post(
            "/chat/agent-presence",
            &acme.key,
            json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"}),
        )
        .await
        .assert_status(200);

    if node_a.config.redis_url.is_none() {
        // Without Redis each node is alone: nothing crosses to node A.
        on_a.assert_nothing_before_pong().await;
        eprintln!("cross-node delivery needs Redis: checked on the postgres backend");
        return;
    }
    let message = on_a.next().await;
    assert_eq!(message["type"], "chat.message");
    assert_eq!(message["data"]["body"], "via B");
    let online = on_a.next().await;
    assert_eq!(online["type"], "presence");
    assert_eq!(online["data"]["userId"], json!(ann));
    let listed = node_a.get("/chat/agent-presence", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"][0]["userId"], json!(ann));

    // A visitor token minted on A opens a socket on B (same secret).
    let mut visitor_on_b =
        Client::token(&node_b, session["visitorToken"].as_str().expect("token")).await;
    visitor_on_b.subscribe(&format!("session:{id}")).await;
    visitor_on_b
        .send(json!({"type": "message", "body": "from B's socket"}))
        .await;
    assert_eq!(visitor_on_b.next().await["type"], "chat.message");
    assert_eq!(on_a.next().await["data"]["body"], "from B's socket");
}

async fn reconnecting_with_since_replays_exactly_the_missed_messages(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let token = session["visitorToken"].as_str().expect("token").to_string();
    let post = |body: &str| {
        let path = format!("/chat/sessions/{id}/messages");
        let body = json!({"body": body, "senderType": "system"});
        let (app, key) = (&app, &acme.key);
        async move { app.post(&path, key, body).await }
    };
    let mut visitor = Client::token(&app, &token).await;
    visitor.subscribe(&format!("session:{id}")).await;
    post("one").await.assert_status(201);
    let seen = visitor.next().await;
    assert_eq!(seen["data"]["body"], "one");
    let last_seen = seen["data"]["id"].as_str().expect("id").to_string();
    drop(visitor);

    // Missed while disconnected.
    let mut missed = Vec::new();
    for body in ["two", "three", "four"] {
        missed.push(id_of(post(body).await.assert_status(201)));
    }

    let mut visitor = Client::token(&app, &token).await;
    visitor
        .send(
            json!({"type": "subscribe", "channel": format!("session:{id}"),
                     "since": last_seen, "id": "r"}),
        )
        .await;
    assert_eq!(
        visitor.next().await,
        json!({"type": "subscribed", "channel": format!("session:{id}"), "id": "r"})
    );
    let mut replayed = Vec::new();
    for _ in 0..missed.len() {
        let frame = visitor.next().await;
        assert_eq!(frame["type"], "chat.message");
        assert_eq!(frame["channel"], format!("session:{id}"));
        replayed.push(frame["data"]["id"].as_str().expect("id").to_string());
    }
    assert_eq!(replayed, missed, "exactly the missed messages, in order");
    visitor.assert_nothing_before_pong().await;
    // Live messages continue after the replay.
    post("five").await.assert_status(201);
    assert_eq!(visitor.next().await["data"]["body"], "five");

    // `since` must be a message of the channel.
    let other = new_session(&app, &acme, json!({})).await;
    let mut agent_socket = Client::key(&app, &acme.key).await;
    agent_socket
        .send(
            json!({"type": "subscribe", "channel": format!("session:{}", id_of(&other)),
                     "since": last_seen}),
        )
        .await;
    let error = agent_socket.next().await;
    assert_eq!(error["code"], "validation_failed");
    // An entity channel replays the entity's messages after `since`.
    agent_socket
        .send(
            json!({"type": "subscribe", "channel": format!("entity:{}", acme.entity.id),
                     "since": missed[2]}),
        )
        .await;
    assert_eq!(agent_socket.next().await["type"], "subscribed");
    assert_eq!(agent_socket.next().await["data"]["body"], "five");
    agent_socket.assert_nothing_before_pong().await;
}

async fn a_socket_that_stops_reading_is_closed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let hub = app.state.realtime.hub.clone();
    let mut slow = Client::key(&app, &acme.key).await;
    slow.subscribe("presence").await;
    assert_eq!(hub.connections(), 1);
    let topic = Topic::new(tenant(&acme), HubChannel::Presence);
    let payload: std::sync::Arc<str> = format!(
        "{{\"type\":\"presence\",\"channel\":\"presence\",\"pad\":\"{}\"}}",
        "x".repeat(32 * 1024)
    )
    .into();
    let message = BusMessage {
        topic: topic.bus_topic(None),
        payload,
    };

    // The client never reads. Events are dispatched straight into the hub,
    // as the bus would (4 000 × 32 KiB: 128 MiB if it were all buffered).
    let total = 4_000usize;
    let mut accepted = 0usize;
    for i in 0..total {
        accepted += app.state.realtime.dispatch(&message);
        if i % 50 == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if hub.connections() == 0 {
            break;
        }
    }
    eventually("the slow socket is dropped", || async {
        hub.connections() == 0
    })
    .await;
    assert_eq!(hub.subscribers(&topic), 0);
    // What the socket took is bounded (kernel buffers plus its queue); the
    // rest was refused rather than buffered.
    assert!(accepted < total, "accepted {accepted} of {total}");

    // Reading again, the client finds the close frame 1013 after what the
    // kernel had buffered.
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(frame) = slow.ws.next().await {
            match frame {
                Ok(Message::Close(frame)) => return frame.map(|f| f.code),
                Ok(_) => continue,
                Err(err) => {
                    eprintln!("read error: {err}");
                    return None;
                }
            }
        }
        None
    })
    .await
    .expect("closed before the timeout");
    assert_eq!(closed, Some(CloseCode::Again), "closed with 1013");
}

async fn a_thousand_sockets_each_receive_the_message(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let token = session["visitorToken"].as_str().expect("token").to_string();
    let channel = format!("session:{id}");

    let count = 1_000;
    let clients: Vec<Client> = futures::stream::iter(0..count)
        .map(|_| {
            let (app, token, channel) = (&app, token.clone(), channel.clone());
            async move {
                let mut client = Client::token(app, &token).await;
                client.subscribe(&channel).await;
                client
            }
        })
        .buffer_unordered(50)
        .collect()
        .await;
    let topic = Topic::new(
        tenant(&acme),
        HubChannel::Session(Uuid::parse_str(&id).expect("id")),
    );
    assert_eq!(app.state.realtime.hub.subscribers(&topic), count);

    let sent = app
        .post(
            &format!("/chat/sessions/{id}/messages"),
            &acme.key,
            json!({"body": "Hello, everyone", "senderType": "system"}),
        )
        .await;
    let message_id = sent.assert_status(201)["id"].clone();
    let received: Vec<Value> = futures::stream::iter(clients)
        .map(|mut client| async move {
            let frame = client.next().await;
            client.assert_nothing_before_pong().await;
            frame
        })
        .buffer_unordered(100)
        .collect()
        .await;
    assert_eq!(received.len(), count);
    for frame in received {
        assert_eq!(frame["type"], "chat.message");
        assert_eq!(frame["data"]["id"], message_id);
    }
}

async fn shutdown_closes_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut socket = Client::key(&app, &acme.key).await;
    socket.subscribe("presence").await;
    let hub = app.state.realtime.hub.clone();
    app.shutdown_handle().trigger();
    let closed = tokio::time::timeout(WAIT, async {
        while let Some(frame) = socket.ws.next().await {
            if let Ok(Message::Close(frame)) = frame {
                return frame.map(|f| f.code);
            }
        }
        None
    })
    .await
    .expect("closed");
    assert_eq!(closed, Some(CloseCode::Away), "closed with 1001");
    tokio::time::timeout(Duration::from_secs(15), app.stop())
        .await
        .expect("the server stops with a socket open");
    eventually("the socket is gone", || async { hub.connections() == 0 }).await;
}
