//! Ticket ratings through the signed link of the resolution email, and the
//! entity's `csat` setting: `auto`, `manual` (an agent asks) and `off`.

use serde_json::json;

use super::{closed_chat, email_texts, link_token, rate, resolved_ticket, set_csat};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    the_resolution_email_link_rates_the_ticket_without_a_token,
    an_altered_link_is_403,
    manual_mode_rates_only_after_an_agent_asks,
    off_mode_refuses_ratings_and_requests,
    the_rating_page_sends_a_strict_policy_and_no_referrer,
);

/// The page's address carries the link's token: the page runs only its
/// own code and sends its address nowhere.
async fn the_rating_page_sends_a_strict_policy_and_no_referrer(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let page = app
        .client
        .get(app.url("/widget/v1/rate?token=abc"))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    let header = |name: &str| {
        page.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(header("referrer-policy"), "no-referrer");
    let policy = header("content-security-policy");
    let html = page.text().await.expect("html");
    for directive in [
        "default-src 'none'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(policy.contains(directive), "{directive} in {policy:?}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy:?}");
    // The page's own script and style are what the policy lets run.
    for tag in ["script", "style"] {
        use base64::Engine;
        use sha2::Digest;
        let text = html
            .split_once(&format!("<{tag}>"))
            .and_then(|(_, rest)| rest.split_once(&format!("</{tag}>")))
            .map(|(text, _)| text)
            .expect("an inline element");
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(text));
        let source = format!("{tag}-src 'sha256-{hash}'");
        assert!(policy.contains(&source), "{source} in {policy:?}");
    }
}

async fn the_resolution_email_link_rates_the_ticket_without_a_token(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let id = resolved_ticket(&app, &acme).await;

    let texts = email_texts(&app, acme.company.id).await;
    assert_eq!(texts.len(), 2, "creation and resolution emails");
    assert_eq!(link_token(&texts[0]), None);
    let token = link_token(&texts[1]).expect("a rating link in the resolution email");

    let r = rate(
        &app,
        None,
        json!({"token": token, "score": 5, "comment": "Thanks"}),
    )
    .await;
    let rating = r.assert_status(201);
    assert_eq!(rating["ticketId"], json!(id));
    assert_eq!(rating["chatSessionId"], serde_json::Value::Null);
    rate(&app, None, json!({"token": token, "score": 4}))
        .await
        .assert_status(200);

    // The page the link opens is served to a browser without credentials.
    let page = app
        .client
        .get(app.url(&format!("/widget/v1/rate?token={token}")))
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains("/widget/v1/ratings"), "{html}");
}

async fn an_altered_link_is_403(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    resolved_ticket(&app, &acme).await;
    let other = resolved_ticket(&app, &acme).await;
    let texts = email_texts(&app, acme.company.id).await;
    let token = link_token(&texts[1]).expect("rating link");
    let (kind, rest) = token.split_once('.').expect("kind");
    let (id, tail) = rest.split_once('.').expect("id");

    let for_other = format!("{kind}.{other}.{tail}");
    let (expiry, sig) = tail.split_once('.').expect("expiry");
    let later: i64 = expiry.parse::<i64>().expect("expiry") + 3600;
    let longer = format!("{kind}.{id}.{later}.{sig}");
    let flipped = format!(
        "{kind}.{id}.{expiry}.{}",
        sig.chars().rev().collect::<String>()
    );
    for altered in [for_other, longer, flipped, "nonsense".to_string()] {
        let r = rate(&app, None, json!({"token": altered, "score": 1})).await;
        r.assert_error(403, "invalid_link");
    }
    let list = app.get("/ratings", &acme.key).await;
    assert_eq!(list.assert_status(200)["total"], 0);
}

async fn manual_mode_rates_only_after_an_agent_asks(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    set_csat(&app, &acme, "manual").await;

    // No link in the resolution email; the chat's token cannot rate yet.
    let ticket = resolved_ticket(&app, &acme).await;
    let texts = email_texts(&app, acme.company.id).await;
    assert_eq!(texts.len(), 2);
    assert_eq!(link_token(&texts[1]), None);
    let (chat, visitor) = closed_chat(&app, &acme).await;
    rate(&app, Some(&visitor), json!({"score": 3}))
        .await
        .assert_error(409, "conflict");

    // The agent asks: the ticket's visitor gets a link, the chat opens.
    let asked = app
        .post(
            &format!("/tickets/{ticket}/request-rating"),
            &acme.key,
            json!({}),
        )
        .await;
    assert_eq!(asked.assert_status(200)["emailSent"], true);
    let texts = email_texts(&app, acme.company.id).await;
    assert_eq!(texts.len(), 3);
    let token = link_token(&texts[2]).expect("a rating link in the request email");
    rate(&app, None, json!({"token": token, "score": 2}))
        .await
        .assert_status(201);
    app.post(
        &format!("/chat/sessions/{chat}/request-rating"),
        &acme.key,
        json!({}),
    )
    .await
    .assert_status(200);
    rate(&app, Some(&visitor), json!({"score": 3}))
        .await
        .assert_status(201);
}

async fn off_mode_refuses_ratings_and_requests(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let ticket = resolved_ticket(&app, &acme).await;
    let texts = email_texts(&app, acme.company.id).await;
    let token = link_token(&texts[1]).expect("rating link");
    let (chat, visitor) = closed_chat(&app, &acme).await;
    set_csat(&app, &acme, "off").await;

    rate(&app, None, json!({"token": token, "score": 5}))
        .await
        .assert_error(403, "csat_off");
    rate(&app, Some(&visitor), json!({"score": 5}))
        .await
        .assert_error(403, "csat_off");
    for path in [
        format!("/tickets/{ticket}/request-rating"),
        format!("/chat/sessions/{chat}/request-rating"),
    ] {
        app.post(&path, &acme.key, json!({}))
            .await
            .assert_error(403, "csat_off");
    }
    let list = app.get("/ratings", &acme.key).await;
    assert_eq!(list.assert_status(200)["total"], 0);
}
