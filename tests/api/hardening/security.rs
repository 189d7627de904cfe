//! Security review items: tenant isolation on every route of the route
//! table, no secrets in the service's log, constant-time secret checks.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::procs::{ServiceProcess, free_port};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(another_tenants_ids_are_404_on_every_route);

fn id(r: &TestResponse) -> String {
    r.body["id"]
        .as_str()
        .unwrap_or_else(|| panic!("an id in {}", r.text))
        .to_string()
}

/// A body that passes validation for each write route, so the request gets
/// as far as looking the record up. A route missing here fails the test
/// (with a 400), so new routes are added to the table.
fn valid_body(method: &Method, path: &str, other_user: &str) -> Option<Value> {
    let body = match (method.as_str(), path) {
        ("PATCH", "/entities/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/users/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/api-keys/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/tickets/{id}") => json!({"status": "CLOSED"}),
        ("POST", "/tickets/{id}/escalate") => json!({"escalateToId": other_user}),
        ("POST", "/tickets/{id}/comments") => json!({"body": "Hi"}),
        ("POST", "/tickets/{id}/tags") => json!({"add": ["b-was-here"]}),
        ("POST", "/chat/sessions/{id}/tags") => json!({"add": ["b-was-here"]}),
        ("PATCH", "/kb/articles/{id}") => json!({"title": "Renamed"}),
        ("POST", "/kb/articles/{id}/helpful") => json!({"helpful": true}),
        ("PATCH", "/kb/categories/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/company/webhooks/{id}") => json!({"name": "Renamed"}),
        ("POST", "/company/webhooks/{id}/rotate-secret") => json!({}),
        ("PATCH", "/chat/sessions/{id}") => json!({"status": "CLOSED"}),
        ("PATCH", "/settings/custom-fields/{key}") => json!({"label": "Renamed"}),
        ("PATCH", "/settings/business-hours/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/teams/{id}") => json!({"name": "Renamed"}),
        ("POST", "/chat/sessions/{id}/messages") => {
            json!({"body": "Hi", "senderType": "visitor"})
        }
        _ => return None,
    };
    Some(body)
}

async fn call(
    app: &TestApp,
    method: &Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> TestResponse {
    let mut request = app.api(method.clone(), path, Some(key));
    if let Some(body) = body {
        request = request.json(&body);
    }
    TestResponse::from(request.send().await).await
}

/// Company A's records, one of each kind a path can name.
async fn records_of(app: &TestApp, key: &str, entity: &str) -> BTreeMap<&'static str, String> {
    let mut ids = BTreeMap::new();
    ids.insert("entity", entity.to_string());
    let user = app
        .post(
            "/users",
            key,
            json!({"name": "Agent A", "email": "a@a.example"}),
        )
        .await;
    ids.insert("user", id(&user));
    let other_key = app
        .post(
            "/api-keys",
            key,
            json!({"name": "A's key", "scopes": ["tickets:read"]}),
        )
        .await;
    ids.insert("key", id(&other_key));
    let ticket = app
        .post(
            "/tickets",
            key,
            json!({"subject": "A's ticket", "entityId": entity}),
        )
        .await;
    ids.insert("ticket", id(&ticket));
    let category = app
        .post(
            "/kb/categories",
            key,
            json!({"name": "A's category", "entityId": entity}),
        )
        .await;
    ids.insert("category", id(&category));
    let article = app
        .post(
            "/kb/articles",
            key,
            json!({"title": "A's article", "entityId": entity, "isPublished": true}),
        )
        .await;
    ids.insert("article", id(&article));
    let webhook = app
        .post(
            "/company/webhooks",
            key,
            json!({"name": "A's hook", "url": "http://127.0.0.1:9/a", "events": ["ticket.created"]}),
        )
        .await;
    let webhook = id(&webhook);
    let delivery = app
        .post(&format!("/company/webhooks/{webhook}/test"), key, json!({}))
        .await;
    ids.insert("delivery", id(&delivery));
    ids.insert("webhook", webhook);
    let session = app
        .post("/chat/sessions", key, json!({"entityId": entity}))
        .await;
    ids.insert("session", id(&session));
    let team = app
        .post(
            "/teams",
            key,
            json!({"name": "A's team", "memberIds": [ids["user"]]}),
        )
        .await;
    ids.insert("team", id(&team));
    app.post(
        "/settings/custom-fields",
        key,
        json!({"key": "a_only_field", "label": "A's field", "type": "text",
               "appliesTo": ["ticket"]}),
    )
    .await
    .assert_status(201);
    ids.insert("custom field", "a_only_field".to_string());
    let calendar = app
        .post(
            "/settings/business-hours",
            key,
            json!({"name": "A's hours", "timezone": "UTC",
                   "weekly": [{"day": "mon", "open": "09:00", "close": "17:00"}]}),
        )
        .await;
    ids.insert("business hours", id(&calendar));
    let attachment = TestResponse::from(
        app.api(Method::POST, "/attachments?filename=a.txt", Some(key))
            .body("A's file")
            .send()
            .await,
    )
    .await;
    ids.insert("attachment", id(&attachment));
    app.post(
        "/chat/agent-presence",
        key,
        json!({"userId": ids["user"], "name": "Agent A", "email": "a@a.example"}),
    )
    .await
    .assert_status(200);
    ids
}

