//! GET /tickets?assigned=: the unassigned inbox (and its opposite), with an
//! exact total; a saved view keeps the filter.

use super::*;

backend_tests!(
    assigned_false_lists_the_unassigned_tickets_with_their_total,
    assigned_true_lists_the_assigned_tickets,
    an_assigned_value_that_is_no_boolean_is_400,
    a_view_keeps_the_assigned_filter,
);

/// Three tickets of `acme`, the middle one then assigned (a ticket is
/// created unassigned; PATCH gives it an agent): (assigned, unassigned ids).
async fn three_tickets(app: &TestApp, acme: &TestCompany) -> (Vec<String>, Vec<String>) {
    let ann = user(app, acme.company.id, "Ann").await;
    let mut assigned = Vec::new();
    let mut unassigned = Vec::new();
    for i in 0..3 {
        let created = ticket(app, acme, json!({"subject": format!("Ticket {i}")})).await;
        let id = id_of(&created);
        if i == 1 {
            app.patch(
                &format!("/tickets/{id}"),
                &acme.key,
                json!({"assignedToId": ann.id}),
            )
            .await
            .assert_status(200);
            assigned.insert(0, id);
        } else {
            unassigned.insert(0, id);
        }
    }
    (assigned, unassigned)
}

fn ids(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(id_of)
        .collect()
}

async fn assigned_false_lists_the_unassigned_tickets_with_their_total(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, unassigned) = three_tickets(&app, &acme).await;

    let r = app.get("/tickets?assigned=false", &acme.key).await;

    let body = r.assert_status(200);
    assert_eq!((ids(body), &body["total"]), (unassigned, &json!(2)));
}

async fn assigned_true_lists_the_assigned_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (assigned, _) = three_tickets(&app, &acme).await;

    let r = app.get("/tickets?assigned=true", &acme.key).await;

    let body = r.assert_status(200);
    assert_eq!((ids(body), &body["total"]), (assigned, &json!(1)));
}

async fn an_assigned_value_that_is_no_boolean_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let r = app.get("/tickets?assigned=nobody", &acme.key).await;

    crate::support::assert_invalid(&r, &["assigned"]);
}

async fn a_view_keeps_the_assigned_filter(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, unassigned) = three_tickets(&app, &acme).await;
    let view = app
        .post(
            "/views",
            &acme.key,
            json!({"name": "Nobody's", "visibility": "shared", "filters": {"assigned": "false"}}),
        )
        .await;
    let view = view.assert_status(201).clone();

    let r = app
        .get(&format!("/views/{}/tickets", id_of(&view)), &acme.key)
        .await;

    assert_eq!(
        (&view["filters"], ids(r.assert_status(200))),
        (&json!({"assigned": false}), unassigned)
    );
}
