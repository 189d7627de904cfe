//! Due times and business minutes against hand-computed expectations.
//! 2026's DST changes: Europe/Berlin on 29 March (02:00 CET -> 03:00 CEST)
//! and 25 October (03:00 CEST -> 02:00 CET); America/New_York on 8 March
//! (02:00 EST -> 03:00 EDT) and 1 November (02:00 EDT -> 01:00 EST).

use super::*;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("test instant")
        .with_timezone(&Utc)
}

fn calendar(tz: &str, openings: &[(&str, &str, &str)], holidays: &[&str]) -> Hours {
    let openings: Vec<Opening> = openings
        .iter()
        .map(|(day, open, close)| Opening {
            weekday: WEEKDAYS.iter().position(|d| d == day).expect("day") as u32,
            open: parse_clock(open, false).expect("open"),
            close: parse_clock(close, true).expect("close"),
        })
        .collect();
    let holidays = holidays
        .iter()
        .map(|d| d.parse().expect("holiday"))
        .collect();
    let tz: Tz = tz.parse().expect("tz");
    Hours::Calendar(Calendar::new(tz, &openings, holidays).expect("calendar"))
}

fn weekdays(tz: &str, open: &str, close: &str, holidays: &[&str]) -> Hours {
    let days: Vec<(&str, &str, &str)> = WEEKDAYS[..5].iter().map(|d| (*d, open, close)).collect();
    calendar(tz, &days, holidays)
}

fn every_day(tz: &str, open: &str, close: &str) -> Hours {
    let days: Vec<(&str, &str, &str)> = WEEKDAYS.iter().map(|d| (*d, open, close)).collect();
    calendar(tz, &days, &[])
}

#[test]
fn due_times_match_hand_computed_cases() {
    let berlin = weekdays("Europe/Berlin", "09:00", "17:00", &["2026-12-25"]);
    let new_york = weekdays("America/New_York", "09:00", "17:00", &[]);
    let split = calendar(
        "UTC",
        &[("wed", "09:00", "12:00"), ("wed", "13:00", "17:00")],
        &[],
    );
    let night = calendar(
        "UTC",
        &[("mon", "22:00", "06:00"), ("fri", "22:00", "06:00")],
        &["2026-11-27"],
    );
    let berlin_round = every_day("Europe/Berlin", "00:00", "24:00");
    let sunday_berlin = calendar("Europe/Berlin", &[("sun", "01:00", "05:00")], &[]);
    let sunday_new_york = calendar("America/New_York", &[("sun", "00:00", "04:00")], &[]);
    let gap_open = calendar("America/New_York", &[("sun", "02:30", "06:00")], &[]);
    #[rustfmt::skip]
    let cases: Vec<(&str, &Hours, &str, i64, &str)> = vec![
        ("inside hours", &berlin, "2026-11-25T09:00:00Z", 90, "2026-11-25T10:30:00Z"),
        ("before opening", &berlin, "2026-11-25T06:00:00Z", 30, "2026-11-25T08:30:00Z"),
        ("after closing", &berlin, "2026-11-25T17:00:00Z", 30, "2026-11-26T08:30:00Z"),
        ("exactly to closing", &berlin, "2026-11-25T15:00:00Z", 60, "2026-11-25T16:00:00Z"),
        ("to the second", &berlin, "2026-11-25T09:00:07Z", 1, "2026-11-25T09:01:07Z"),
        ("across a weekend", &berlin, "2026-11-27T15:00:00Z", 120, "2026-11-30T09:00:00Z"),
        ("from a saturday", &berlin, "2026-11-28T12:00:00Z", 60, "2026-11-30T09:00:00Z"),
        ("over a holiday and weekend", &berlin, "2026-12-24T15:00:00Z", 120, "2026-12-28T09:00:00Z"),
        ("several intervals a day", &split, "2026-11-25T11:00:00Z", 120, "2026-11-25T14:00:00Z"),
        ("interval crossing midnight", &night, "2026-11-23T23:30:00Z", 120, "2026-11-24T01:30:00Z"),
        ("crossing midnight, past a holiday", &night, "2026-11-24T05:00:00Z", 120, "2026-11-30T23:00:00Z"),
        // A weekend of the spring change: Friday's last hour in CET
        // (UTC+1), Monday's first in CEST (UTC+2).
        ("Berlin spring weekend", &berlin, "2026-03-27T15:00:00Z", 120, "2026-03-30T08:00:00Z"),
        // The worked example of the SLA docs.
        ("docs: first response", &berlin, "2026-03-27T15:00:00Z", 60, "2026-03-27T16:00:00Z"),
        ("docs: resolution", &berlin, "2026-03-27T15:00:00Z", 240, "2026-03-30T10:00:00Z"),
        ("docs: autumn resolution", &berlin, "2026-10-23T14:00:00Z", 240, "2026-10-26T11:00:00Z"),
        ("Berlin autumn weekend", &berlin, "2026-10-23T14:00:00Z", 120, "2026-10-26T09:00:00Z"),
        ("New York spring weekend", &new_york, "2026-03-06T21:00:00Z", 120, "2026-03-09T14:00:00Z"),
        ("New York autumn weekend", &new_york, "2026-10-30T20:00:00Z", 120, "2026-11-02T15:00:00Z"),
        // Open all day: a day of 23 hours in spring, 25 in autumn.
        ("Berlin all day over spring", &berlin_round, "2026-03-28T12:00:00Z", 24 * 60, "2026-03-29T12:00:00Z"),
        ("Berlin all day over autumn", &berlin_round, "2026-10-24T12:00:00Z", 24 * 60, "2026-10-25T12:00:00Z"),
        ("Berlin 01-05 on spring change", &sunday_berlin, "2026-03-29T00:00:00Z", 180, "2026-03-29T03:00:00Z"),
        ("Berlin 01-05 on autumn change", &sunday_berlin, "2026-10-24T23:00:00Z", 300, "2026-10-25T04:00:00Z"),
        ("New York 00-04 on spring change", &sunday_new_york, "2026-03-08T05:00:00Z", 180, "2026-03-08T08:00:00Z"),
        ("New York 00-04 on autumn change", &sunday_new_york, "2026-11-01T04:00:00Z", 300, "2026-11-01T09:00:00Z"),
        ("opening inside the spring gap", &gap_open, "2026-03-08T05:00:00Z", 1, "2026-03-08T07:01:00Z"),
        ("around the clock", &Hours::Always, "2026-11-28T23:30:00Z", 45, "2026-11-29T00:15:00Z"),
    ];
    for (name, hours, from, minutes, expected) in cases {
        let due = hours.add(at(from), Duration::minutes(minutes));
        assert_eq!(due, Some(at(expected)), "{name}");
    }
}

