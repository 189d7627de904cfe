//! Verified visitor identity: identity tokens signed by the customer's
//! backend with the entity's widget secret, the `required` mode, secret
//! rotation, a verified visitor's history, and the double opt-in for
//! emails a visitor merely typed.

use serde_json::{Value, json};
use supportdesk::widget::identity::sign;

use super::{start_chat, text, widget_post};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    a_valid_token_gives_a_verified_session_with_its_claims,
    bad_tokens_are_refused_with_401,
    a_token_with_an_absurd_iat_is_refused_with_401,
    required_mode_refuses_anonymous_sessions,
    rotation_keeps_old_tokens_valid_during_the_grace_period,
    verified_visitors_see_their_earlier_sessions,
    an_unconfirmed_email_gets_no_reply_until_its_link_is_used_once,
);

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn claims(sub: &str) -> Value {
    json!({"sub": sub, "email": "kim@shop.example", "name": "Kim",
        "iat": now(), "exp": now() + 600})
}

async fn rotate(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    let path = format!("/entities/{}/widget-secret/rotate", acme.entity.id);
    app.post(&path, &acme.key, body)
        .await
        .assert_status(200)
        .clone()
}

async fn secret(app: &TestApp, acme: &TestCompany) -> String {
    text(&rotate(app, acme, json!({})).await, "secret").to_string()
}

async fn start(app: &TestApp, acme: &TestCompany, body: Value) -> TestResponse {
    let mut body = body;
    body["widgetKey"] = json!(acme.entity.widget_key_test);
    widget_post(app, "/widget/v1/sessions", body).await
}

/// The history list with `bearer`: a visitor token, or an identity token.
async fn history(app: &TestApp, widget_key: &str, bearer: &str) -> Vec<Value> {
    let r = TestResponse::from(
        app.client
            .get(app.url(&format!("/widget/v1/sessions?widgetKey={widget_key}")))
            .header("Authorization", format!("Bearer {bearer}"))
            .send()
            .await,
    )
    .await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .clone()
}

async fn emails_to(app: &TestApp, company_id: uuid::Uuid, to: &str) -> Vec<Value> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT payload FROM outbox_jobs WHERE kind = 'email' AND company_id = $1 \
         ORDER BY created_at, id")
        .bind(company_id)
        .fetch_all(c)
        .await
        .expect("outbox read"));
    rows.into_iter()
        .map(|(payload,)| payload.0)
        .filter(|mail| mail["to"] == to)
        .collect()
}

async fn agent(app: &TestApp, acme: &TestCompany) -> String {
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ann", "email": "ann@acme.example", "role": "AGENT"}),
        )
        .await;
    text(user.assert_status(201), "id").to_string()
}

async fn reply(app: &TestApp, acme: &TestCompany, session: &str, agent: &str) {
    app.post(
        &format!("/chat/sessions/{session}/messages"),
        &acme.key,
        json!({"body": "We are on it", "senderType": "agent", "senderId": agent}),
    )
    .await
    .assert_status(201);
}

async fn a_valid_token_gives_a_verified_session_with_its_claims(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = secret(&app, &acme).await;
    let token = sign(&claims("cust-42"), &secret);

    let r = start(
        &app,
        &acme,
        json!({"identityToken": token, "visitorName": "Someone else"}),
    )
    .await;
    let session = r.assert_status(201);
    let visitor = json!({"externalId": "cust-42", "email": "kim@shop.example",
        "name": "Kim", "verified": true});
    assert_eq!(session["visitor"], visitor);
    assert_eq!(session["emailVerified"], true);

    // Agents see the same identity.
    let id = text(session, "id");
    let agents = app.get(&format!("/chat/sessions/{id}"), &acme.key).await;
    assert_eq!(agents.assert_status(200)["visitor"], visitor);

    // The entity says a secret exists, never what it is.
    let entity = app
        .get(&format!("/entities/{}", acme.entity.id), &acme.key)
        .await;
    let entity = entity.assert_status(200);
    assert_eq!(entity["widgetSecretSet"], true);
    assert!(!entity.to_string().contains(&secret));
}

async fn bad_tokens_are_refused_with_401(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let other_secret = secret(&app, &other).await;
    let secret = secret(&app, &acme).await;
    let unsigned = {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.",
            b64.encode(br#"{"alg":"none","typ":"JWT"}"#),
            b64.encode(claims("cust-1").to_string())
        )
    };
    let expired = json!({"sub": "cust-1", "iat": now() - 7200, "exp": now() - 3600});
    let no_sub = json!({"iat": now(), "exp": now() + 600});
    let cases = [
        (
            "wrong signature",
            sign(&claims("cust-1"), "wis_not_the_secret"),
        ),
        ("alg none", unsigned),
        ("expired", sign(&expired, &secret)),
        ("no sub", sign(&no_sub, &secret)),
        ("another entity", sign(&claims("cust-1"), &other_secret)),
        ("not a JWT", "garbage".to_string()),
    ];
    for (case, token) in cases {
        let r = start(&app, &acme, json!({"identityToken": token})).await;
        assert_eq!(r.body["code"], "invalid_token", "{case}: {}", r.text);
        r.assert_error(401, "invalid_token");
    }
    let sessions = app.get("/chat/sessions", &acme.key).await;
    assert_eq!(sessions.assert_status(200)["data"], json!([]));
}

