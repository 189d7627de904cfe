//! The audit log of an agent whose role is limited to their teams and
//! holds `audit:read`: only the entries about a ticket, comment or chat of
//! their teams, in the list and in its exports; the entries about a record
//! since deleted, or about no team's record (a company-wide change), are
//! left out.

use reqwest::Method;
use serde_json::Value;

use crate::backend_tests;
use crate::roles::team_desk::Desk;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_limited_agent_sees_the_entries_of_their_teams_records_only,
    a_limited_agent_sees_no_entry_about_no_teams_record,
    a_limited_agents_export_holds_their_teams_entries_only,
);

/// A desk whose limited role reads the audit log; replies are held for an
/// undo window (so they can be cancelled) and no pass sends them.
async fn desk(backend: Backend) -> Desk {
    let app = TestApp::spawn_with(backend, |c| {
        c.undo_send = std::time::Duration::from_secs(60);
        c.run_workers = false;
    })
    .await;
    Desk::open_with(app, &["audit:read"]).await
}

/// Cancels (with the company key) the held reply of every team's ticket.
async fn cancel_every_reply(desk: &Desk) {
    for records in [&desk.mine, &desk.theirs, &desk.loose] {
        let path = format!("/tickets/{}/comments/{}", records.ticket, records.comment);
        desk.app
            .delete(&path, &desk.acme.key)
            .await
            .assert_status(200);
    }
}

/// The targets' ids of a list answer's entries.
fn targets(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|entry| entry["target"]["id"].as_str().expect("target").to_owned())
        .collect()
}

async fn a_limited_agent_sees_the_entries_of_their_teams_records_only(backend: Backend) {
    let desk = desk(backend).await;
    cancel_every_reply(&desk).await;

    let listed = desk
        .limited(Method::GET, "/audit-log?action=comment.cancelled", None)
        .await;

    assert_eq!(
        targets(listed.assert_status(200)),
        [desk.mine.comment.as_str()]
    );
}

async fn a_limited_agent_sees_no_entry_about_no_teams_record(backend: Backend) {
    let desk = desk(backend).await;
    // Roles, users and teams were written opening the desk; a ticket of
    // each team is deleted now (its team is gone with it).
    for records in [&desk.mine, &desk.theirs] {
        let path = format!("/tickets/{}", records.ticket);
        desk.app
            .delete(&path, &desk.acme.key)
            .await
            .assert_status(200);
    }

    let listed = desk.limited(Method::GET, "/audit-log", None).await;

    assert_eq!(listed.assert_status(200)["total"], 0, "{}", listed.text);
}

async fn a_limited_agents_export_holds_their_teams_entries_only(backend: Backend) {
    let desk = desk(backend).await;
    cancel_every_reply(&desk).await;

    let export = desk
        .app
        .client
        .get(desk.app.url("/api/v1/audit-log"))
        .header("Cookie", &desk.limited.cookie)
        .header("Accept", "application/x-ndjson")
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body");

    let lines: Vec<Value> = export
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let ids: Vec<&str> = lines
        .iter()
        .map(|entry| entry["target"]["id"].as_str().expect("target"))
        .collect();
    assert_eq!(ids, [desk.mine.comment.as_str()], "{export}");
}
