//! Tenant isolation on the route table: every route called with another
//! company's ids (or the other mode's) is 404, and the records are left
//! unchanged.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::tenant_records::{call, id, records_of};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(another_tenants_ids_are_404_on_every_route);

/// A body that passes validation for each write route, so the request gets
/// as far as looking the record up. A route missing here fails the test
/// (with a 400), so new routes are added to the table.
pub(crate) fn valid_body(method: &Method, path: &str, other_user: &str) -> Option<Value> {
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
        ("PATCH", "/roles/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/contacts/{id}") => json!({"name": "Renamed"}),
        ("POST", "/contacts/{id}/merge") => json!({"into": uuid::Uuid::now_v7()}),
        ("PATCH", "/organizations/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/channels/email/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/macros/{id}") => json!({"name": "Renamed"}),
        ("PATCH", "/automations/{id}") => json!({"name": "Renamed"}),
        ("POST", "/automations/{id}/dry-run") => json!({}),
        ("PATCH", "/views/{id}") => json!({"name": "Renamed"}),
        ("POST", "/tickets/{id}/macros/{macroId}/preview") => json!({}),
        ("POST", "/tickets/{id}/macros/{macroId}/apply") => json!({}),
        ("POST", "/tickets/{id}/links") => {
            json!({"ticketId": uuid::Uuid::now_v7(), "kind": "related"})
        }
        ("POST", "/tickets/{id}/merge") => json!({"into": uuid::Uuid::now_v7()}),
        ("POST", "/tickets/{id}/split") => json!({"commentId": uuid::Uuid::now_v7()}),
        ("POST", "/chat/sessions/{id}/messages") => {
            json!({"body": "Hi", "senderType": "visitor"})
        }
        _ => return None,
    };
    Some(body)
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
        "roles" => "role",
        "attachments" => "attachment",
        "contacts" => "contact",
        "jobs" => "job",
        "organizations" => "organization",
        "macros" => "macro",
        "automations" => "automation",
        "views" => "view",
        "channels" => "email channel",
        other => panic!("no record kind for /{other}: add it to the isolation table"),
    };
    path.replace("{id}", &ids[kind])
        .replace("{key}", &ids[kind])
        .replace("{userId}", &ids["user"])
        .replace("{deliveryId}", &ids["delivery"])
        // The other record of a link, a macro or a comment: unknown to both
        // companies, so only the ticket decides the answer.
        .replace("{ticketId}", &uuid::Uuid::nil().to_string())
        .replace("{macroId}", &uuid::Uuid::nil().to_string())
        .replace("{commentId}", &uuid::Uuid::nil().to_string())
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
        // Entities, users, roles and presence are shared by A's two modes.
        let shared = spec.path.starts_with("/entities")
            || spec.path.starts_with("/users")
            || spec.path.starts_with("/roles")
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
        format!("/roles/{}", ids["role"]),
        format!("/contacts/{}", ids["contact"]),
        format!("/organizations/{}", ids["organization"]),
        format!("/macros/{}", ids["macro"]),
        format!("/automations/{}", ids["automation"]),
        format!("/views/{}", ids["view"]),
        format!("/channels/email/{}", ids["email channel"]),
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
