//! A ticket's clocks through their life, around the clock (elapsed time)
//! so the instants are easy to check by hand; calendars are tested in
//! `calendar` and `apply`.

use super::*;
use chrono::DateTime;

fn at(text: &str) -> Timestamp {
    Timestamp::from_datetime(
        DateTime::parse_from_rfc3339(text)
            .expect("test instant")
            .with_timezone(&chrono::Utc),
    )
}

fn terms(first: i64, resolution: i64) -> Terms {
    Terms {
        policy_id: Uuid::now_v7(),
        hours: Hours::Always,
        targets: Targets {
            first_response_minutes: Some(first),
            next_response_minutes: Some(30),
            resolution_minutes: Some(resolution),
        },
        warn_minutes: 15,
        pause_on: vec![TicketStatus::InProgress],
    }
}

fn started(metric: Metric, terms: &Terms) -> Clock {
    Clock::start(
        Uuid::now_v7(),
        metric,
        terms,
        at("2026-11-24T09:00:00Z"),
        false,
    )
    .expect("measured")
}

#[test]
fn a_started_clock_is_due_after_its_target_and_warns_before() {
    let clock = started(Metric::FirstResponse, &terms(60, 240));
    assert_eq!(clock.state, ClockState::Running);
    assert_eq!(clock.due_at, Some(at("2026-11-24T10:00:00Z")));
    assert_eq!(clock.warn_at, Some(at("2026-11-24T09:45:00Z")));
}

#[test]
fn a_metric_without_a_target_has_no_clock() {
    let mut terms = terms(60, 240);
    terms.targets.next_response_minutes = None;
    let clock = Clock::start(
        Uuid::now_v7(),
        Metric::NextResponse,
        &terms,
        at("2026-11-24T09:00:00Z"),
        false,
    );
    assert_eq!(clock, None);
}

#[test]
fn a_paused_clock_has_no_due_time_and_resumes_with_the_time_left() {
    let terms = terms(60, 240);
    let mut clock = started(Metric::Resolution, &terms);
    clock.pause(&terms, at("2026-11-24T10:00:00Z"));
    assert_eq!(clock.state, ClockState::Paused);
    assert_eq!((clock.due_at, clock.warn_at), (None, None));
    assert_eq!(clock.used_seconds, 3600);
    clock.resume(&terms, at("2026-11-25T08:00:00Z"));
    // 180 of 240 minutes left.
    assert_eq!(clock.due_at, Some(at("2026-11-25T11:00:00Z")));
}

#[test]
fn a_fulfilled_resolution_runs_again_when_reopened() {
    let terms = terms(60, 240);
    let mut clock = started(Metric::Resolution, &terms);
    assert!(clock.fulfil(&terms, at("2026-11-24T10:00:00Z")));
    assert!(!clock.fulfil(&terms, at("2026-11-24T10:30:00Z")));
    assert_eq!(clock.state, ClockState::Fulfilled);
    clock.reopen(&terms, at("2026-11-24T12:00:00Z"));
    assert_eq!(clock.state, ClockState::Running);
    assert_eq!(clock.fulfilled_at, None);
    assert_eq!(clock.due_at, Some(at("2026-11-24T15:00:00Z")));
}

#[test]
fn a_breached_clock_stays_breached_when_met_late() {
    let terms = terms(60, 240);
    let mut clock = started(Metric::FirstResponse, &terms);
    clock.state = ClockState::Breached;
    clock.breached_at = clock.due_at;
    assert!(clock.fulfil(&terms, at("2026-11-24T11:00:00Z")));
    assert_eq!(clock.state, ClockState::Breached);
    let sla = TicketSla::of(Some(terms.policy_id), &[clock]);
    assert_eq!(sla.breaches.len(), 1);
    assert_eq!(sla.breaches[0].metric, "firstResponse");
    assert_eq!(sla.first_response_due_at, None);
    assert_eq!(
        sla.fulfilled.get("firstResponse"),
        Some(&at("2026-11-24T11:00:00Z"))
    );
}

#[test]
fn a_new_target_counts_from_the_clock_start() {
    let mut clock = started(Metric::FirstResponse, &terms(60, 240));
    assert!(clock.retarget(&terms(30, 240)));
    assert_eq!(clock.due_at, Some(at("2026-11-24T09:30:00Z")));
    // A warning longer than the target warns at the start.
    assert_eq!(clock.warn_at, Some(at("2026-11-24T09:15:00Z")));
    let mut unmeasured = terms(30, 240);
    unmeasured.targets.first_response_minutes = None;
    assert!(!clock.retarget(&unmeasured));
}

#[test]
fn pending_resolved_closed_and_pause_on_statuses_stop_the_clocks() {
    let terms = terms(60, 240);
    for status in TicketStatus::ALL {
        let expected = *status != TicketStatus::Open;
        assert_eq!(terms.stops(*status), expected, "{status}");
    }
}
