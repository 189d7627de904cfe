//! Links between tickets: one row shown from both sides with the inverse
//! kind, in webhooks with its actor, removable; a parent waits for its open
//! children unless forced or allowed by the company.

use serde_json::json;

use super::{bodies, get_ticket, links_of, quiet, subscribe, ticket};
use crate::actors::key_actor;
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    a_link_shows_on_both_tickets_with_the_inverse_kind,
    linking_emits_ticket_linked_with_its_actor_on_both_tickets,
    a_pair_takes_one_link,
    a_removed_link_leaves_both_tickets,
    a_ticket_of_another_company_cannot_be_linked,
    a_parent_with_an_open_child_refuses_resolve,
    force_resolves_a_parent_with_an_open_child,
    the_company_setting_lets_parents_resolve,
    a_parent_resolves_once_its_children_are_resolved,
);

async fn a_link_shows_on_both_tickets_with_the_inverse_kind(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let parent = ticket(&app, &acme, "Outage").await;
    let child = ticket(&app, &acme, "Cannot log in").await;

    let r = app
        .post(
            &format!("/tickets/{child}/links"),
            &acme.key,
            json!({"ticketId": parent, "kind": "child_of"}),
        )
        .await;
    let link = r.assert_status(201);
    assert_eq!(link["kind"], "child_of");
    assert_eq!(link["ticketId"], json!(parent));

    let seen_by_parent = get_ticket(&app, &acme, &parent).await;
    let seen_by_child = get_ticket(&app, &acme, &child).await;
    assert_eq!(
        links_of(&seen_by_parent),
        vec![(child.clone(), "parent_of".to_string())]
    );
    assert_eq!(
        links_of(&seen_by_child),
        vec![(parent.clone(), "child_of".to_string())]
    );
    let listed = app
        .get(&format!("/tickets/{parent}/links"), &acme.key)
        .await;
    assert_eq!(listed.assert_status(200)["data"], seen_by_parent["links"]);
}

async fn linking_emits_ticket_linked_with_its_actor_on_both_tickets(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    subscribe(&app, &acme, &["ticket.linked"]).await;
    let original = ticket(&app, &acme, "Printer jam").await;
    let duplicate = ticket(&app, &acme, "Printer jammed again").await;

    app.post(
        &format!("/tickets/{duplicate}/links"),
        &acme.key,
        json!({"ticketId": original, "kind": "duplicate_of"}),
    )
    .await
    .assert_status(201);

    let sent = bodies(&app, &acme)
        .await
        .remove("ticket.linked")
        .unwrap_or_default();
    let seen: Vec<(String, String, String)> = sent
        .iter()
        .map(|body| {
            let data = &body["data"];
            (
                data["id"].as_str().expect("id").to_string(),
                data["link"]["ticketId"]
                    .as_str()
                    .expect("ticketId")
                    .to_string(),
                data["link"]["kind"].as_str().expect("kind").to_string(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                duplicate.clone(),
                original.clone(),
                "duplicate_of".to_string()
            ),
            (
                original.clone(),
                duplicate.clone(),
                "duplicated_by".to_string()
            ),
        ]
    );
    let key = key_actor(&app, &acme).await;
    for body in &sent {
        assert_eq!(body["actor"], key, "{body}");
        assert_eq!(body["data"]["added"], true, "{body}");
    }
}

async fn a_pair_takes_one_link(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let a = ticket(&app, &acme, "A").await;
    let b = ticket(&app, &acme, "B").await;
    app.post(
        &format!("/tickets/{a}/links"),
        &acme.key,
        json!({"ticketId": b, "kind": "related"}),
    )
    .await
    .assert_status(201);

    let again = app
        .post(
            &format!("/tickets/{b}/links"),
            &acme.key,
            json!({"ticketId": a, "kind": "parent_of"}),
        )
        .await;
    again.assert_error(409, "conflict");
    assert_eq!(links_of(&get_ticket(&app, &acme, &b).await).len(), 1);
}

async fn a_removed_link_leaves_both_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let a = ticket(&app, &acme, "A").await;
    let b = ticket(&app, &acme, "B").await;
    app.post(
        &format!("/tickets/{a}/links"),
        &acme.key,
        json!({"ticketId": b, "kind": "parent_of"}),
    )
    .await
    .assert_status(201);

    // Removed from the other side than it was made.
    app.delete(&format!("/tickets/{b}/links/{a}"), &acme.key)
        .await
        .assert_status(200);
    assert!(links_of(&get_ticket(&app, &acme, &a).await).is_empty());
    assert!(links_of(&get_ticket(&app, &acme, &b).await).is_empty());
    app.delete(&format!("/tickets/{b}/links/{a}"), &acme.key)
        .await
        .assert_error(404, "not_found");
}

async fn a_ticket_of_another_company_cannot_be_linked(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let ours = ticket(&app, &acme, "Ours").await;
    let theirs = ticket(&app, &other, "Theirs").await;

    let r = app
        .post(
            &format!("/tickets/{ours}/links"),
            &acme.key,
            json!({"ticketId": theirs, "kind": "related"}),
        )
        .await;
    assert_invalid(&r, &["ticketId"]);
    assert!(links_of(&get_ticket(&app, &other, &theirs).await).is_empty());
}

/// A parent and an open child of it; their ids.
async fn family(app: &TestApp, acme: &crate::support::TestCompany) -> (String, String) {
    let parent = ticket(app, acme, "Outage").await;
    let child = ticket(app, acme, "Cannot log in").await;
    app.post(
        &format!("/tickets/{parent}/links"),
        &acme.key,
        json!({"ticketId": child, "kind": "parent_of"}),
    )
    .await
    .assert_status(201);
    (parent, child)
}

async fn a_parent_with_an_open_child_refuses_resolve(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (parent, _) = family(&app, &acme).await;

    let r = app
        .patch(
            &format!("/tickets/{parent}"),
            &acme.key,
            json!({"status": "RESOLVED"}),
        )
        .await;
    r.assert_error(409, "open_children");
    assert_eq!(get_ticket(&app, &acme, &parent).await["status"], "OPEN");
}

async fn force_resolves_a_parent_with_an_open_child(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (parent, _) = family(&app, &acme).await;

    let r = app
        .patch(
            &format!("/tickets/{parent}"),
            &acme.key,
            json!({"status": "CLOSED", "force": true}),
        )
        .await;
    assert_eq!(r.assert_status(200)["status"], "CLOSED");
}

async fn the_company_setting_lets_parents_resolve(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (parent, _) = family(&app, &acme).await;
    let r = app
        .patch(
            "/settings",
            &acme.key,
            json!({"resolveParentsWithOpenChildren": true}),
        )
        .await;
    assert_eq!(r.assert_status(200)["resolveParentsWithOpenChildren"], true);

    let r = app
        .patch(
            &format!("/tickets/{parent}"),
            &acme.key,
            json!({"status": "RESOLVED"}),
        )
        .await;
    assert_eq!(r.assert_status(200)["status"], "RESOLVED");
}

async fn a_parent_resolves_once_its_children_are_resolved(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (parent, child) = family(&app, &acme).await;
    app.patch(
        &format!("/tickets/{child}"),
        &acme.key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);

    let r = app
        .patch(
            &format!("/tickets/{parent}"),
            &acme.key,
            json!({"status": "RESOLVED"}),
        )
        .await;
    assert_eq!(r.assert_status(200)["status"], "RESOLVED");
}
