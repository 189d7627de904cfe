//! Policy choice, due times and the pausing resolution clock, against
//! hand-computed instants (Europe/Berlin, CET = UTC+1 in November).

use std::collections::BTreeSet;

use super::*;
use crate::calendar::{Calendar, Opening};
use crate::model::TargetsByPriority;
use crate::time::Timestamp;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("test instant")
        .with_timezone(&Utc)
}

/// Monday to Friday, 09:00–17:00 Berlin time.
fn office() -> Hours {
    let openings: Vec<Opening> = (0..5)
        .map(|weekday| Opening {
            weekday,
            open: 9 * 60,
            close: 17 * 60,
        })
        .collect();
    let tz = "Europe/Berlin".parse().expect("tz");
    Hours::Calendar(Calendar::new(tz, &openings, BTreeSet::new()).expect("calendar"))
}

fn policy(name: &str, enabled: bool, conditions: PolicyConditions) -> Policy {
    let now = Timestamp::from_datetime(at("2026-11-01T00:00:00Z"));
    Policy {
        id: Uuid::now_v7(),
        name: name.into(),
        enabled,
        conditions,
        targets: TargetsByPriority::default(),
        business_hours_id: None,
        pause_on: Vec::new(),
        warn_minutes: 15,
        created_at: now,
        updated_at: now,
    }
}

fn resolution(minutes: i64) -> Targets {
    Targets {
        first_response_minutes: Some(60),
        next_response_minutes: Some(30),
        resolution_minutes: Some(minutes),
    }
}

#[test]
fn the_first_enabled_matching_policy_applies() {
    let entity = Uuid::now_v7();
    let tags = vec!["billing".to_string(), "vip".to_string()];
    let ticket = TicketFacts {
        priority: Priority::High,
        entity_id: entity,
        team_id: None,
        tags: &tags,
    };
    let urgent = PolicyConditions {
        priorities: Some(vec![Priority::Urgent]),
        ..Default::default()
    };
    let vip = PolicyConditions {
        tags: Some(vec!["vip".into()]),
        entity_id: Some(entity),
        ..Default::default()
    };
    let team = PolicyConditions {
        team_id: Some(Uuid::now_v7()),
        ..Default::default()
    };
    let policies = vec![
        policy("urgent only", true, urgent),
        policy("a team's", true, team),
        policy("disabled catch-all", false, PolicyConditions::default()),
        policy("vip", true, vip.clone()),
        policy("catch-all", true, PolicyConditions::default()),
    ];
    let chosen = choose(&policies, &ticket, |_| true).map(|p| p.name.as_str());
    assert_eq!(chosen, Some("vip"));

    let reordered = vec![policies[4].clone(), policies[3].clone()];
    let chosen = choose(&reordered, &ticket, |_| true).map(|p| p.name.as_str());
    assert_eq!(chosen, Some("catch-all"));
}

#[test]
fn a_custom_field_condition_is_asked_only_of_policies_that_have_one() {
    let tags: Vec<String> = Vec::new();
    let ticket = TicketFacts {
        priority: Priority::Low,
        entity_id: Uuid::now_v7(),
        team_id: None,
        tags: &tags,
    };
    let pro = PolicyConditions {
        custom_fields: Some(serde_json::json!({"plan": {"eq": "pro"}})),
        ..Default::default()
    };
    let policies = vec![
        policy("pro plan", true, pro),
        policy("catch-all", true, PolicyConditions::default()),
    ];
    let mut asked = Vec::new();
    let chosen = choose(&policies, &ticket, |p| {
        asked.push(p.name.clone());
        false
    });
    assert_eq!(chosen.map(|p| p.name.as_str()), Some("catch-all"));
    assert_eq!(asked, vec!["pro plan".to_string()]);
}

#[test]
fn due_times_start_at_creation() {
    // Wednesday 25 November 2026, 16:00 Berlin.
    let created = at("2026-11-25T15:00:00Z");
    let due = due_times(&resolution(240), &office(), created);
    assert_eq!(due.first_response, Some(at("2026-11-25T16:00:00Z")));
    assert_eq!(due.resolution, Some(at("2026-11-26T11:00:00Z")));
    let next = next_response_due(&resolution(240), &office(), at("2026-11-26T15:45:00Z"));
    assert_eq!(next, Some(at("2026-11-27T08:15:00Z")));
}

#[test]
fn a_missing_metric_has_no_due_time() {
    let targets = Targets {
        resolution_minutes: Some(60),
        ..Default::default()
    };
    let due = due_times(&targets, &Hours::Always, at("2026-11-25T15:00:00Z"));
    assert_eq!(due.first_response, None);
    assert_eq!(
        next_response_due(&targets, &Hours::Always, at("2026-11-25T15:00:00Z")),
        None
    );
}

#[test]
fn the_resolution_clock_pauses_and_resumes_with_the_time_left() {
    let hours = office();
    // Created Wednesday 09:00, paused (waiting on the customer) at 10:00:
    // 60 of 240 minutes used.
    let clock = ResolutionClock::started(at("2026-11-25T08:00:00Z"));
    let paused = clock.pause(&hours, at("2026-11-25T09:00:00Z"));
    assert_eq!(paused.used, Duration::minutes(60));
    assert_eq!(paused.due(&hours, 240), None);
    // Pausing again changes nothing.
    assert_eq!(paused.pause(&hours, at("2026-11-25T12:00:00Z")), paused);
    // Reopened Thursday 16:00: 180 left, 60 on Thursday, 120 on Friday.
    let resumed = paused.resume(at("2026-11-26T15:00:00Z"));
    assert_eq!(resumed.due(&hours, 240), Some(at("2026-11-27T10:00:00Z")));
}

#[test]
fn time_outside_hours_does_not_count_before_a_pause() {
    let hours = office();
    // Wednesday 16:00 to 20:00 Berlin: one business hour.
    let clock = ResolutionClock::started(at("2026-11-25T15:00:00Z"));
    let paused = clock.pause(&hours, at("2026-11-25T19:00:00Z"));
    assert_eq!(paused.used, Duration::minutes(60));
}

#[test]
fn a_clock_past_its_target_is_due_when_it_resumes() {
    let clock = ResolutionClock {
        used: Duration::minutes(300),
        running_since: None,
    };
    let resumed = clock.resume(at("2026-11-25T10:00:00Z"));
    assert_eq!(
        resumed.due(&office(), 240),
        Some(at("2026-11-25T10:00:00Z"))
    );
}
