//! Team-scoped visibility (issue 50): an agent whose role has `teamsOnly`
//! meets a ticket, chat, comment or file outside their teams (another
//! team's, or one of no team) as another company's record: 404 on every
//! route of the route table that names one, absent from every list of it,
//! from searches and from the change feed. Their own team's records they
//! read and change; an agent without the limit sees every team's.

use reqwest::Method;
use serde_json::{Value, json};

use super::team_desk::Desk;
use crate::accounts::{agent_with_password, sign_in};
use crate::backend_tests;
use crate::hardening::tenant_routes::valid_body;
use crate::support::{Backend, TestApp};

backend_tests!(
    records_outside_the_agents_teams_are_404_on_every_route,
    lists_and_searches_show_only_the_agents_teams,
    the_change_feed_shows_only_the_agents_teams,
    the_agent_reads_and_changes_their_own_teams_records,
    a_ticket_moved_to_another_team_leaves_the_agents_sight,
    an_agent_without_the_limit_sees_every_team,
);

async fn desk(backend: Backend) -> Desk {
    Desk::open(TestApp::spawn_with(backend, |c| c.run_workers = false).await).await
}

/// The ids of a list answer's `data`.
fn listed(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|item| item["id"].as_str().expect("id").to_string())
        .collect()
}

async fn records_outside_the_agents_teams_are_404_on_every_route(backend: Backend) {
    let desk = desk(backend).await;
    let mut checked = 0;
    for spec in supportdesk::app::api_route_specs() {
        if spec.method == Method::GET && !spec.path.contains('{') {
            // A list (or any read naming no record) shows none of them.
            let listed = desk.limited(Method::GET, &spec.path, None).await;
            for outside in desk.theirs.all().into_iter().chain(desk.loose.all()) {
                assert!(
                    !listed.text.contains(outside),
                    "GET {} shows {outside}: {}",
                    spec.path,
                    listed.text
                );
            }
            continue;
        }
        for (whose, records) in [("another team's", &desk.theirs), ("no team's", &desk.loose)] {
            let Some(id) = records.named_by(&spec.path) else {
                continue;
            };
            let path = spec.path.replace("{id}", id);
            let body = valid_body(&spec.method, &spec.path, &desk.other_user);
            let r = desk.limited(spec.method.clone(), &path, body).await;
            assert_eq!(
                (r.status, r.body["code"].as_str()),
                (404, Some("not_found")),
                "{} {} on {whose} record: {}",
                spec.method,
                spec.path,
                r.text
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "checked {checked} routes");

    // Nothing was changed: the other team's records are as they were.
    let key = &desk.acme.key;
    for records in [&desk.theirs, &desk.loose] {
        let ticket = desk
            .app
            .get(&format!("/tickets/{}", records.ticket), key)
            .await;
        assert_eq!(
            (&ticket.body["status"], &ticket.body["tags"]),
            (&json!("OPEN"), &json!([]))
        );
        let session = desk
            .app
            .get(&format!("/chat/sessions/{}", records.session), key)
            .await;
        assert_eq!(
            (&session.body["status"], &session.body["messages"]),
            (&json!("ACTIVE"), &json!([]))
        );
    }
    desk.app.stop().await;
}

async fn lists_and_searches_show_only_the_agents_teams(backend: Backend) {
    let desk = desk(backend).await;

    let mut seen = Vec::new();
    for path in [
        "/tickets",
        "/tickets?q=printer",
        "/chat/sessions",
        "/chat/sessions?q=printer",
    ] {
        let r = desk.limited(Method::GET, path, None).await;
        r.assert_status(200);
        seen.push((path, listed(&r.body), r.body["total"].clone()));
    }

    assert_eq!(
        seen,
        vec![
            ("/tickets", vec![desk.mine.ticket.clone()], json!(1)),
            (
                "/tickets?q=printer",
                vec![desk.mine.ticket.clone()],
                json!(1)
            ),
            ("/chat/sessions", vec![desk.mine.session.clone()], json!(1)),
            (
                "/chat/sessions?q=printer",
                vec![desk.mine.session.clone()],
                json!(1)
            ),
        ]
    );
    desk.app.stop().await;
}

async fn the_change_feed_shows_only_the_agents_teams(backend: Backend) {
    let desk = desk(backend).await;

    let r = desk.limited(Method::GET, "/changes?limit=100", None).await;

    r.assert_status(200);
    let ids: Vec<&str> = r.body["data"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|entry| entry["id"].as_str().expect("the record's id"))
        .collect();
    for mine in [&desk.mine.ticket, &desk.mine.comment, &desk.mine.session] {
        assert!(ids.contains(&mine.as_str()), "{mine} in {ids:?}");
    }
    for outside in desk.theirs.all().into_iter().chain(desk.loose.all()) {
        assert!(!ids.contains(&outside), "{outside} in {ids:?}");
    }
    desk.app.stop().await;
}

async fn the_agent_reads_and_changes_their_own_teams_records(backend: Backend) {
    let desk = desk(backend).await;
    let mine = &desk.mine;

    let mut statuses = Vec::new();
    for (method, path, body) in [
        (Method::GET, format!("/tickets/{}", mine.ticket), None),
        (
            Method::GET,
            format!("/tickets/{}/comments", mine.ticket),
            None,
        ),
        (
            Method::GET,
            format!("/attachments/{}", mine.attachment),
            None,
        ),
        (
            Method::GET,
            format!("/attachments/{}/content", mine.attachment),
            None,
        ),
        (
            Method::GET,
            format!("/chat/sessions/{}", mine.session),
            None,
        ),
        (
            Method::PATCH,
            format!("/tickets/{}", mine.ticket),
            Some(json!({"status": "IN_PROGRESS"})),
        ),
        (
            Method::POST,
            format!("/tickets/{}/comments", mine.ticket),
            Some(json!({"body": "On it"})),
        ),
        (
            Method::POST,
            format!("/chat/sessions/{}/messages", mine.session),
            Some(json!({"body": "Hello", "senderType": "agent", "senderId": desk.limited_id})),
        ),
    ] {
        let r = desk.limited(method.clone(), &path, body).await;
        statuses.push((format!("{method} {path}"), r.status));
    }

    let expected: Vec<(String, u16)> = statuses
        .iter()
        .map(|(what, _)| {
            let created = what.starts_with("POST");
            (what.clone(), if created { 201 } else { 200 })
        })
        .collect();
    assert_eq!(statuses, expected);
    desk.app.stop().await;
}

async fn a_ticket_moved_to_another_team_leaves_the_agents_sight(backend: Backend) {
    let desk = desk(backend).await;
    let ticket = format!("/tickets/{}", desk.mine.ticket);
    let theirs_team = desk
        .app
        .get(&format!("/tickets/{}", desk.theirs.ticket), &desk.acme.key)
        .await
        .body["teamId"]
        .clone();

    let moved = desk
        .limited(Method::PATCH, &ticket, Some(json!({"teamId": theirs_team})))
        .await;

    assert_eq!(
        (moved.status, &moved.body["teamId"]),
        (200, &theirs_team),
        "{}",
        moved.text
    );
    desk.limited(Method::GET, &ticket, None)
        .await
        .assert_error(404, "not_found");
    desk.app.stop().await;
}

async fn an_agent_without_the_limit_sees_every_team(backend: Backend) {
    let desk = desk(backend).await;
    agent_with_password(&desk.app, &desk.acme, "cy@example.com", "agent").await;
    let unlimited = sign_in(&desk.app, "cy@example.com", "test").await;

    let list = unlimited.get(&desk.app, "/api/v1/tickets").await;
    let mut reads = Vec::new();
    for records in [&desk.theirs, &desk.loose] {
        for path in [
            format!("/api/v1/tickets/{}", records.ticket),
            format!("/api/v1/chat/sessions/{}", records.session),
            format!("/api/v1/attachments/{}", records.attachment),
        ] {
            reads.push((unlimited.get(&desk.app, &path).await.status, path));
        }
    }

    assert_eq!(list.body["total"], 3, "{}", list.text);
    assert!(reads.iter().all(|(status, _)| *status == 200), "{reads:?}");
    desk.app.stop().await;
}
