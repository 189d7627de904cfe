//! Escalation makes a ticket URGENT: under a policy that sets no URGENT
//! targets its clocks keep running against the targets they had, rather
//! than the SLA (and its badge) silently going.

use serde_json::{Value, json};

use super::put_policies;
use super::tickets::{comment, plus, quiet, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};
use crate::tickets::user;

backend_tests!(escalating_to_a_priority_without_targets_keeps_the_previous_targets);

/// One catch-all policy with MEDIUM targets only.
async fn medium_only(app: &TestApp, acme: &TestCompany) -> Vec<Value> {
    put_policies(
        app,
        &acme.key,
        json!([{"name": "Everyone",
                "targets": {"MEDIUM": {"firstResponseMinutes": 60, "nextResponseMinutes": 30,
                                       "resolutionMinutes": 480}}}]),
    )
    .await
}

async fn escalating_to_a_priority_without_targets_keeps_the_previous_targets(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let policies = medium_only(&app, &acme).await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let t = ticket(&app, &acme, "MEDIUM").await;
    let id = t["id"].as_str().expect("id");

    let r = app
        .post(
            &format!("/tickets/{id}/escalate"),
            &acme.key,
            json!({"escalateToId": bob.id}),
        )
        .await;
    let escalated = r.assert_status(200);
    assert_eq!(escalated["priority"], "URGENT");
    let sla = &escalated["sla"];
    assert_eq!(sla["policyId"], policies[0]["id"]);
    assert_eq!(sla["firstResponseDueAt"], plus(&t["createdAt"], 60));
    assert_eq!(sla["resolutionDueAt"], plus(&t["createdAt"], 480));

    // Later changes keep counting against the MEDIUM targets: a customer's
    // comment starts a next response due in MEDIUM's 30 minutes.
    let c = comment(
        &app,
        &acme,
        &t,
        json!({"body": "Still broken", "authorType": "customer"}),
    )
    .await;
    let r = app.get(&format!("/tickets/{id}"), &acme.key).await;
    let sla = &r.assert_status(200)["sla"];
    assert_eq!(sla["nextResponseDueAt"], plus(&c["createdAt"], 30));
    assert_eq!(sla["resolutionDueAt"], plus(&t["createdAt"], 480));
}
