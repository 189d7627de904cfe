//! `/settings` and `/settings/escalation-rules`: reading, writing,
//! validation, scopes and tenancy.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};
use uuid::Uuid;

use super::{assert_invalid, put_rules, user};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    company_profile_is_read_and_patched,
    rules_are_replaced_and_listed,
    rules_are_validated,
    rules_belong_to_one_company_and_mode,
    settings_and_reports_need_their_scopes,
);

async fn company_profile_is_read_and_patched(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();

    let r = app.get("/settings", key).await;
    let initial = r.assert_status(200).clone();
    assert_eq!(initial["id"], json!(acme.company.id));
    assert_eq!(initial["name"], "Acme");
    assert_eq!(initial["timezone"], "UTC");

    // Time passes before the change, so its stamp differs.
    app.state.clock.advance(chrono::TimeDelta::seconds(1));
    let r = app
        .patch("/settings", key, json!({"timezone": "Europe/Paris"}))
        .await;
    let patched = r.assert_status(200).clone();
    assert_eq!(patched["timezone"], "Europe/Paris");
    assert_eq!(patched["name"], "Acme");
    assert_ne!(patched["updatedAt"], initial["updatedAt"]);

    let r = app
        .patch("/settings", key, json!({"name": "  Acme Corp "}))
        .await;
    assert_eq!(r.assert_status(200)["name"], "Acme Corp");

    // A PATCH that changes nothing leaves updatedAt alone.
    let before = app.get("/settings", key).await.body.clone();
    let r = app
        .patch(
            "/settings",
            key,
            json!({"name": "Acme Corp", "timezone": "Europe/Paris"}),
        )
        .await;
    assert_eq!(*r.assert_status(200), before);

    // Company-wide: a LIVE key of the company sees the same profile.
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let r = app.get("/settings", &live).await;
    assert_eq!(*r.assert_status(200), before);

    let cases: Vec<(Value, &[&str])> = vec![
        (json!({}), &["body"]),
        (json!({"timezone": "+02:00"}), &["timezone"]),
        (json!({"timezone": "Mars/Olympus_Mons"}), &["timezone"]),
        (json!({"timezone": null}), &["timezone"]),
        (json!({"name": ""}), &["name"]),
        (
            json!({"name": null, "timezone": "utc"}),
            &["name", "timezone"],
        ),
        (json!({"name": "x".repeat(256)}), &["name"]),
    ];
    for (body, fields) in cases {
        let r = app.patch("/settings", key, body).await;
        assert_invalid(&r, fields);
    }
    let r = app
        .patch("/settings", key, json!({"defaultTicketPriority": "HIGH"}))
        .await;
    r.assert_error(400, "validation_failed");
    // Nothing above changed the profile.
    assert_eq!(app.get("/settings", key).await.body, before);
}

async fn rules_are_replaced_and_listed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let bob = user(&app, acme.company.id, "Bob").await;
    let r = app.get("/settings/escalation-rules", key).await;
    assert_eq!(r.assert_status(200)["rules"], json!([]));

    let saved = put_rules(
        &app,
        key,
        json!([
            {"name": "Urgent and unassigned", "conditions": {"priorities": ["URGENT", "HIGH", "URGENT"],
             "unassigned": true, "minutesSinceCreated": 30},
             "action": {"escalateToId": bob.id, "reason": "SLA"}},
            {"name": "Stale", "enabled": false,
             "conditions": {"statuses": ["OPEN"], "entityId": acme.entity.id,
                            "minutesSinceLastActivity": 0},
             "action": {"escalateToId": bob.id}},
        ]),
    )
    .await;
    assert_eq!(saved.len(), 2);
    let first = &saved[0];
    assert!(Uuid::parse_str(first["id"].as_str().expect("id")).is_ok());
    assert_eq!(first["name"], "Urgent and unassigned");
    assert_eq!(first["enabled"], true);
    assert_eq!(
        first["conditions"],
        json!({"priorities": ["URGENT", "HIGH"], "statuses": null, "entityId": null,
               "unassigned": true, "minutesSinceCreated": 30, "minutesSinceLastActivity": null,
               "tags": null, "anyTags": null, "customFields": null})
    );
    assert_eq!(
        first["action"],
        json!({"escalateToId": bob.id, "reason": "SLA"})
    );
    assert_eq!(saved[1]["enabled"], false);
    assert_eq!(saved[1]["conditions"]["entityId"], json!(acme.entity.id));
    assert_eq!(saved[1]["action"]["reason"], Value::Null);
    let r = app.get("/settings/escalation-rules", key).await;
    assert_eq!(r.assert_status(200)["rules"], json!(saved));

    // What GET returns can be sent back as is: nothing changes.
    let again = put_rules(&app, key, json!(saved)).await;
    assert_eq!(again, saved);

    // Keep the first (renamed, so it moves to second place), drop the
    // second, add a new one.
    let mut kept = first.clone();
    kept["name"] = json!("Urgent, unassigned");
    app.state.clock.advance(chrono::TimeDelta::seconds(1));
    let replaced = put_rules(
        &app,
        key,
        json!([
            {"name": "New", "conditions": {"unassigned": false}, "action": {"escalateToId": bob.id}},
            kept,
        ]),
    )
    .await;
    assert_eq!(replaced.len(), 2);
    assert_ne!(replaced[0]["id"], first["id"]);
    assert_ne!(replaced[0]["id"], saved[1]["id"]);
    assert_eq!(replaced[1]["id"], first["id"]);
    assert_eq!(replaced[1]["name"], "Urgent, unassigned");
    assert_eq!(replaced[1]["createdAt"], first["createdAt"]);
    assert_ne!(replaced[1]["updatedAt"], first["updatedAt"]);

    assert_eq!(put_rules(&app, key, json!([])).await, Vec::<Value>::new());
    let r = app.get("/settings/escalation-rules", key).await;
    assert_eq!(r.assert_status(200)["rules"], json!([]));
}

