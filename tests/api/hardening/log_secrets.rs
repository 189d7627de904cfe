//! No secret in the service's log: the real binary at trace level is handed
//! every kind of secret and its whole output searched for them.

use serde_json::{Value, json};

use super::procs::{ServiceProcess, free_port};

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
