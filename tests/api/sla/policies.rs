//! `/settings/sla-policies`: the ordered list, replaced whole, its
//! defaults and validation.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};
use uuid::Uuid;

use super::{create_calendar, office, put_policies};
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    policies_are_replaced_in_order,
    policies_are_validated,
    policies_belong_to_one_company_and_mode,
    a_policy_names_only_a_team_of_its_company_and_mode,
);

async fn policies_are_replaced_in_order(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let calendar = create_calendar(&app, &acme, office()).await;
    let r = app
        .post("/teams", key, json!({"name": "VIP desk", "memberIds": []}))
        .await;
    let team = r.assert_status(201)["id"].clone();
    let r = app.get("/settings/sla-policies", key).await;
    assert_eq!(r.assert_status(200)["policies"], json!([]));

    let saved = put_policies(
        &app,
        key,
        json!([
            {"name": "VIP", "conditions": {"priorities": ["URGENT", "HIGH", "URGENT"],
              "entityId": acme.entity.id, "tags": ["VIP", "vip"],
              "teamId": team},
             "targets": {"URGENT": {"firstResponseMinutes": 15, "resolutionMinutes": 240},
                         "HIGH": {"nextResponseMinutes": 60}},
             "businessHoursId": calendar["id"], "pauseOn": ["IN_PROGRESS"], "warnMinutes": 30},
            {"name": "Everyone else", "enabled": false,
             "targets": {"LOW": {"resolutionMinutes": 4800}}},
        ]),
    )
    .await;
    assert_eq!(saved.len(), 2);
    let vip = &saved[0];
    assert!(Uuid::parse_str(vip["id"].as_str().expect("id")).is_ok());
    assert_eq!(vip["enabled"], true);
    assert_eq!(
        vip["conditions"],
        json!({"priorities": ["URGENT", "HIGH"], "entityId": acme.entity.id,
               "teamId": team, "tags": ["vip"],
               "customFields": null})
    );
    assert_eq!(
        vip["targets"],
        json!({"HIGH": {"firstResponseMinutes": null, "nextResponseMinutes": 60,
                        "resolutionMinutes": null},
               "URGENT": {"firstResponseMinutes": 15, "nextResponseMinutes": null,
                          "resolutionMinutes": 240}})
    );
    assert_eq!(vip["businessHoursId"], calendar["id"]);
    assert_eq!(vip["pauseOn"], json!(["IN_PROGRESS"]));
    assert_eq!(vip["warnMinutes"], 30);
    // Defaults: every ticket, around the clock, nothing extra to pause
    // on, warned 15 business minutes ahead.
    let rest = &saved[1];
    assert_eq!(rest["enabled"], false);
    assert_eq!(
        rest["conditions"],
        json!({"priorities": null, "entityId": null, "teamId": null, "tags": null,
               "customFields": null})
    );
    assert_eq!(rest["businessHoursId"], Value::Null);
    assert_eq!(rest["pauseOn"], json!([]));
    assert_eq!(rest["warnMinutes"], 15);
    let r = app.get("/settings/sla-policies", key).await;
    assert_eq!(r.assert_status(200)["policies"], json!(saved));

    // What GET returns can be sent back as is: nothing changes.
    assert_eq!(put_policies(&app, key, json!(saved)).await, saved);

    // Reordered, the second changed: the order is the list's.
    let mut changed = rest.clone();
    changed["enabled"] = json!(true);
    app.state.clock.advance(chrono::TimeDelta::seconds(1));
    let reordered = put_policies(&app, key, json!([changed, vip])).await;
    assert_eq!(reordered[0]["id"], rest["id"]);
    assert_eq!(reordered[0]["enabled"], true);
    assert_eq!(reordered[0]["createdAt"], rest["createdAt"]);
    assert_ne!(reordered[0]["updatedAt"], rest["updatedAt"]);
    assert_eq!(reordered[1], *vip);

    assert_eq!(
        put_policies(&app, key, json!([])).await,
        Vec::<Value>::new()
    );
}

