//! Sockets obey their credentials for their whole life: a socket token is
//! refused once its key is, and open sockets (by key header or socket
//! token, on the node that made the change and on another) close with
//! 4401/4403 when their key is revoked, deactivated, loses `chat:read`,
//! expires, or their company is suspended. A key that loses only
//! `chat:write` keeps its sockets but may no longer write through them.

use std::time::Duration;

use axum::extract::FromRef;
use clap::Parser;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};
use supportdesk::chat::model::{MessageInput, OutgoingMessage, SenderType, SenderTypeInput};
use supportdesk::keys::NewKey;
use supportdesk::time::Timestamp;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite;
use uuid::Uuid;

use super::client::Client;
use super::{agent, id_of, new_session, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, eventually_within};

backend_tests!(
    revoking_a_key_closes_its_sockets_on_every_node,
    deactivating_a_key_closes_its_sockets_on_every_node,
    cutting_chat_read_closes_a_keys_sockets_on_every_node,
    a_key_expiring_closes_its_sockets_at_expiry,
    suspending_a_company_closes_agent_and_visitor_sockets,
    losing_chat_write_keeps_the_socket_but_refuses_its_writes,
    a_socket_token_handshake_spends_its_keys_allowance,
    a_key_revoked_with_the_cli_closes_its_sockets,
);

/// The stated bound: a change reaches every socket within 2 s over the bus.
pub(crate) const BUS_DEADLINE: Duration = Duration::from_secs(2);
/// Without Redis another node finds the change by itself, within the key
/// cache's lifetime.
const RECHECK_DEADLINE: Duration = Duration::from_secs(10);

/// A key of acme's with `scopes` (and an expiry), and its id.
async fn new_key(
    app: &TestApp,
    acme: &TestCompany,
    scopes: ScopeSet,
    expires_at: Option<Timestamp>,
) -> (Uuid, String) {
    let (record, key) = supportdesk::keys::store::create(
        &app.state.db,
        NewKey {
            company_id: acme.company.id,
            name: "console".into(),
            mode: Mode::Test,
            scopes,
            rate_limit: 1000,
            expires_at,
        },
        app.state.clock.now(),
    )
    .await
    .expect("key");
    (record.id, key)
}

pub(crate) struct Watched {
    label: &'static str,
    on_peer: bool,
    client: Client,
}

/// Sockets of `key` by header and by a socket token, on `a` and on `b`, all
/// subscribed to `session`; and the socket token.
async fn open_key_sockets(
    a: &TestApp,
    b: &TestApp,
    key: &str,
    session: &str,
) -> (Vec<Watched>, String) {
    let minted = a.post("/ws/tokens", key, json!({})).await;
    let token = minted.assert_status(201)["token"]
        .as_str()
        .expect("token")
        .to_string();
    let mut sockets = vec![
        Watched {
            label: "header on this node",
            on_peer: false,
            client: Client::key(a, key).await,
        },
        Watched {
            label: "token on this node",
            on_peer: false,
            client: Client::token(a, &token).await,
        },
        Watched {
            label: "header on the other node",
            on_peer: true,
            client: Client::key(b, key).await,
        },
        Watched {
            label: "token on the other node",
            on_peer: true,
            client: Client::token(b, &token).await,
        },
    ];
    for socket in &mut sockets {
        socket.client.subscribe(&format!("session:{session}")).await;
    }
    (sockets, token)
}

/// Visitor sockets of the session's token on `a` and `b`.
pub(crate) async fn open_visitor_sockets(
    a: &TestApp,
    b: &TestApp,
    session: &Value,
) -> Vec<Watched> {
    let token = session["visitorToken"].as_str().expect("visitor token");
    let channel = format!("session:{}", id_of(session));
    let mut sockets = vec![
        Watched {
            label: "visitor on this node",
            on_peer: false,
            client: Client::token(a, token).await,
        },
        Watched {
            label: "visitor on the other node",
            on_peer: true,
            client: Client::token(b, token).await,
        },
    ];
    for socket in &mut sockets {
        socket.client.subscribe(&channel).await;
    }
    sockets
}

/// A message posted in the session (straight through the service, so it
/// needs no credentials that may just have been suspended).
pub(crate) async fn post_message(app: &TestApp, acme: &TestCompany, session: &str) {
    let outgoing = OutgoingMessage::parse(MessageInput {
        body: Some("posted after the change"),
        sender_type: SenderTypeInput::Fixed(SenderType::Visitor),
        sender_id: None,
        client_message_id: None,
        attachment_ids: None,
    })
    .expect("message");
    let session_id = Uuid::parse_str(session).expect("session id");
    supportdesk::chat::service::send_message(
        &supportdesk::chat::ChatDeps::from_ref(&app.state),
        &supportdesk::actor::Actor::system(),
        &tenant(acme),
        session_id,
        outgoing,
    )
    .await
    .expect("message sent");
}