#[test]
fn business_minutes_between_match_hand_computed_cases() {
    let berlin = weekdays("Europe/Berlin", "09:00", "17:00", &["2026-12-25"]);
    let sunday_berlin = calendar("Europe/Berlin", &[("sun", "01:00", "05:00")], &[]);
    let sunday_new_york = calendar("America/New_York", &[("sun", "00:00", "04:00")], &[]);
    let night = calendar("UTC", &[("mon", "22:00", "06:00")], &[]);
    #[rustfmt::skip]
    let cases: Vec<(&str, &Hours, &str, &str, i64)> = vec![
        ("within a day", &berlin, "2026-11-25T09:00:00Z", "2026-11-25T10:30:00Z", 90),
        ("across a weekend", &berlin, "2026-11-27T15:00:00Z", "2026-11-30T09:00:00Z", 120),
        ("over a holiday", &berlin, "2026-12-24T15:00:00Z", "2026-12-28T09:00:00Z", 120),
        ("all outside hours", &berlin, "2026-11-28T00:00:00Z", "2026-11-29T23:00:00Z", 0),
        ("backwards", &berlin, "2026-11-25T10:00:00Z", "2026-11-25T09:00:00Z", 0),
        ("Berlin spring day", &sunday_berlin, "2026-03-28T00:00:00Z", "2026-03-30T00:00:00Z", 180),
        ("Berlin autumn day", &sunday_berlin, "2026-10-24T00:00:00Z", "2026-10-26T00:00:00Z", 300),
        ("New York spring day", &sunday_new_york, "2026-03-07T00:00:00Z", "2026-03-09T00:00:00Z", 180),
        ("New York autumn day", &sunday_new_york, "2026-10-31T00:00:00Z", "2026-11-02T00:00:00Z", 300),
        ("inside a night interval", &night, "2026-11-24T01:00:00Z", "2026-11-24T12:00:00Z", 300),
        ("around the clock", &Hours::Always, "2026-11-25T09:00:00Z", "2026-11-26T09:00:00Z", 1440),
    ];
    for (name, hours, from, to, minutes) in cases {
        assert_eq!(
            hours.between(at(from), at(to)),
            Duration::minutes(minutes),
            "{name}"
        );
    }
}

#[test]
fn adding_then_measuring_gives_the_minutes_back() {
    let berlin = weekdays("Europe/Berlin", "08:30", "12:00", &["2026-12-25"]);
    let from = at("2026-12-23T10:17:41Z");
    for minutes in [1, 59, 211, 1000, 5000] {
        let due = berlin.add(from, Duration::minutes(minutes)).expect("due");
        assert_eq!(berlin.between(from, due), Duration::minutes(minutes));
    }
}

#[test]
fn open_is_true_inside_and_false_outside_hours() {
    let berlin = weekdays("Europe/Berlin", "09:00", "17:00", &[]);
    assert!(berlin.is_open(at("2026-11-25T08:00:00Z")));
    assert!(!berlin.is_open(at("2026-11-25T07:59:59Z")));
    assert!(!berlin.is_open(at("2026-11-25T16:00:00Z")));
    assert!(!berlin.is_open(at("2026-11-28T12:00:00Z")));
}

#[test]
fn a_calendar_of_holidays_only_has_no_due_time() {
    let only = calendar("UTC", &[("wed", "09:00", "10:00")], &[]);
    let Hours::Calendar(mut c) = only else {
        panic!("a calendar")
    };
    let wednesdays =
        (0..400).map(|w| NaiveDate::from_ymd_opt(2026, 11, 25).expect("date") + Duration::weeks(w));
    c.holidays.extend(wednesdays.take(200));
    let hours = Hours::Calendar(c);
    assert_eq!(
        hours.add(at("2026-11-25T00:00:00Z"), Duration::minutes(1)),
        None
    );
}

#[test]
fn clock_texts_parse_strictly() {
    assert_eq!(parse_clock("09:30", false), Some(570));
    assert_eq!(parse_clock("24:00", true), Some(1440));
    for bad in ["24:00", "9:30", "09:60", "25:00", "0930", "09:3a", " 09:30"] {
        assert_eq!(parse_clock(bad, false), None, "{bad}");
    }
    assert_eq!(format_clock(570), "09:30");
}