async fn policies_are_validated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let targets = json!({"HIGH": {"firstResponseMinutes": 60}});
    let saved = put_policies(&app, key, json!([{"name": "Kept", "targets": targets}])).await;
    let one = |policy: Value| json!({"policies": [policy]});
    let with = |field: &str, value: Value| {
        let mut policy = json!({"name": "P", "targets": targets});
        policy[field] = value;
        one(policy)
    };
    let cases: Vec<(Value, &[&str])> = vec![
        (json!({}), &["policies"]),
        (one(json!({})), &["policies[0].name", "policies[0].targets"]),
        (with("targets", json!({})), &["policies[0].targets"]),
        (
            with("targets", json!({"high": {"firstResponseMinutes": 5}})),
            &["policies[0].targets.high"],
        ),
        (
            with("targets", json!({"HIGH": {}})),
            &["policies[0].targets.HIGH"],
        ),
        (
            with(
                "targets",
                json!({"HIGH": {"firstResponseMinutes": 0, "replyMinutes": 5}}),
            ),
            &[
                "policies[0].targets.HIGH.replyMinutes",
                "policies[0].targets.HIGH.firstResponseMinutes",
            ],
        ),
        (
            with("targets", json!({"HIGH": {"resolutionMinutes": "1h"}})),
            &["policies[0].targets.HIGH.resolutionMinutes"],
        ),
        (
            with("pauseOn", json!(["RESOLVED"])),
            &["policies[0].pauseOn"],
        ),
        (
            with("pauseOn", json!(["waiting"])),
            &["policies[0].pauseOn"],
        ),
        (with("warnMinutes", json!(-1)), &["policies[0].warnMinutes"]),
        (
            with("businessHoursId", json!("monday")),
            &["policies[0].businessHoursId"],
        ),
        (
            with("businessHoursId", json!(Uuid::new_v4())),
            &["policies[0].businessHoursId"],
        ),
        (
            with(
                "conditions",
                json!({"priorities": ["high"], "teamId": "t1"}),
            ),
            &[
                "policies[0].conditions.priorities",
                "policies[0].conditions.teamId",
            ],
        ),
        (
            with("conditions", json!({"entityId": Uuid::new_v4()})),
            &["policies[0].conditions.entityId"],
        ),
        (
            with("conditions", json!({"customFields": {"plan": "pro"}})),
            &["policies[0].conditions.customFields.plan"],
        ),
        (with("id", json!(Uuid::new_v4())), &["policies[0].id"]),
        (
            json!({"policies": [
                {"id": saved[0]["id"], "name": "A", "targets": targets},
                {"id": saved[0]["id"], "name": "B", "targets": targets},
            ]}),
            &["policies[1].id"],
        ),
    ];
    for (body, fields) in cases {
        let r = app.put("/settings/sla-policies", key, body).await;
        assert_invalid(&r, fields);
    }
    let r = app
        .put(
            "/settings/sla-policies",
            key,
            with("conditions", json!({"statuses": ["OPEN"]})),
        )
        .await;
    r.assert_error(400, "validation_failed");
    let r = app.get("/settings/sla-policies", key).await;
    assert_eq!(r.assert_status(200)["policies"], json!(saved));
}

async fn policies_belong_to_one_company_and_mode(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let saved = put_policies(
        &app,
        &acme.key,
        json!([{"name": "Acme", "targets": {"LOW": {"resolutionMinutes": 600}}}]),
    )
    .await;
    let r = app.get("/settings/sla-policies", &other.key).await;
    assert_eq!(r.assert_status(200)["policies"], json!([]));
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let r = app.get("/settings/sla-policies", &live).await;
    assert_eq!(r.assert_status(200)["policies"], json!([]));
    // Another tenant's policy id is no id to keep.
    let r = app
        .put(
            "/settings/sla-policies",
            &other.key,
            json!({"policies": saved}),
        )
        .await;
    assert_invalid(&r, &["policies[0].id"]);
    let r = app.get("/settings/sla-policies", &acme.key).await;
    assert_eq!(r.assert_status(200)["policies"], json!(saved));
}

async fn a_policy_names_only_a_team_of_its_company_and_mode(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let r = app
        .post(
            "/teams",
            &other.key,
            json!({"name": "Theirs", "memberIds": []}),
        )
        .await;
    let theirs = r.assert_status(201)["id"].as_str().expect("id").to_string();
    let policy = |team: &str| {
        json!({"policies": [{
            "name": "Team",
            "conditions": {"teamId": team},
            "targets": {"LOW": {"resolutionMinutes": 600}},
        }]})
    };
    let r = app
        .put("/settings/sla-policies", &acme.key, policy(&theirs))
        .await;
    assert_invalid(&r, &["policies[0].conditions.teamId"]);
    let r = app.get("/settings/sla-policies", &acme.key).await;
    assert_eq!(r.assert_status(200)["policies"], json!([]));
}