async fn rules_are_validated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let key = acme.key.as_str();
    let bob = user(&app, acme.company.id, "Bob").await;
    let stranger = user(&app, other.company.id, "Stranger").await;
    let saved = put_rules(
        &app,
        key,
        json!([{"name": "Kept", "conditions": {"unassigned": true},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    let id = saved[0]["id"].clone();

    let rule = |conditions: Value, action: Value| json!({"rules": [{"name": "R", "conditions": conditions, "action": action}]});
    let ok_action = json!({"escalateToId": bob.id});
    let ok_conditions = json!({"unassigned": true});
    let cases: Vec<(Value, &[&str])> = vec![
        (json!({}), &["rules"]),
        (
            json!({"rules": [{"conditions": ok_conditions, "action": ok_action}]}),
            &["rules[0].name"],
        ),
        (
            json!({"rules": [{"name": "R", "action": ok_action}]}),
            &["rules[0].conditions"],
        ),
        (
            json!({"rules": [{"name": "R", "conditions": ok_conditions}]}),
            &["rules[0].action"],
        ),
        (rule(json!({}), ok_action.clone()), &["rules[0].conditions"]),
        (
            rule(json!({"priorities": ["high"]}), ok_action.clone()),
            &["rules[0].conditions.priorities"],
        ),
        (
            rule(json!({"statuses": []}), ok_action.clone()),
            &["rules[0].conditions.statuses"],
        ),
        (
            rule(json!({"statuses": ["Open"]}), ok_action.clone()),
            &["rules[0].conditions.statuses"],
        ),
        (
            rule(json!({"minutesSinceCreated": -1}), ok_action.clone()),
            &["rules[0].conditions.minutesSinceCreated"],
        ),
        (
            rule(
                json!({"minutesSinceLastActivity": 100_000_000}),
                ok_action.clone(),
            ),
            &["rules[0].conditions.minutesSinceLastActivity"],
        ),
        (
            rule(json!({"entityId": "nope"}), ok_action.clone()),
            &["rules[0].conditions.entityId"],
        ),
        (
            rule(ok_conditions.clone(), json!({})),
            &["rules[0].action.escalateToId"],
        ),
        (
            rule(
                ok_conditions.clone(),
                json!({"escalateToId": bob.id, "reason": "r".repeat(1001)}),
            ),
            &["rules[0].action.reason"],
        ),
        // References outside the company (or unknown) are 400 too.
        (
            rule(ok_conditions.clone(), json!({"escalateToId": stranger.id})),
            &["rules[0].action.escalateToId"],
        ),
        (
            rule(json!({"entityId": other.entity.id}), ok_action.clone()),
            &["rules[0].conditions.entityId"],
        ),
        (
            json!({"rules": [{"id": Uuid::now_v7(), "name": "R", "conditions": ok_conditions,
                              "action": ok_action}]}),
            &["rules[0].id"],
        ),
        (
            json!({"rules": [
                {"id": id, "name": "A", "conditions": ok_conditions, "action": ok_action},
                {"id": id, "name": "B", "conditions": ok_conditions, "action": ok_action}]}),
            &["rules[1].id"],
        ),
        // Every problem of every rule is listed.
        (
            json!({"rules": [
                {"name": "", "conditions": {"priorities": ["LOW"]}, "action": ok_action},
                {"name": "B", "conditions": {"unassigned": true, "statuses": ["DONE"]},
                 "action": {"escalateToId": "x"}}]}),
            &[
                "rules[0].name",
                "rules[1].conditions.statuses",
                "rules[1].action.escalateToId",
            ],
        ),
    ];
    for (body, fields) in cases {
        let r = app.put("/settings/escalation-rules", key, body).await;
        assert_invalid(&r, fields);
    }
    // Misspelt keys and wrong types are refused, never ignored.
    for body in [
        rule(json!({"minutesSinceCreate": 5}), ok_action.clone()),
        rule(json!({"unassigned": "yes"}), ok_action.clone()),
        json!({"rules": [{"name": "R", "enabled": "no", "conditions": ok_conditions,
                          "action": ok_action}]}),
        json!({"rules": {"name": "R"}}),
    ] {
        let r = app.put("/settings/escalation-rules", key, body).await;
        r.assert_error(400, "validation_failed");
    }
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"name": format!("R{i}"), "conditions": ok_conditions, "action": ok_action}))
        .collect();
    let r = app
        .put("/settings/escalation-rules", key, json!({"rules": many}))
        .await;
    assert_invalid(&r, &["rules"]);

    // Nothing above changed the list.
    let r = app.get("/settings/escalation-rules", key).await;
    assert_eq!(r.assert_status(200)["rules"], json!(saved));
}

