//! Chat and realtime: sessions, messages, agent presence, and the socket
//! (`/api/v1/ws`) on one node and across nodes. Redis-specific behaviour
//! (presence in Redis, fan-out between nodes) runs on the postgres backend
//! when `TEST_REDIS_URL` is set; the sqlite backend runs the in-process
//! versions of the same tests.
//!
//! `chat` holds the REST tests and the shared helpers; `sockets` the socket
//! protocol (messages, typing), `socket_access` who may connect and what a
//! mode sees, `socket_presence` presence pushes and expiry, `socket_replay`
//! replay after a reconnect; `limits` frame rate limits and socket caps;
//! `scale` fan-out across nodes, slow sockets, many sockets; `credentials`
//! sockets closing when their key or company stops being valid.

pub(crate) mod client;
mod client_ids;
pub(crate) mod credentials;
mod frame_limits;
mod limits;
mod presence;
pub(crate) mod scale;
mod socket_access;
pub(crate) mod socket_presence;
mod socket_replay;
mod sockets;
mod visitor_view;

use std::time::Duration;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};
use supportdesk::users::store::NewUser;
use uuid::Uuid;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    sessions_are_created_listed_and_read,
    messages_are_validated_stored_and_closed_sessions_refuse_them,
    an_agent_reply_emails_the_visitor_a_link_back,
    presence_api_registers_refreshes_and_removes_agents,
    chat_routes_need_their_scopes,
);

// ---------------------------------------------------------------- helpers

pub const WAIT: Duration = Duration::from_secs(10);

pub fn tenant(acme: &TestCompany) -> Tenant {
    Tenant::new(acme.company.id, Mode::Test)
}

pub async fn new_session(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    let mut body = body;
    if body.get("entityId").is_none() {
        body["entityId"] = json!(acme.entity.id);
    }
    app.post("/chat/sessions", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

pub async fn agent(app: &TestApp, acme: &TestCompany, name: &str) -> Uuid {
    supportdesk::users::store::create(
        &app.state.db,
        &tenant(acme),
        NewUser {
            id: None,
            name: name.into(),
            email: format!("{}@acme.test", name.to_lowercase()),
            role: supportdesk::users::Role::Agent.into(),
        },
        app.state.clock.now(),
    )
    .await
    .expect("user")
    .id
}

pub fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
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

pub async fn queued_emails(app: &TestApp) -> Vec<Value> {
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
    // The service's own chat page, with a one-time link token (never the
    // visitor token).
    let link = format!(
        "{}/widget/frame.html#session={}&link=vl_",
        app.state.public_url,
        id_of(&session),
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
