//! The report's SLA figures for a fixed data set: met and breached per
//! metric and priority, and first-response percentiles in business
//! minutes, the same on both backends.

use chrono::Duration;
use serde_json::{Value, json};

use super::tickets::{comment, pass, quiet, set_status, ticket, two_policies};
use crate::backend_tests;
use crate::support::Backend;

backend_tests!(sla_achievement_for_a_fixed_data_set);

/// Sets the business time a ticket's first response took.
async fn first_response_took(app: &crate::support::TestApp, ticket: &Value, seconds: i64) {
    let id = uuid::Uuid::parse_str(ticket["id"].as_str().expect("id")).expect("uuid");
    let n = supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE ticket_sla SET used_seconds = $1 WHERE ticket_id = $2 AND metric = 'first_response'")
        .bind(seconds).bind(id).execute(c).await.expect("updated").rows_affected());
    assert_eq!(n, 1);
}

async fn sla_achievement_for_a_fixed_data_set(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let (a, b, _late) = (
        ticket(&app, &acme, "MEDIUM").await,
        ticket(&app, &acme, "MEDIUM").await,
        ticket(&app, &acme, "MEDIUM").await,
    );
    let (d, e) = (
        ticket(&app, &acme, "HIGH").await,
        ticket(&app, &acme, "HIGH").await,
    );
    comment(&app, &acme, &a, json!({"body": "On it"})).await;
    comment(&app, &acme, &b, json!({"body": "On it"})).await;
    // MEDIUM answers within 60 minutes, HIGH within 30: c, d and e breach.
    app.state.clock.advance(Duration::minutes(61));
    pass(&app).await;
    comment(&app, &acme, &d, json!({"body": "Sorry, on it"})).await;
    set_status(&app, &acme, &e, "RESOLVED").await;
    first_response_took(&app, &a, 600).await;
    first_response_took(&app, &b, 1800).await;
    first_response_took(&app, &d, 5400).await;

    let r = app.get("/reports/tickets", &acme.key).await;
    assert_eq!(
        r.assert_status(200)["sla"],
        json!({
            "achievement": [
                {"metric": "firstResponse", "priority": "MEDIUM", "met": 2, "breached": 1,
                 "percentMet": 66.7},
                {"metric": "firstResponse", "priority": "HIGH", "met": 0, "breached": 2,
                 "percentMet": 0.0},
                {"metric": "resolution", "priority": "HIGH", "met": 1, "breached": 0,
                 "percentMet": 100.0},
            ],
            // 10, 30 and 90 minutes: the median is 30, p90 30 + 0.8 × 60.
            "firstResponse": {"count": 3, "medianBusinessMinutes": 30.0,
                              "p90BusinessMinutes": 78.0},
        })
    );
}