/// `exp - iat` of the client's numbers must not overflow (a 500 before).
async fn a_token_with_an_absurd_iat_is_refused_with_401(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = secret(&app, &acme).await;
    let absurd = json!({"sub": "cust-1", "iat": i64::MIN, "exp": now() + 600});
    let r = start(
        &app,
        &acme,
        json!({"identityToken": sign(&absurd, &secret)}),
    )
    .await;
    r.assert_error(401, "invalid_token");
    let sessions = app.get("/chat/sessions", &acme.key).await;
    assert_eq!(sessions.assert_status(200)["data"], json!([]));
}

async fn required_mode_refuses_anonymous_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = secret(&app, &acme).await;
    let path = format!("/entities/{}", acme.entity.id);
    let entity = app
        .patch(&path, &acme.key, json!({"widgetIdentity": "required"}))
        .await;
    assert_eq!(entity.assert_status(200)["widgetIdentity"], "required");

    start(&app, &acme, json!({"visitorName": "Anon"}))
        .await
        .assert_error(401, "identity_required");
    let token = sign(&claims("cust-7"), &secret);
    start(&app, &acme, json!({"identityToken": token}))
        .await
        .assert_status(201);

    app.patch(&path, &acme.key, json!({"widgetIdentity": "sometimes"}))
        .await
        .assert_error(400, "validation_failed");
}

async fn rotation_keeps_old_tokens_valid_during_the_grace_period(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let first = secret(&app, &acme).await;
    let old_token = sign(&claims("cust-1"), &first);

    let rotated = rotate(&app, &acme, json!({"gracePeriodSeconds": 3600})).await;
    assert!(rotated["previousSecretExpiresAt"].is_string());
    let second = text(&rotated, "secret").to_string();
    assert_ne!(first, second);
    for token in [old_token.clone(), sign(&claims("cust-1"), &second)] {
        start(&app, &acme, json!({"identityToken": token}))
            .await
            .assert_status(201);
    }

    // A leaked secret is cut off at once (grace 0).
    let third = rotate(&app, &acme, json!({"gracePeriodSeconds": 0})).await;
    assert_eq!(third["previousSecretExpiresAt"], Value::Null);
    let second_token = sign(&claims("cust-1"), &second);
    start(&app, &acme, json!({"identityToken": second_token}))
        .await
        .assert_error(401, "invalid_token");
    start(&app, &acme, json!({"identityToken": old_token}))
        .await
        .assert_error(401, "invalid_token");
}

async fn verified_visitors_see_their_earlier_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = secret(&app, &acme).await;
    let key = acme.entity.widget_key_test.clone();

    // First device: a chat with a message.
    let first = start_chat(
        &app,
        &key,
        json!({"identityToken": sign(&claims("cust-9"), &secret)}),
    )
    .await;
    let first_id = text(&first, "id");
    let ann = agent(&app, &acme).await;
    reply(&app, &acme, first_id, &ann).await;
    // Someone else's chat, and an anonymous one.
    start_chat(
        &app,
        &key,
        json!({"identityToken": sign(&claims("cust-10"), &secret)}),
    )
    .await;
    let anonymous = start_chat(&app, &key, json!({})).await;

    // Second device, same customer (a fresh identity token): both
    // sessions, newest first.
    let identity = sign(&claims("cust-9"), &secret);
    let second = start_chat(&app, &key, json!({"identityToken": identity})).await;
    let listed = history(&app, &key, &identity).await;
    let ids: Vec<&str> = listed.iter().map(|s| text(s, "id")).collect();
    assert_eq!(ids, [text(&second, "id"), first_id]);

    // The earlier session opens with the token the list gives.
    let read = TestResponse::from(
        app.client
            .get(app.url(&format!("/widget/v1/sessions/{first_id}")))
            .header(
                "Authorization",
                format!("Bearer {}", text(&listed[1], "visitorToken")),
            )
            .send()
            .await,
    )
    .await;
    assert_eq!(
        read.assert_status(200)["messages"][0]["body"],
        "We are on it"
    );

    // An anonymous visitor sees only their own session.
    let own = history(&app, &key, text(&anonymous, "visitorToken")).await;
    let ids: Vec<&str> = own.iter().map(|s| text(s, "id")).collect();
    assert_eq!(ids, [text(&anonymous, "id")]);
}

async fn an_unconfirmed_email_gets_no_reply_until_its_link_is_used_once(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme).await;
    let to = "victim@example.com";
    let session = start_chat(
        &app,
        &acme.entity.widget_key_test,
        json!({"visitorEmail": to}),
    )
    .await;
    assert_eq!(session["emailVerified"], false);
    assert_eq!(session["visitor"]["verified"], false);
    let id = text(&session, "id");

    // One confirmation email, and no reply email before confirmation.
    reply(&app, &acme, id, &ann).await;
    let mails = emails_to(&app, acme.company.id, to).await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    let body = mails[0]["text"].as_str().expect("text");
    let token = body
        .split("token=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("link in the confirmation email");
    let agents = app.get(&format!("/chat/sessions/{id}"), &acme.key).await;
    assert_eq!(agents.assert_status(200)["emailVerified"], false);

    // The link works once.
    let link = app.url(&format!("/widget/v1/confirm-email?token={token}"));
    let confirmed = TestResponse::from(app.client.get(&link).send().await).await;
    assert_eq!(confirmed.status, 200);
    TestResponse::from(app.client.get(&link).send().await)
        .await
        .assert_error(404, "not_found");
    let agents = app.get(&format!("/chat/sessions/{id}"), &acme.key).await;
    assert_eq!(agents.assert_status(200)["emailVerified"], true);

    // Replies are mailed from now on.
    reply(&app, &acme, id, &ann).await;
    let mails = emails_to(&app, acme.company.id, to).await;
    assert_eq!(mails.len(), 2);
    assert!(
        mails[1]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("We are on it")
    );
}