/// Every socket's next frame is a close with `code` and `reason`, by the
/// deadline that applies to it (counted from `changed`): nothing posted
/// after the change reached it first.
pub(crate) async fn assert_closed(
    app: &TestApp,
    sockets: &mut [Watched],
    changed: Instant,
    code: u16,
    reason: &str,
) {
    for socket in sockets {
        let bound = if socket.on_peer && app.config.redis_url.is_none() {
            RECHECK_DEADLINE
        } else {
            BUS_DEADLINE
        };
        let closed = socket.client.closed_by(changed + bound).await;
        assert_eq!(
            closed,
            (code, reason.to_string()),
            "socket by {}",
            socket.label
        );
    }
}

/// The handshake with `token` on `app` is refused with `status` and `code`.
async fn assert_refused(app: &TestApp, token: &str, status: u16, code: &str) {
    match Client::try_connect(app, None, Some(token)).await {
        Err(tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), status);
            let body: Value =
                serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                    .expect("JSON body");
            assert_eq!(body["code"], code, "{body}");
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("the socket token opened a socket"),
    }
}

/// Opens the key's sockets on two nodes, applies `change` on the first
/// (through the API with the company's admin key), posts a message at
/// once, and expects every socket closed with 4401 `reason` and the socket
/// token refused with `status`/`code`.
async fn key_change_closes_sockets(
    backend: Backend,
    change: impl AsyncFnOnce(&TestApp, &TestCompany, Uuid),
    reason: &str,
    refusal: (u16, &str),
) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let session = id_of(&new_session(&node_a, &acme, json!({})).await);
    let (key_id, key) = new_key(&node_a, &acme, ScopeSet::all(), None).await;
    let (mut sockets, token) = open_key_sockets(&node_a, &node_b, &key, &session).await;

    change(&node_a, &acme, key_id).await;
    let changed = Instant::now();
    post_message(&node_a, &acme, &session).await;

    assert_closed(&node_a, &mut sockets, changed, 4401, reason).await;
    assert_refused(&node_a, &token, refusal.0, refusal.1).await;
}

pub(crate) async fn revoking_a_key_closes_its_sockets_on_every_node(backend: Backend) {
    let revoke = async |app: &TestApp, acme: &TestCompany, id: Uuid| {
        app.delete(&format!("/api-keys/{id}"), &acme.key)
            .await
            .assert_status(204);
    };
    key_change_closes_sockets(backend, revoke, "key revoked", (401, "invalid_api_key")).await;
}

async fn deactivating_a_key_closes_its_sockets_on_every_node(backend: Backend) {
    let deactivate = async |app: &TestApp, acme: &TestCompany, id: Uuid| {
        app.patch(
            &format!("/api-keys/{id}"),
            &acme.key,
            json!({"isActive": false}),
        )
        .await
        .assert_status(200);
    };
    key_change_closes_sockets(
        backend,
        deactivate,
        "key deactivated",
        (401, "invalid_api_key"),
    )
    .await;
}