/// Which record each path parameter names.
fn fill(path: &str, ids: &BTreeMap<&'static str, String>) -> String {
    let kind = match path.split('/').nth(1).unwrap_or("") {
        "entities" => "entity",
        "users" => "user",
        "api-keys" => "key",
        "tickets" => "ticket",
        "company" => "webhook",
        "chat" if path.starts_with("/chat/sessions") => "session",
        "chat" => "user",
        "kb" if path.starts_with("/kb/articles") => "article",
        "kb" => "category",
        "settings" if path.starts_with("/settings/custom-fields") => "custom field",
        "settings" if path.starts_with("/settings/business-hours") => "business hours",
        "teams" => "team",
        "attachments" => "attachment",
        other => panic!("no record kind for /{other}: add it to the isolation table"),
    };
    path.replace("{id}", &ids[kind])
        .replace("{key}", &ids[kind])
        .replace("{userId}", &ids["user"])
        .replace("{deliveryId}", &ids["delivery"])
}

/// Every route of the route table, called with company A's ids by company
/// B (and, for per-mode records, by A's own LIVE key): 404 everywhere, and
/// A's records unchanged. Lists never show A's ids.
async fn another_tenants_ids_are_404_on_every_route(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let a = app.company().await;
    let b = app.company().await;
    let a_live = app.key(a.company.id, Mode::Live, ScopeSet::all()).await;
    let entity = a.entity.id.to_string();
    let ids = records_of(&app, &a.key, &entity).await;
    let b_user = app
        .post(
            "/users",
            &b.key,
            json!({"name": "Agent B", "email": "b@b.example"}),
        )
        .await;
    let b_user = id(&b_user);
    let a_live_user = ids["user"].clone();

    let specs = supportdesk::app::api_route_specs();
    let mut checked = 0;
    for spec in &specs {
        let method = &spec.method;
        if !spec.path.contains('{') {
            if *method == Method::GET {
                let listed = app.get(&spec.path, &b.key).await;
                for (kind, value) in &ids {
                    assert!(
                        !listed.text.contains(value.as_str()),
                        "GET {} by B shows A's {kind}: {}",
                        spec.path,
                        listed.text
                    );
                }
            }
            continue;
        }
        let path = fill(&spec.path, &ids);
        // Entities, users and presence are shared by A's two modes.
        let shared = spec.path.starts_with("/entities")
            || spec.path.starts_with("/users")
            || spec.path.starts_with("/chat/agent-presence");
        let mut callers = vec![("company B", b.key.as_str(), b_user.as_str())];
        if !shared {
            callers.push(("A's LIVE key", a_live.as_str(), a_live_user.as_str()));
        }
        for (who, key, user) in callers {
            let body = valid_body(method, &spec.path, user);
            let r = call(&app, method, &path, key, body).await;
            if spec.path == "/chat/agent-presence/{userId}" {
                // Removing presence is idempotent: the same answer as for an
                // unknown user, and A's agent stays online.
                let unknown = path.replace(&ids["user"], &uuid::Uuid::now_v7().to_string());
                let control = call(&app, method, &unknown, key, None).await;
                assert_eq!(
                    (r.status, &r.body),
                    (control.status, &control.body),
                    "{who}"
                );
                continue;
            }
            assert_eq!(
                (r.status, r.body["code"].as_str()),
                (404, Some("not_found")),
                "{method} {path} by {who}: {}",
                r.text
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "checked {checked} routes");

    // A's records are untouched.
    for path in [
        format!("/tickets/{}", ids["ticket"]),
        format!("/kb/articles/{}", ids["article"]),
        format!("/kb/categories/{}", ids["category"]),
        format!("/company/webhooks/{}", ids["webhook"]),
        format!("/chat/sessions/{}", ids["session"]),
        format!("/api-keys/{}", ids["key"]),
        format!("/users/{}", ids["user"]),
        format!("/entities/{}", ids["entity"]),
    ] {
        let r = app.get(&path, &a.key).await;
        r.assert_status(200);
        assert_ne!(r.body["name"], "Renamed", "{path}");
        assert_ne!(r.body["title"], "Renamed", "{path}");
    }
    let ticket = app
        .get(&format!("/tickets/{}", ids["ticket"]), &a.key)
        .await;
    assert_eq!(ticket.body["status"], "OPEN");
    assert_eq!(ticket.body["tags"], json!([]));
    let fields = app.get("/settings/custom-fields", &a.key).await;
    assert_eq!(fields.body["data"][0]["label"], "A's field");
    let hours = app.get("/settings/business-hours", &a.key).await;
    assert_eq!(hours.body["data"][0]["name"], "A's hours");
    let presence = app.get("/chat/agent-presence", &a.key).await;
    assert!(
        presence.text.contains(&ids["user"]),
        "A's agent still online"
    );
    app.stop().await;
}

/// Runs the real binary with verbose logging, hands it every kind of
/// secret, and greps its whole output: no API key, webhook secret, visitor
/// or socket token may appear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_log() {
    let dir = tempfile::tempdir().expect("temp dir");
    let env: Vec<(&str, String)> = vec![
        (
            "DATABASE_URL",
            format!("sqlite://{}/log.db?mode=rwc", dir.path().display()),
        ),
        ("SUPPORTDESK_DATA_DIR", dir.path().display().to_string()),
        ("SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE", "true".into()),
        ("RUST_LOG", "trace,hyper=debug,h2=debug,sqlx=debug".into()),
    ];
    let (_company, entity, key) = ServiceProcess::provision(&env, "Logged");

    let port = free_port();
    let log = dir.path().join("service.log");
    let service = ServiceProcess::serve(&env, port, &log).await;
    let client = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        client
            .post(service.url(&format!("/api/v1{path}")))
            .header("X-API-Key", &key)
            .json(&body)
            .send()
    };
    let mut secrets = vec![("the API key", key.clone())];
    let created: Value = post(
        "/api-keys",
        json!({"name": "New", "scopes": ["tickets:read"]}),
    )
    .await
    .expect("key")
    .json()
    .await
    .expect("JSON");
    secrets.push((
        "a created key",
        created["key"].as_str().expect("key").into(),
    ));
    let hook: Value = post(
        "/company/webhooks",
        json!({"name": "Hook", "url": "http://127.0.0.1:9/x", "events": ["ticket.created"]}),
    )
    .await
    .expect("webhook")
    .json()
    .await
    .expect("JSON");
    secrets.push((
        "a webhook secret",
        hook["secret"].as_str().expect("secret").into(),
    ));
    let rotated: Value = post(
        &format!(
            "/company/webhooks/{}/rotate-secret",
            hook["id"].as_str().expect("id")
        ),
        json!({}),
    )
    .await
    .expect("rotate")
    .json()
    .await
    .expect("JSON");
    secrets.push((
        "a rotated secret",
        rotated["secret"].as_str().expect("secret").into(),
    ));
    let session: Value = post("/chat/sessions", json!({"entityId": entity}))
        .await
        .expect("session")
        .json()
        .await
        .expect("JSON");
    let visitor = session["visitorToken"]
        .as_str()
        .expect("visitor token")
        .to_string();
    secrets.push(("a visitor token", visitor.clone()));
    let socket: Value = post("/ws/tokens", json!({}))
        .await
        .expect("token")
        .json()
        .await
        .expect("JSON");
    let socket = socket["token"].as_str().expect("socket token").to_string();
    secrets.push(("a socket token", socket.clone()));
    // The tokens also travel in query strings (sockets), the key in a
    // failing request, and a wrong key next to a right one.
    for token in [&visitor, &socket] {
        let url = format!("ws://127.0.0.1:{port}/api/v1/ws?token={token}");
        if let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url).await {
            let _ = ws.close(None).await;
        }
    }
    let _ = client
        .get(service.url("/api/v1/nope?token=x"))
        .header("X-API-Key", &key)
        .send()
        .await;
    let wrong = format!("{}x", key);
    let _ = client
        .get(service.url("/api/v1/tickets"))
        .header("X-API-Key", &wrong)
        .send()
        .await;
    secrets.push(("a wrong key", wrong));
    // Stopped, not killed: the log then holds all the service wrote.
    service.stop().await;

    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.len() > 1000, "the log captured the requests: {text}");
    assert!(text.contains("/api/v1/tickets"), "requests are logged");
    for (what, secret) in &secrets {
        assert!(!text.contains(secret.as_str()), "{what} appears in the log");
    }
}

