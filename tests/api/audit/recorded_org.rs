//! Each recorded change to the company's people and records through the
//! API (users, teams, the company's standing, a deleted ticket, a reply
//! withdrawn by `DELETE` before it was sent) writes one
//! entry naming who made it and the record it changed.

use serde_json::json;

use super::{assert_by_key_on, key_id, only_entry};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_user_created_is_recorded,
    a_role_change_of_a_user_is_recorded,
    a_deactivated_user_is_recorded,
    a_team_created_changed_and_deleted_is_recorded,
    a_company_suspended_and_reactivated_is_recorded,
    a_deleted_ticket_is_recorded,
    a_cancelled_reply_is_recorded_once,
);

async fn a_user_created_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;

    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)
        .clone();

    let entry = only_entry(&app, &acme, "user.created").await;
    assert_by_key_on(&entry, &actor, "user", user["id"].as_str().expect("id"));
    assert_eq!(entry["changes"]["after"]["email"], "ada@acme.test");
}

async fn a_role_change_of_a_user_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = user["id"].as_str().expect("id");

    app.patch(
        &format!("/users/{id}"),
        &acme.key,
        json!({"roleName": "admin"}),
    )
    .await
    .assert_status(200);

    let entry = only_entry(&app, &acme, "user.updated").await;
    assert_by_key_on(&entry, &actor, "user", id);
    assert_eq!(entry["changes"]["before"]["roleName"], "agent");
    assert_eq!(entry["changes"]["after"]["roleName"], "admin");
}

async fn a_deactivated_user_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = user["id"].as_str().expect("id");

    app.patch(
        &format!("/users/{id}"),
        &acme.key,
        json!({"isActive": false}),
    )
    .await
    .assert_status(200);

    let entry = only_entry(&app, &acme, "user.deactivated").await;
    assert_by_key_on(&entry, &actor, "user", id);
    assert_eq!(
        entry["changes"],
        json!({"before": {"isActive": true}, "after": {"isActive": false}})
    );
}

async fn a_team_created_changed_and_deleted_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)["id"]
        .clone();
    let team = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "Billing", "memberIds": [user]}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = team["id"].as_str().expect("id");
    app.patch(
        &format!("/teams/{id}"),
        &acme.key,
        json!({"name": "Billing 2"}),
    )
    .await
    .assert_status(200);
    app.delete(&format!("/teams/{id}"), &acme.key)
        .await
        .assert_status(204);

    let created = only_entry(&app, &acme, "team.created").await;
    assert_by_key_on(&created, &actor, "team", id);
    assert_eq!(created["changes"]["after"]["name"], "Billing");
    let updated = only_entry(&app, &acme, "team.updated").await;
    assert_by_key_on(&updated, &actor, "team", id);
    assert_eq!(
        updated["changes"],
        json!({"before": {"name": "Billing"}, "after": {"name": "Billing 2"}})
    );
    let deleted = only_entry(&app, &acme, "team.deleted").await;
    assert_by_key_on(&deleted, &actor, "team", id);
}

/// The CLI suspends and reactivates (as `system`).
async fn a_company_suspended_and_reactivated_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let company = acme.company.id;
    for suspended in [true, false] {
        supportdesk::companies::store::set_suspended(
            &app.state.db,
            company,
            suspended,
            app.state.clock.now(),
        )
        .await
        .expect("status set");
    }

    let system = json!({"type": "system", "id": null, "name": "system"});
    let target = json!({"type": "company", "id": company});
    let suspended = only_entry(&app, &acme, "company.suspended").await;
    assert_eq!(
        (&suspended["actor"], &suspended["target"]),
        (&system, &target)
    );
    assert_eq!(
        suspended["changes"]["after"],
        json!({"status": "suspended"})
    );
    let reactivated = only_entry(&app, &acme, "company.reactivated").await;
    assert_eq!(
        (&reactivated["actor"], &reactivated["target"]),
        (&system, &target)
    );
    assert_eq!(reactivated["changes"]["after"], json!({"status": "active"}));
}

async fn a_deleted_ticket_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body = json!({"entityId": acme.entity.id, "subject": "Refund", "priority": "LOW"});
    let ticket = app
        .post("/tickets", &acme.key, body)
        .await
        .assert_status(201)
        .clone();
    let id = ticket["id"].as_str().expect("id");

    app.delete(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_status(200);

    let entry = only_entry(&app, &acme, "ticket.deleted").await;
    assert_by_key_on(&entry, &actor, "ticket", id);
    assert_eq!(
        entry["changes"]["before"],
        json!({"ticketNumber": ticket["ticketNumber"], "subject": "Refund"})
    );
}

async fn a_cancelled_reply_is_recorded_once(backend: Backend) {
    // Replies are held for an undo window, and no pass sends them.
    let app = TestApp::spawn_with(backend, |c| {
        c.undo_send = std::time::Duration::from_secs(60);
        c.run_workers = false;
    })
    .await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body = json!({"entityId": acme.entity.id, "subject": "Refund", "priority": "LOW"});
    let ticket = app.post("/tickets", &acme.key, body).await;
    let t = ticket.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let reply = app
        .post(
            &format!("/tickets/{t}/comments"),
            &acme.key,
            json!({"body": "Oops"}),
        )
        .await;
    let c = reply.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_owned();

    // The second cancel finds it cancelled already: no second entry.
    for _ in 0..2 {
        let path = format!("/tickets/{t}/comments/{c}");
        app.delete(&path, &acme.key).await.assert_status(200);
    }

    let entry = only_entry(&app, &acme, "comment.cancelled").await;
    assert_by_key_on(&entry, &actor, "comment", &c);
    assert_eq!(
        (&entry["changes"]["before"], &entry["changes"]["after"]),
        (
            &json!({"deliveryState": "held"}),
            &json!({"deliveryState": "cancelled", "ticketId": t})
        )
    );
}