pub(crate) async fn cutting_chat_read_closes_a_keys_sockets_on_every_node(backend: Backend) {
    let cut = async |app: &TestApp, acme: &TestCompany, id: Uuid| {
        app.patch(
            &format!("/api-keys/{id}"),
            &acme.key,
            json!({"scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(200);
    };
    key_change_closes_sockets(backend, cut, "scope removed", (403, "insufficient_scope")).await;
}

async fn a_key_expiring_closes_its_sockets_at_expiry(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let session = id_of(&new_session(&node_a, &acme, json!({})).await);
    let lifetime = Duration::from_secs(2);
    let expires_at = Timestamp::now().plus(lifetime);
    let expiry = Instant::now() + lifetime;
    let (_, key) = new_key(&node_a, &acme, ScopeSet::all(), Some(expires_at)).await;
    let (mut sockets, token) = open_key_sockets(&node_a, &node_b, &key, &session).await;

    // Each node's own timer closes them: no change is announced.
    for socket in &mut sockets {
        let closed = socket.client.closed_by(expiry + BUS_DEADLINE).await;
        assert_eq!(
            closed,
            (4401, "key expired".to_string()),
            "socket by {}",
            socket.label
        );
    }
    assert_refused(&node_a, &token, 401, "expired_api_key").await;
    assert_refused(&node_b, &token, 401, "expired_api_key").await;
}

pub(crate) async fn suspending_a_company_closes_agent_and_visitor_sockets(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let created = new_session(&node_a, &acme, json!({})).await;
    let session = id_of(&created);
    let (_, key) = new_key(&node_a, &acme, ScopeSet::all(), None).await;
    let (mut agents, token) = open_key_sockets(&node_a, &node_b, &key, &session).await;
    let mut visitors = open_visitor_sockets(&node_a, &node_b, &created).await;

    node_a.set_suspended(acme.company.id, true).await;
    let changed = Instant::now();
    post_message(&node_a, &acme, &session).await;

    assert_closed(&node_a, &mut agents, changed, 4401, "company suspended").await;
    assert_closed(&node_a, &mut visitors, changed, 4403, "company suspended").await;
    assert_refused(&node_a, &token, 403, "account_suspended").await;
    let visitor_token = created["visitorToken"].as_str().expect("visitor token");
    assert_refused(&node_a, visitor_token, 403, "account_suspended").await;
}

async fn losing_chat_write_keeps_the_socket_but_refuses_its_writes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = id_of(&new_session(&app, &acme, json!({})).await);
    let ann = agent(&app, &acme, "Ann").await;
    let (key_id, key) = new_key(&app, &acme, ScopeSet::all(), None).await;
    let mut socket = Client::key(&app, &key).await;
    let message = |id: u32| json!({"type": "message", "id": id, "sessionId": session, "body": "hi", "senderId": ann});
    socket.send(message(0)).await;
    assert_eq!(socket.next().await["type"], "chat.message");

    let kept: Vec<&str> = ScopeSet::all()
        .iter()
        .filter(|s| *s != Scope::ChatWrite)
        .map(|s| s.as_str())
        .collect();
    app.patch(
        &format!("/api-keys/{key_id}"),
        &acme.key,
        json!({"scopes": kept}),
    )
    .await
    .assert_status(200);

    // The change reaches the socket through the bus: poll until it has.
    let mut attempt = 1;
    let refused = eventually_within("a write refused", BUS_DEADLINE, async || {
        socket.send(message(attempt)).await;
        let reply = socket.next().await;
        if reply["type"] == "error" {
            return Some(reply);
        }
        assert_eq!(reply["type"], "chat.message", "{reply}");
        attempt += 1;
        None
    })
    .await;
    assert_eq!(refused["code"], "insufficient_scope", "{refused}");
    assert_eq!(refused["id"], attempt);
    socket
        .send(json!({"type": "typing", "id": "t", "sessionId": session, "senderId": ann}))
        .await;
    let typing = socket.next().await;
    assert_eq!(
        (typing["type"].as_str(), typing["code"].as_str()),
        (Some("error"), Some("insufficient_scope"))
    );
    // Reading still works: the socket stays open.
    socket.subscribe(&format!("session:{session}")).await;
    socket.assert_nothing_before_pong().await;
}

async fn a_socket_token_handshake_spends_its_keys_allowance(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let two_requests = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 2)
        .await;
    let minted = app.post("/ws/tokens", &two_requests, json!({})).await;
    let token = minted.assert_status(201)["token"]
        .as_str()
        .expect("token")
        .to_string();
    // Minting spent one request, this handshake the other.
    let mut first = Client::token(&app, &token).await;
    first.assert_nothing_before_pong().await;
    assert_refused(&app, &token, 429, "rate_limited").await;
}

async fn a_key_revoked_with_the_cli_closes_its_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = id_of(&new_session(&app, &acme, json!({})).await);
    let (key_id, key) = new_key(&app, &acme, ScopeSet::all(), None).await;
    let mut socket = Client::key(&app, &key).await;
    socket.subscribe(&format!("session:{session}")).await;

    let id = key_id.to_string();
    let mut args = vec![
        "supportdesk",
        "keys",
        "--database-url",
        &app.config.database_url,
        "--redis-prefix",
        &app.config.redis_prefix,
    ];
    if let Some(url) = &app.config.redis_url {
        args.extend(["--redis-url", url]);
    }
    args.extend(["revoke", &id]);
    supportdesk::cli::run(supportdesk::cli::Cli::parse_from(args))
        .await
        .expect("the CLI revokes the key");
    let changed = Instant::now();

    // Over Redis the CLI tells the nodes; without, the node's re-check finds it.
    let bound = if app.config.redis_url.is_some() {
        BUS_DEADLINE
    } else {
        RECHECK_DEADLINE
    };
    let closed = socket.closed_by(changed + bound).await;
    assert_eq!(closed, (4401, "key revoked".to_string()));
}
