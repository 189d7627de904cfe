//! Tags on chat sessions: create, PATCH replaces, `POST …/tags` adds and
//! removes (concurrently too), list filters, socket frames, `/tags` counts.

use super::*;
use crate::chat::client::Client;

backend_tests!(
    sessions_carry_tags_through_create_patch_and_edit,
    invalid_session_tags_are_400_and_change_nothing,
    concurrent_session_tag_adds_keep_every_tag,
    session_tag_filters_give_exactly_the_matching_sessions,
    session_tag_changes_reach_its_sockets,
    visitors_never_see_session_tags,
    tag_counts_include_chat_sessions,
);

async fn session(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    let mut body = body;
    body["entityId"] = json!(acme.entity.id);
    app.post("/chat/sessions", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

async fn session_tags(app: &TestApp, key: &str, id: &str) -> Vec<String> {
    let r = app.get(&format!("/chat/sessions/{id}"), key).await;
    tags_of(r.assert_status(200))
}

async fn sessions_carry_tags_through_create_patch_and_edit(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let s = session(&app, &acme, json!({"tags": ["VIP", " billing ", "vip"]})).await;
    assert_eq!(tags_of(&s), ["billing", "vip"]);
    let id = id_of(&s);
    assert_eq!(session_tags(&app, &acme.key, &id).await, ["billing", "vip"]);

    let path = format!("/chat/sessions/{id}");
    let r = app
        .patch(&path, &acme.key, json!({"tags": ["a", "b"]}))
        .await;
    assert_eq!(tags_of(r.assert_status(200)), ["a", "b"]);
    assert_eq!(r.body["status"], "ACTIVE");

    let r = app
        .post(
            &format!("{path}/tags"),
            &acme.key,
            json!({"add": ["c"], "remove": ["a"]}),
        )
        .await;
    assert_eq!(tags_of(r.assert_status(200)), ["b", "c"]);

    let r = app
        .patch(&path, &acme.key, json!({"status": "CLOSED", "tags": []}))
        .await;
    assert_eq!(r.assert_status(200)["status"], "CLOSED");
    assert_eq!(r.body["tags"], json!([]));
    let list = app.get("/chat/sessions", &acme.key).await;
    assert_eq!(list.assert_status(200)["data"][0]["tags"], json!([]));
}

async fn invalid_session_tags_are_400_and_change_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let s = session(&app, &acme, json!({"tags": ["keep"]})).await;
    let path = format!("/chat/sessions/{}", id_of(&s));
    let body = json!({"entityId": acme.entity.id, "tags": ["no way"]});
    assert_invalid(
        &app.post("/chat/sessions", &acme.key, body).await,
        &["tags"],
    );
    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"status": "CLOSED", "tags": ["no way"]}),
        )
        .await;
    assert_invalid(&r, &["tags"]);
    let r = app
        .post(
            &format!("{path}/tags"),
            &acme.key,
            json!({"add": ["no way"]}),
        )
        .await;
    assert_invalid(&r, &["add"]);
    let forty_nine: Vec<String> = (0..49).map(|i| format!("t{i:02}")).collect();
    app.patch(&path, &acme.key, json!({ "tags": forty_nine }))
        .await
        .assert_status(200);
    let r = app
        .post(
            &format!("{path}/tags"),
            &acme.key,
            json!({"add": ["x1", "x2"]}),
        )
        .await;
    assert_invalid(&r, &["add"]);
    let read = app.get(&path, &acme.key).await;
    assert_eq!(tags_of(read.assert_status(200)), forty_nine);
    assert_eq!(read.body["status"], "ACTIVE");
}

async fn concurrent_session_tag_adds_keep_every_tag(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let s = session(&app, &acme, json!({})).await;
    let path = format!("/chat/sessions/{}/tags", id_of(&s));
    let expected = add_twenty_at_once(&app, &acme.key, &path).await;
    assert_eq!(session_tags(&app, &acme.key, &id_of(&s)).await, expected);
}

