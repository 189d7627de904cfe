//! Saved views: their filters checked and kept in canonical form, who sees
//! them, and a view's tickets (the ticket list with its filters).

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};

use crate::agents::{send, signed_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_views_tickets_are_the_ones_its_filters_select,
    a_view_answers_how_many_tickets_it_selects,
    a_views_filters_are_kept_in_canonical_form,
    invalid_filters_are_400_naming_them_and_create_nothing,
    a_personal_view_is_seen_by_its_agent_only,
    a_views_tickets_page_by_cursor,
    updating_a_views_filters_replaces_them,
    views_need_the_ticket_scopes,
);

/// A ticket of `acme` with the fields of `extra`; its id.
async fn ticket(app: &TestApp, acme: &TestCompany, extra: Value) -> String {
    let mut body = json!({"subject": "Printer on fire", "entityId": acme.entity.id,
                          "visitorEmail": "vic@example.com"});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    let r = app.post("/tickets", &acme.key, body).await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// A shared view of `acme` with `filters`; its id.
async fn view(app: &TestApp, acme: &TestCompany, filters: Value) -> String {
    let r = app
        .post(
            "/views",
            &acme.key,
            json!({"name": "VIP", "visibility": "shared", "filters": filters}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// The ids on a page of tickets.
fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| t["id"].as_str().expect("id").to_string())
        .collect()
}

async fn a_views_tickets_are_the_ones_its_filters_select(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vip = ticket(&app, &acme, json!({"tags": ["vip"], "priority": "HIGH"})).await;
    ticket(&app, &acme, json!({"tags": ["vip"], "priority": "LOW"})).await;
    ticket(&app, &acme, json!({"priority": "HIGH"})).await;
    let id = view(&app, &acme, json!({"tag": ["vip"], "priority": "HIGH"})).await;
    let r = app.get(&format!("/views/{id}/tickets"), &acme.key).await;
    let page = r.assert_status(200);
    assert_eq!((ids(page), page["total"].clone()), (vec![vip], json!(1)));
}

async fn a_views_filters_are_kept_in_canonical_form(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = view(
        &app,
        &acme,
        json!({"tag": "VIP, Billing", "snoozed": "false", "status": "OPEN", "q": " printer ",
               "teamId": null}),
    )
    .await;
    let r = app.get(&format!("/views/{id}"), &acme.key).await;
    assert_eq!(
        (
            r.assert_status(200)["filters"].clone(),
            r.body["sort"].clone()
        ),
        (
            json!({"tag": ["billing", "vip"], "snoozed": false, "status": "OPEN",
                   "q": "printer"}),
            json!("newest")
        )
    );
}

async fn invalid_filters_are_400_naming_them_and_create_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let cases = [
        (json!({"filters": {"status": "SNOOZED"}}), "filters.status"),
        (json!({"filters": {"assignee": "me"}}), "filters.assignee"),
        (json!({"filters": {"tag": ["two words"]}}), "filters.tag"),
        (json!({"filters": {"cf.nope": "x"}}), "filters.cf.nope"),
        (json!({"filters": ["status"]}), "filters"),
        (json!({"sort": "oldest"}), "sort"),
    ];
    for (extra, field) in cases {
        let mut body = json!({"name": "Bad", "visibility": "shared"});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let r = app.post("/views", &acme.key, body).await;
        assert_invalid(&r, &[field]);
    }
    let listed = app.get("/views", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
}

/// A personal key of a new signed-in agent (role `agent`).
async fn agent_key(app: &TestApp, acme: &TestCompany, email: &str) -> String {
    let browser = signed_in(app, acme, email, "agent").await;
    let scopes = json!(["tickets:read", "tickets:write"]);
    let body = json!({"name": "mine", "scopes": scopes});
    let r = send(app, &browser, Method::POST, "/auth/keys", body).await;
    r.assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_string()
}

async fn a_personal_view_is_seen_by_its_agent_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent_key(&app, &acme, "ann@example.com").await;
    let bob = agent_key(&app, &acme, "bob@example.com").await;
    let body = json!({"name": "Mine", "visibility": "personal", "filters": {"status": "OPEN"}});
    let r = app.post("/views", &ann, body).await;
    let id = r.assert_status(201)["id"].as_str().expect("id").to_string();
    let path = format!("/views/{id}");
    app.get(&path, &ann).await.assert_status(200);
    app.get(&path, &bob).await.assert_error(404, "not_found");
    app.get(&format!("{path}/tickets"), &bob)
        .await
        .assert_error(404, "not_found");
    app.delete(&path, &bob).await.assert_error(404, "not_found");
    let listed = app.get("/views", &bob).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
    let listed = app.get("/views", &ann).await;
    assert_eq!(listed.assert_status(200)["data"][0]["id"], id.as_str());
}

async fn a_views_tickets_page_by_cursor(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let older = ticket(&app, &acme, json!({})).await;
    let newer = ticket(&app, &acme, json!({})).await;
    let id = view(&app, &acme, json!({"status": "OPEN"})).await;
    let first = app
        .get(&format!("/views/{id}/tickets?limit=1"), &acme.key)
        .await;
    let cursor = first.assert_status(200)["nextCursor"]
        .as_str()
        .expect("nextCursor")
        .to_string();
    let second = app
        .get(
            &format!("/views/{id}/tickets?limit=1&after={cursor}"),
            &acme.key,
        )
        .await;
    second.assert_status(200);
    assert_eq!(
        (ids(&first.body), ids(&second.body)),
        (vec![newer], vec![older])
    );
}

async fn updating_a_views_filters_replaces_them(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = view(&app, &acme, json!({"status": "OPEN", "tag": ["vip"]})).await;
    let r = app
        .patch(
            &format!("/views/{id}"),
            &acme.key,
            json!({"filters": {"priority": "LOW"}, "sort": "sla_due"}),
        )
        .await;
    r.assert_status(200);
    assert_eq!(
        (
            r.body["filters"].clone(),
            r.body["sort"].clone(),
            r.body["name"].clone()
        ),
        (json!({"priority": "LOW"}), json!("sla_due"), json!("VIP"))
    );
}

async fn views_need_the_ticket_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = view(&app, &acme, json!({})).await;
    let read_only = ScopeSet::from_scopes([Scope::TicketsRead]);
    let reader = app.key(acme.company.id, Mode::Test, read_only).await;
    app.get(&format!("/views/{id}/tickets"), &reader)
        .await
        .assert_status(200);
    let body = json!({"name": "Mine", "visibility": "shared"});
    app.post("/views", &reader, body)
        .await
        .assert_error(403, "insufficient_scope");
    let macros_only = ScopeSet::from_scopes([Scope::MacrosRead]);
    let other = app.key(acme.company.id, Mode::Test, macros_only).await;
    app.get("/views", &other)
        .await
        .assert_error(403, "insufficient_scope");
}

async fn a_view_answers_how_many_tickets_it_selects(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    ticket(&app, &acme, json!({"priority": "HIGH"})).await;
    ticket(&app, &acme, json!({"priority": "HIGH"})).await;
    ticket(&app, &acme, json!({"priority": "LOW"})).await;
    let id = view(&app, &acme, json!({"priority": "HIGH"})).await;
    let r = app.get(&format!("/views/{id}"), &acme.key).await;
    assert_eq!(r.assert_status(200)["count"], 2);
}