async fn rules_belong_to_one_company_and_mode(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let saved = put_rules(
        &app,
        &acme.key,
        json!([{"name": "Test mode", "conditions": {"minutesSinceCreated": 0},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;

    // The other mode and the other company see none of them...
    for key in [live.as_str(), other.key.as_str()] {
        let r = app.get("/settings/escalation-rules", key).await;
        assert_eq!(r.assert_status(200)["rules"], json!([]));
    }
    // ...cannot keep them by id...
    let r = app
        .put(
            "/settings/escalation-rules",
            &live,
            json!({"rules": [{"id": saved[0]["id"], "name": "Steal",
                              "conditions": {"unassigned": true},
                              "action": {"escalateToId": bob.id}}]}),
        )
        .await;
    assert_invalid(&r, &["rules[0].id"]);
    // ...and replacing their own lists leaves this one alone. Users are
    // shared by both modes, so the LIVE list may target Bob.
    put_rules(
        &app,
        &live,
        json!([{"name": "Live mode", "conditions": {"unassigned": true},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    put_rules(&app, &other.key, json!([])).await;
    let r = app.get("/settings/escalation-rules", &acme.key).await;
    assert_eq!(r.assert_status(200)["rules"], json!(saved));
    let r = app.get("/settings/escalation-rules", &live).await;
    assert_eq!(r.assert_status(200)["rules"][0]["name"], "Live mode");
}

async fn settings_and_reports_need_their_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = acme.company.id;
    let read_only = app
        .key(id, Mode::Test, ScopeSet::from_scopes([Scope::SettingsRead]))
        .await;
    let no_settings = app
        .key(
            id,
            Mode::Test,
            ScopeSet::all()
                .without(Scope::SettingsRead)
                .without(Scope::SettingsWrite),
        )
        .await;
    let no_reports = app
        .key(id, Mode::Test, ScopeSet::all().without(Scope::ReportsRead))
        .await;

    app.get("/settings", &read_only).await.assert_status(200);
    app.get("/settings/escalation-rules", &read_only)
        .await
        .assert_status(200);
    for r in [
        app.patch("/settings", &read_only, json!({"name": "X"}))
            .await,
        app.put(
            "/settings/escalation-rules",
            &read_only,
            json!({"rules": []}),
        )
        .await,
    ] {
        r.assert_error(403, "insufficient_scope");
        assert_eq!(
            r.body["error"],
            "Missing required permission: settings:write"
        );
    }
    for path in ["/settings", "/settings/escalation-rules"] {
        let r = app.get(path, &no_settings).await;
        r.assert_error(403, "insufficient_scope");
        assert_eq!(
            r.body["error"],
            "Missing required permission: settings:read"
        );
    }
    let r = app.get("/reports/tickets", &no_reports).await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"], "Missing required permission: reports:read");
    app.get("/reports/tickets", &read_only)
        .await
        .assert_error(403, "insufficient_scope");
}
