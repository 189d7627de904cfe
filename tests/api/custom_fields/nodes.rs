//! Definitions kept in each node's memory: a change applies to the next
//! create on the node that made it and, over the bus, on every other node.

use supportdesk::snapshots::SNAPSHOT_TTL;

use super::*;
use crate::support::eventually_within;

backend_tests!(a_new_required_field_applies_to_the_next_create_on_its_node);
postgres_tests!(a_new_required_field_applies_on_another_node_within_the_bus_delay);

/// A required text field `plan` on tickets.
async fn define_required_plan(app: &TestApp, acme: &TestCompany) {
    define(
        app,
        acme,
        json!({"key": "plan", "label": "Plan", "type": "text", "appliesTo": ["ticket"],
               "required": true}),
    )
    .await;
}

async fn a_new_required_field_applies_to_the_next_create_on_its_node(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    // The node now holds acme's definitions: none.
    create_ticket(&app, &acme, json!({}))
        .await
        .assert_status(201);
    define_required_plan(&app, &acme).await;
    let r = create_ticket(&app, &acme, json!({})).await;
    assert_invalid(&r, &["customFields.plan"]);
}

/// Node B learns of a definition made on node A over the bus, long before
/// its own snapshot of the definitions would expire (`SNAPSHOT_TTL`).
async fn a_new_required_field_applies_on_another_node_within_the_bus_delay(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    if node_a.config.redis_url.is_none() {
        // Without Redis each node's bus is its own: nothing to show here.
        return;
    }
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    create_ticket(&node_b, &acme, json!({}))
        .await
        .assert_status(201);
    define_required_plan(&node_a, &acme).await;
    let refused = eventually_within(
        "node B refuses tickets without the required field",
        SNAPSHOT_TTL / 2,
        async || {
            let r = create_ticket(&node_b, &acme, json!({})).await;
            (r.status == 400).then_some(r)
        },
    )
    .await;
    assert_invalid(&refused, &["customFields.plan"]);
}
