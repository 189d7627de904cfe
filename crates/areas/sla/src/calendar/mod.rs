//! Business-hours arithmetic, pure and exact to the second: when does a
//! target of N business minutes fall due, and how much business time lies
//! between two instants. Nothing here reads the clock; callers pass `now`.
//!
//! A business minute is a real elapsed minute while the calendar is open,
//! so a DST change inside an opening adds or removes real time from it
//! (01:00–05:00 in Berlin is three hours on the spring change, five on the
//! autumn one). Wall times are resolved in the calendar's time zone with
//! the tz database: a wall time that does not exist (inside a spring gap)
//! means the instant the gap ends; one that occurs twice means its first
//! occurrence.

use std::collections::BTreeSet;

use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// Minutes in a day; an interval may close at `24:00`.
pub const DAY_MINUTES: u32 = 24 * 60;

/// How far ahead the search for open time goes before giving up: only a
/// calendar whose every opening falls on a holiday gets that far.
const HORIZON_DAYS: i64 = 3 * 366;

/// One weekly opening: on `weekday` (0 = Monday) from `open` to `close`,
/// both in minutes after local midnight. `close <= open` means the interval
/// crosses midnight and closes the next day; it belongs to the day it
/// opens on (a holiday on that day cancels it whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opening {
    pub weekday: u32,
    pub open: u32,
    pub close: u32,
}

/// When a ticket's clocks run.
#[derive(Debug, Clone, PartialEq)]
pub enum Hours {
    /// Around the clock: business time is elapsed time.
    Always,
    Calendar(Calendar),
}

/// Weekly openings in a time zone, minus holidays (local dates).
#[derive(Debug, Clone, PartialEq)]
pub struct Calendar {
    tz: Tz,
    /// Per weekday (0 = Monday), `(open, close)` sorted by `open`.
    week: [Vec<(u32, u32)>; 7],
    holidays: BTreeSet<NaiveDate>,
}

impl Calendar {
    /// `None` when there is no opening at all (a calendar that is never
    /// open would put every due time at infinity).
    pub fn new(tz: Tz, openings: &[Opening], holidays: BTreeSet<NaiveDate>) -> Option<Calendar> {
        let mut week: [Vec<(u32, u32)>; 7] = Default::default();
        for o in openings {
            week.get_mut(o.weekday as usize)?.push((o.open, o.close));
        }
        for day in &mut week {
            day.sort_unstable();
        }
        (!openings.is_empty()).then_some(Calendar { tz, week, holidays })
    }

    /// The open windows (UTC, half-open) in time order, merged where they
    /// touch or overlap, from the one that may contain `from` onwards,
    /// up to the horizon.
    fn windows(&self, from: DateTime<Utc>) -> impl Iterator<Item = Window> + '_ {
        // An interval of the day before may cross midnight into `from`'s day.
        let first = from.with_timezone(&self.tz).date_naive() - Duration::days(1);
        let raw = (0..HORIZON_DAYS)
            .map(move |n| first + Duration::days(n))
            .filter(|date| !self.holidays.contains(date))
            .flat_map(move |date| {
                let day = date.weekday().num_days_from_monday() as usize;
                self.week[day].iter().map(move |&(open, close)| {
                    let end_day = if close <= open {
                        date + Duration::days(1)
                    } else {
                        date
                    };
                    Window {
                        start: self.resolve(date, open),
                        end: self.resolve(end_day, close),
                    }
                })
            })
            .filter(|w| w.end > w.start);
        Merged {
            inner: raw,
            pending: None,
        }
        .skip_while(move |w| w.end <= from)
    }

    /// The instant of a wall time (`minutes` after local midnight of
    /// `date`, up to 24:00).
    fn resolve(&self, date: NaiveDate, minutes: u32) -> DateTime<Utc> {
        let midnight = date.and_hms_opt(0, 0, 0).unwrap_or(NaiveDateTime::MIN);
        let wall = midnight + Duration::minutes(i64::from(minutes));
        // Gaps are whole minutes and at most a few hours long: the first wall
        // minute that exists after one is the instant the gap ends.
        (0..=24 * 60)
            .find_map(|step| {
                match self
                    .tz
                    .from_local_datetime(&(wall + Duration::minutes(step)))
                {
                    LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => {
                        Some(t.with_timezone(&Utc))
                    }
                    LocalResult::None => None,
                }
            })
            .unwrap_or_else(|| wall.and_utc())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

/// Joins windows that overlap (the days' intervals arrive sorted by start,
/// so one look-behind suffices). Windows that only touch stay apart, so a
/// calendar open every hour of the week does not merge without end.
struct Merged<I> {
    inner: I,
    pending: Option<Window>,
}

impl<I: Iterator<Item = Window>> Iterator for Merged<I> {
    type Item = Window;

    fn next(&mut self) -> Option<Window> {
        loop {
            match (self.pending, self.inner.next()) {
                (None, None) => return None,
                (Some(w), None) => {
                    self.pending = None;
                    return Some(w);
                }
                (None, Some(next)) => self.pending = Some(next),
                (Some(w), Some(next)) if next.start < w.end => {
                    self.pending = Some(Window {
                        start: w.start,
                        end: w.end.max(next.end),
                    });
                }
                (Some(w), Some(next)) => {
                    self.pending = Some(next);
                    return Some(w);
                }
            }
        }
    }
}

impl Hours {
    /// The instant at which `business` of open time has passed since
    /// `from`. `None` only when the calendar has no open time left within
    /// the horizon (every opening a holiday).
    pub fn add(&self, from: DateTime<Utc>, business: Duration) -> Option<DateTime<Utc>> {
        let calendar = match self {
            Hours::Always => return from.checked_add_signed(business),
            Hours::Calendar(calendar) => calendar,
        };
        if business <= Duration::zero() {
            return Some(from);
        }
        let mut left = business;
        for w in calendar.windows(from) {
            let start = w.start.max(from);
            let open = w.end - start;
            if left <= open {
                return Some(start + left);
            }
            left -= open;
        }
        None
    }

    /// The open time in `[from, to)`; zero when `to <= from`.
    pub fn between(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Duration {
        if to <= from {
            return Duration::zero();
        }
        let calendar = match self {
            Hours::Always => return to - from,
            Hours::Calendar(calendar) => calendar,
        };
        calendar
            .windows(from)
            .take_while(|w| w.start < to)
            .map(|w| w.end.min(to) - w.start.max(from))
            .sum()
    }

    /// Whether the clock runs at `at`.
    pub fn is_open(&self, at: DateTime<Utc>) -> bool {
        match self {
            Hours::Always => true,
            Hours::Calendar(calendar) => calendar.windows(at).next().is_some_and(|w| w.start <= at),
        }
    }
}

/// `"09:00"` as minutes after midnight; `24:00` only where `allow_end`.
pub fn parse_clock(text: &str, allow_end: bool) -> Option<u32> {
    let (h, m) = text.split_once(':')?;
    if h.len() != 2 || m.len() != 2 || !(h.bytes().chain(m.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    let minutes = h * 60 + m;
    let fits = m < 60 && (minutes < DAY_MINUTES || (allow_end && minutes == DAY_MINUTES));
    fits.then_some(minutes)
}

/// The spelling of minutes after midnight, as `parse_clock` reads it.
pub fn format_clock(minutes: u32) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// Weekday names as the API spells them, Monday first.
pub const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

#[cfg(test)]
mod tests;