async fn session_tag_filters_give_exactly_the_matching_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    // An untagged session that no tag filter may list.
    session(&app, &acme, json!({})).await;
    let vip = session(&app, &acme, json!({"tags": ["vip"]})).await;
    let both = session(&app, &acme, json!({"tags": ["vip", "eu"]})).await;
    let eu = session(&app, &acme, json!({"tags": ["eu"]})).await;
    app.patch(
        &format!("/chat/sessions/{}", id_of(&both)),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);

    // (query, the page expected newest first, the total matching)
    let cases = [
        ("tag=vip", vec![&both, &vip], 2),
        ("tag=vip&tag=eu", vec![&both], 1),
        ("anyTag=vip,eu", vec![&eu, &both, &vip], 3),
        ("anyTag=vip,eu&status=ACTIVE", vec![&eu, &vip], 2),
        ("anyTag=vip,eu&limit=1&offset=1", vec![&both], 3),
    ];
    for (query, expected, total) in cases {
        let r = app.get(&format!("/chat/sessions?{query}"), &acme.key).await;
        let body = r.assert_status(200);
        let ids: Vec<String> = body["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(id_of)
            .collect();
        let expected_ids: Vec<String> = expected.iter().map(|s| id_of(s)).collect();
        assert_eq!(ids, expected_ids, "{query}");
        assert_eq!(body["total"], total, "{query}");
    }
}

async fn session_tag_changes_reach_its_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut agent = Client::key(&app, &acme.key).await;
    agent.subscribe(&format!("entity:{}", acme.entity.id)).await;
    let s = session(&app, &acme, json!({})).await;
    let id = id_of(&s);
    // Subscribed first, so the creation's frame surely comes first (it may
    // otherwise arrive after the subscription and pass for the tag change).
    agent.next_of("chat.session").await;
    app.post(
        &format!("/chat/sessions/{id}/tags"),
        &acme.key,
        json!({"add": ["vip"]}),
    )
    .await
    .assert_status(200);
    let frame = agent.next_of("chat.session").await;
    assert_eq!(frame["data"]["tags"], json!(["vip"]));
    // Adding it again changes nothing and pushes nothing.
    app.post(
        &format!("/chat/sessions/{id}/tags"),
        &acme.key,
        json!({"add": ["vip"]}),
    )
    .await
    .assert_status(200);
    agent.assert_nothing_before_pong().await;
}

/// Tags are the agents' notes: the session's own channel, which its visitor
/// hears, and the widget's answers leave them out.
async fn visitors_never_see_session_tags(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let s = session(&app, &acme, json!({"tags": ["angry"]})).await;
    let id = id_of(&s);
    let token = s["visitorToken"].as_str().expect("visitor token");
    let mut visitor = Client::token(&app, token).await;
    visitor.subscribe(&format!("session:{id}")).await;
    app.post(
        &format!("/chat/sessions/{id}/tags"),
        &acme.key,
        json!({"add": ["refund-risk"]}),
    )
    .await
    .assert_status(200);
    let frame = visitor.next_of("chat.session").await;
    assert!(frame["data"].get("tags").is_none(), "{frame}");

    let widget = app
        .client
        .get(app.url(&format!("/widget/v1/sessions/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .expect("widget request")
        .json::<Value>()
        .await
        .expect("json");
    assert_eq!(widget["id"], json!(id));
    assert!(widget.get("tags").is_none(), "{widget}");
}

async fn tag_counts_include_chat_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    ticket(&app, &acme, json!({"tags": ["vip"]})).await;
    session(&app, &acme, json!({"tags": ["vip", "chat-only"]})).await;
    let closed = session(&app, &acme, json!({"tags": ["vip"]})).await;
    app.patch(
        &format!("/chat/sessions/{}", id_of(&closed)),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    let r = app.get("/tags", &acme.key).await;
    assert_eq!(
        r.assert_status(200)["data"],
        json!([
            {"tag": "vip", "open": 2, "total": 3},
            {"tag": "chat-only", "open": 1, "total": 1},
        ])
    );
}
