//! `/settings/business-hours`: create, list, patch, delete, validation and
//! tenancy.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::{create_calendar, office, put_policies};
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    calendars_are_created_listed_patched_and_deleted,
    calendars_are_validated,
    a_calendar_in_use_is_not_deleted,
    calendars_belong_to_one_company_and_mode,
);

async fn calendars_are_created_listed_patched_and_deleted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let r = app.get("/settings/business-hours", key).await;
    assert_eq!(r.assert_status(200)["data"], json!([]));

    let created = create_calendar(&app, &acme, office()).await;
    assert_eq!(created["name"], "Berlin office");
    assert_eq!(created["timezone"], "Europe/Berlin");
    // Sorted by day then opening; holidays sorted and once each.
    assert_eq!(
        created["weekly"][4],
        json!({"day": "fri", "open": "09:00", "close": "12:00"})
    );
    assert_eq!(
        created["weekly"][5],
        json!({"day": "fri", "open": "13:00", "close": "17:00"})
    );
    assert_eq!(created["holidays"], json!(["2026-12-25", "2026-12-26"]));
    let r = app.get("/settings/business-hours", key).await;
    assert_eq!(r.assert_status(200)["data"], json!([created]));

    let path = format!(
        "/settings/business-hours/{}",
        created["id"].as_str().expect("id")
    );
    app.state.clock.advance(chrono::TimeDelta::seconds(1));
    let night = json!([{"day": "sun", "open": "22:00", "close": "06:00"}]);
    let r = app
        .patch(&path, key, json!({"weekly": night, "holidays": null}))
        .await;
    let patched = r.assert_status(200).clone();
    assert_eq!(patched["weekly"], night);
    assert_eq!(patched["holidays"], json!([]));
    assert_eq!(patched["name"], "Berlin office");
    assert_eq!(patched["createdAt"], created["createdAt"]);
    assert_ne!(patched["updatedAt"], created["updatedAt"]);
    // A PATCH that changes nothing leaves updatedAt alone.
    let r = app
        .patch(&path, key, json!({"name": "Berlin office"}))
        .await;
    assert_eq!(*r.assert_status(200), patched);

    let r = app.delete(&path, key).await;
    assert_eq!(r.assert_status(200)["deleted"], true);
    app.delete(&path, key).await.assert_error(404, "not_found");
    app.patch(&path, key, json!({"name": "x"}))
        .await
        .assert_error(404, "not_found");
}

async fn calendars_are_validated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let with = |field: &str, value: Value| {
        let mut body = office();
        body[field] = value;
        body
    };
    let day = |open: &str, close: &str| json!([{"day": "mon", "open": open, "close": close}]);
    let cases: Vec<(Value, &[&str])> = vec![
        (json!({}), &["name", "timezone", "weekly"]),
        (with("timezone", json!("Europe/Atlantis")), &["timezone"]),
        (with("timezone", json!("+02:00")), &["timezone"]),
        (with("weekly", json!([])), &["weekly"]),
        (with("weekly", json!("mon-fri")), &["weekly"]),
        (
            with(
                "weekly",
                json!([{"day": "monday", "open": "9:00", "close": "25:00"}]),
            ),
            &["weekly[0].day", "weekly[0].open", "weekly[0].close"],
        ),
        (with("weekly", day("24:00", "24:00")), &["weekly[0].open"]),
        (with("weekly", day("09:00", "09:00")), &["weekly[0].close"]),
        (
            with(
                "weekly",
                json!([{"day": "mon", "open": "09:00", "close": "17:00", "tz": "x"}]),
            ),
            &["weekly[0].tz"],
        ),
        (
            with("holidays", json!(["2026-02-30", "25.12.2026"])),
            &["holidays[0]", "holidays[1]"],
        ),
        (with("name", json!("")), &["name"]),
    ];
    for (body, fields) in cases {
        let r = app.post("/settings/business-hours", key, body).await;
        assert_invalid(&r, fields);
    }
    let r = app.get("/settings/business-hours", key).await;
    assert_eq!(r.assert_status(200)["data"], json!([]));

    let created = create_calendar(&app, &acme, office()).await;
    let path = format!(
        "/settings/business-hours/{}",
        created["id"].as_str().expect("id")
    );
    let r = app
        .patch(&path, key, json!({"timezone": null, "weekly": null}))
        .await;
    assert_invalid(&r, &["timezone", "weekly"]);
    let r = app.patch(&path, key, json!({"openOnSundays": true})).await;
    r.assert_error(400, "validation_failed");
    let r = app.get("/settings/business-hours", key).await;
    assert_eq!(r.assert_status(200)["data"], json!([created]));
}

async fn a_calendar_in_use_is_not_deleted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let calendar = create_calendar(&app, &acme, office()).await;
    let path = format!(
        "/settings/business-hours/{}",
        calendar["id"].as_str().expect("id")
    );
    put_policies(
        &app,
        key,
        json!([{"name": "Office hours", "businessHoursId": calendar["id"],
                "targets": {"HIGH": {"firstResponseMinutes": 60}}}]),
    )
    .await;

    app.delete(&path, key).await.assert_error(409, "conflict");
    let r = app.get("/settings/business-hours", key).await;
    assert_eq!(r.assert_status(200)["data"], json!([calendar]));

    put_policies(&app, key, json!([])).await;
    app.delete(&path, key).await.assert_status(200);
}

async fn calendars_belong_to_one_company_and_mode(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let calendar = create_calendar(&app, &acme, office()).await;
    let path = format!(
        "/settings/business-hours/{}",
        calendar["id"].as_str().expect("id")
    );

    let r = app.get("/settings/business-hours", &other.key).await;
    assert_eq!(r.assert_status(200)["data"], json!([]));
    app.patch(&path, &other.key, json!({"name": "Mine"}))
        .await
        .assert_error(404, "not_found");
    app.delete(&path, &other.key)
        .await
        .assert_error(404, "not_found");

    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let r = app.get("/settings/business-hours", &live).await;
    assert_eq!(r.assert_status(200)["data"], json!([]));
    // Another tenant's calendar is no calendar for a policy.
    let r = app
        .put(
            "/settings/sla-policies",
            &other.key,
            json!({"policies": [{"name": "P", "businessHoursId": calendar["id"],
                                 "targets": {"LOW": {"resolutionMinutes": 600}}}]}),
        )
        .await;
    assert_invalid(&r, &["policies[0].businessHoursId"]);
}
