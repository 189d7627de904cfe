//! Conditions beyond the ticket's own fields: its contact's and its
//! organisation's fields, and whether a business-hours calendar is open.

use chrono::Datelike;
use serde_json::{Value, json};

use super::{mark, quiet, tags, trigger, triggers};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_contact_condition_reads_the_tickets_contact,
    an_organization_condition_reads_the_contacts_organization,
    within_business_hours_reads_whether_the_calendar_is_open_now,
    a_calendar_of_another_company_is_refused,
);

/// A new ticket of `acme` from `email`; its id.
async fn ticket_from(app: &TestApp, acme: &TestCompany, email: &str) -> String {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Help", "entityId": acme.entity.id, "visitorEmail": email}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// A trigger on `ticket.created` with `condition` that marks the ticket;
/// two tickets, from `hit` and `miss`, the pass run; the tags of each.
async fn run(
    app: &TestApp,
    acme: &TestCompany,
    condition: Value,
    hit: &str,
    miss: &str,
) -> (Value, Value) {
    trigger(
        app,
        acme,
        json!(["ticket.created"]),
        json!([condition]),
        mark(),
    )
    .await;
    let a = ticket_from(app, acme, hit).await;
    let b = ticket_from(app, acme, miss).await;
    triggers(app).await;
    (tags(app, acme, &a).await, tags(app, acme, &b).await)
}

async fn a_contact_condition_reads_the_tickets_contact(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    app.post(
        "/contacts",
        &acme.key,
        json!({"name": "Vera", "emails": ["vera@example.com"], "tags": ["vip"]}),
    )
    .await
    .assert_status(201);
    let condition = json!({"field": "contact.tags", "operator": "is", "value": "VIP"});
    let got = run(
        &app,
        &acme,
        condition,
        "vera@example.com",
        "nobody@example.com",
    )
    .await;
    assert_eq!(got, (json!(["hit"]), json!([])));
}

async fn an_organization_condition_reads_the_contacts_organization(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    app.post(
        "/organizations",
        &acme.key,
        json!({"name": "Big Co", "domains": ["big.example"]}),
    )
    .await
    .assert_status(201);
    let condition = json!({"field": "organization.name", "operator": "contains", "value": "big"});
    let got = run(
        &app,
        &acme,
        condition,
        "ann@big.example",
        "bob@small.example",
    )
    .await;
    assert_eq!(got, (json!(["hit"]), json!([])));
}

/// A business-hours calendar of `acme` open on `day` from `open` to
/// `close` (UTC); its id.
async fn calendar(app: &TestApp, acme: &TestCompany, day: &str, open: &str, close: &str) -> Value {
    let weekly = json!([{"day": day, "open": open, "close": close}]);
    let body = json!({"name": day, "timezone": "UTC", "weekly": weekly});
    let r = app.post("/settings/business-hours", &acme.key, body).await;
    r.assert_status(201)["id"].clone()
}

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

async fn within_business_hours_reads_whether_the_calendar_is_open_now(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let today = app.state.clock.now().0.weekday().num_days_from_monday() as usize;
    let open = calendar(&app, &acme, DAYS[today], "00:00", "24:00").await;
    let closed = calendar(&app, &acme, DAYS[(today + 3) % 7], "09:00", "17:00").await;
    let rules = [
        ("is", &open, "inside"),
        ("is", &closed, "wrong"),
        ("is_not", &closed, "outside"),
    ];
    for (operator, calendar, tag) in rules {
        let condition = json!({"field": "withinBusinessHours", "operator": operator,
                               "value": calendar});
        let action = json!([{"type": "add_tags", "value": [tag]}]);
        trigger(
            &app,
            &acme,
            json!(["ticket.created"]),
            json!([condition]),
            action,
        )
        .await;
    }
    let id = ticket_from(&app, &acme, "vic@example.com").await;
    triggers(&app).await;
    assert_eq!(tags(&app, &acme, &id).await, json!(["inside", "outside"]));
}

async fn a_calendar_of_another_company_is_refused(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let theirs = calendar(&app, &other, "mon", "09:00", "17:00").await;
    let r = app
        .post(
            "/automations",
            &acme.key,
            json!({"name": "Hours", "kind": "trigger", "events": ["ticket.created"],
                   "conditions": {"all": [{"field": "withinBusinessHours", "operator": "is",
                                           "value": theirs}]},
                   "actions": mark()}),
        )
        .await;
    crate::support::assert_invalid(&r, &["conditions.all[0].value"]);
}
