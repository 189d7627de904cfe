//! The sweeper: uploads left unattached past their age go with their
//! bytes; a deleted ticket's files go with it, bytes another record uses
//! stay.

use super::*;
use std::time::Duration;
use supportdesk::attachments::sweep::{SweepReport, run_pass};
use supportdesk::time::Timestamp;

backend_tests!(
    old_unattached_uploads_are_deleted_with_their_bytes,
    a_deleted_tickets_files_go_at_once_and_shared_bytes_stay,
);

async fn old_unattached_uploads_are_deleted_with_their_bytes(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.run_workers = false;
        config.attachment_orphan_age = Duration::from_secs(3600);
    })
    .await;
    let acme = app.company().await;
    let orphan = uploaded(&app, &acme, b"never attached").await;
    let young = uploaded(&app, &acme, b"not attached yet").await;
    let kept = uploaded(&app, &acme, b"attached").await;
    ticket_with(&app, &acme, json!([kept["id"]]))
        .await
        .assert_status(201);
    // Two of them uploaded two hours ago, one still unattached.
    for file in [&orphan, &kept] {
        backdate(&app, &id_of(file), chrono::TimeDelta::hours(2)).await;
    }
    let report = run_pass(&app.state.db, &app.state.attachments, app.state.clock.now())
        .await
        .expect("sweep");
    assert_eq!(
        report,
        SweepReport {
            uploads: 1,
            objects: 1
        }
    );
    let r = app
        .get(&format!("/attachments/{}", id_of(&orphan)), &acme.key)
        .await;
    r.assert_error(404, "not_found");
    for file in [&young, &kept] {
        let r = app
            .get(&format!("/attachments/{}", id_of(file)), &acme.key)
            .await;
        r.assert_status(200);
    }
    assert_eq!(stored_files(&app).len(), 2);
}

async fn backdate(app: &TestApp, id: &str, by: chrono::TimeDelta) {
    let id = uuid::Uuid::parse_str(id).expect("uuid");
    let then = Timestamp::from_datetime(chrono::Utc::now() - by);
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE attachments SET created_at = $1 WHERE id = $2")
        .bind(then)
        .bind(id)
        .execute(c)
        .await
        .map(|_| ())
        .expect("backdated"));
}

async fn a_deleted_tickets_files_go_at_once_and_shared_bytes_stay(backend: Backend) {
    // No sweeper runs: what goes, goes with the delete itself.
    let app = TestApp::spawn_with(backend, |config| config.run_workers = false).await;
    let acme = app.company().await;
    let shared_a = uploaded(&app, &acme, b"shared bytes").await;
    let shared_b = uploaded(&app, &acme, b"shared bytes").await;
    let own = uploaded(&app, &acme, b"only here").await;
    let doomed = ticket_with(&app, &acme, json!([shared_a["id"], own["id"]])).await;
    let doomed = id_of(doomed.assert_status(201));
    ticket_with(&app, &acme, json!([shared_b["id"]]))
        .await
        .assert_status(201);
    assert_eq!(stored_files(&app).len(), 2);

    app.delete(&format!("/tickets/{doomed}"), &acme.key)
        .await
        .assert_status(200);
    assert_eq!(attachment_rows(&app).await, 1);
    assert_eq!(stored_files(&app).len(), 1);
    let url = app.url(&format!("/api/v1/attachments/{}/content", id_of(&shared_b)));
    let response = app
        .client
        .get(&url)
        .header("X-API-Key", &acme.key)
        .send()
        .await
        .expect("sent");
    assert_eq!(
        response.bytes().await.expect("body").as_ref(),
        b"shared bytes"
    );
}