backend_tests!(
    another_tenants_ids_in_bodies_are_refused_like_unknown_ids,
    another_tenants_entity_filters_answer_like_unknown_ones,
);

/// Ids of another company given in bodies (entityId, parentId,
/// assignedToId, escalateToId, authorId, senderId, categoryId, rule
/// targets) are refused exactly like ids that do not exist: nothing is
/// created, nothing tells them apart.
async fn another_tenants_ids_in_bodies_are_refused_like_unknown_ids(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let a = app.company().await;
    let b = app.company().await;
    let a_ids = records_of(&app, &a.key, &a.entity.id.to_string()).await;
    let b_ticket = app
        .post(
            "/tickets",
            &b.key,
            json!({"subject": "B's ticket", "entityId": b.entity.id}),
        )
        .await;
    let b_ticket = id(&b_ticket);
    let b_article = app
        .post(
            "/kb/articles",
            &b.key,
            json!({"title": "B's article", "entityId": b.entity.id}),
        )
        .await;
    let b_article = id(&b_article);
    let b_session = app
        .post("/chat/sessions", &b.key, json!({"entityId": b.entity.id}))
        .await;
    let b_session = id(&b_session);

    type Case = (Method, String, fn(&str) -> Value);
    let cases: Vec<(&str, Case)> = vec![
        (
            "entity",
            (
                Method::POST,
                "/tickets".into(),
                |x| json!({"subject": "S", "entityId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/entities".into(),
                |x| json!({"name": "N", "parentId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/kb/articles".into(),
                |x| json!({"title": "T", "entityId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/kb/categories".into(),
                |x| json!({"name": "N", "entityId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/chat/sessions".into(),
                |x| json!({"entityId": x}),
            ),
        ),
        (
            "user",
            (
                Method::PATCH,
                format!("/tickets/{b_ticket}"),
                |x| json!({"assignedToId": x}),
            ),
        ),
        (
            "user",
            (
                Method::POST,
                format!("/tickets/{b_ticket}/escalate"),
                |x| json!({"escalateToId": x}),
            ),
        ),
        (
            "user",
            (
                Method::POST,
                format!("/tickets/{b_ticket}/comments"),
                |x| json!({"body": "B", "authorId": x}),
            ),
        ),
        (
            "user",
            (
                Method::POST,
                format!("/chat/sessions/{b_session}/messages"),
                |x| json!({"body": "B", "senderType": "agent", "senderId": x}),
            ),
        ),
        (
            "category",
            (
                Method::PATCH,
                format!("/kb/articles/{b_article}"),
                |x| json!({"categoryId": x}),
            ),
        ),
        (
            "user",
            (
                Method::PUT,
                "/settings/escalation-rules".into(),
                |x| json!({"rules": [{"name": "R", "conditions": {"unassigned": true}, "action": {"escalateToId": x}}]}),
            ),
        ),
    ];
    for (kind, (method, path, body)) in cases {
        let foreign = call(&app, &method, &path, &b.key, Some(body(&a_ids[kind]))).await;
        let unknown = call(
            &app,
            &method,
            &path,
            &b.key,
            Some(body(&uuid::Uuid::now_v7().to_string())),
        )
        .await;
        assert_eq!(
            foreign.status, 400,
            "{method} {path} with A's {kind}: {}",
            foreign.text
        );
        assert_eq!(
            (
                foreign.status,
                &foreign.body["code"],
                &foreign.body["details"]
            ),
            (
                unknown.status,
                &unknown.body["code"],
                &unknown.body["details"]
            ),
            "{method} {path}: A's {kind} and an unknown id answer alike"
        );
    }
    app.stop().await;
}

/// Another company's entity as a list filter answers exactly like an entity
/// that does not exist.
async fn another_tenants_entity_filters_answer_like_unknown_ones(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let a = app.company().await;
    let b = app.company().await;
    let a_ids = records_of(&app, &a.key, &a.entity.id.to_string()).await;
    // The ticket and chat lists answer an empty page ...
    for path in ["/tickets", "/chat/sessions"] {
        let foreign = app
            .get(&format!("{path}?entityId={}", a_ids["entity"]), &b.key)
            .await;
        let unknown = app
            .get(&format!("{path}?entityId={}", uuid::Uuid::now_v7()), &b.key)
            .await;
        assert_eq!(foreign.status, unknown.status, "{path}: {}", foreign.text);
        assert_eq!(foreign.status, 200, "{path}: {}", foreign.text);
        assert_eq!(foreign.body["total"], 0, "{path}: {}", foreign.text);
    }
    // ... the knowledge base refuses the filter as a field error.
    for path in ["/kb/articles", "/kb/categories"] {
        let foreign = app
            .get(&format!("{path}?entityId={}", a_ids["entity"]), &b.key)
            .await;
        let unknown = app
            .get(&format!("{path}?entityId={}", uuid::Uuid::now_v7()), &b.key)
            .await;
        assert_eq!(foreign.status, unknown.status, "{path}: {}", foreign.text);
        assert_eq!(foreign.body, unknown.body, "{path}: {}", foreign.text);
        foreign.assert_error(400, "validation_failed");
    }
    app.stop().await;
}
