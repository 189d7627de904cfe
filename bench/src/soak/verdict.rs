//! Pass or fail per criterion, from the samples taken after the baseline
//! point (five minutes into the run).

use std::time::Duration;

use super::load::Counters;
use super::sample::{Drain, Sample, Table};

/// RSS and descriptors may move this far from their baseline value.
const BAND: f64 = 0.10;
/// A table may grow to this many times the bytes per row it had at the
/// baseline (page fill, index splits, dead rows autovacuum has not reused
/// yet), plus [`TABLE_SLACK`].
const BYTES_PER_ROW_FACTOR: f64 = 1.25;
const TABLE_SLACK: u64 = 1 << 20;
/// The tables the retention pass empties of finished rows: their size
/// must level off rather than follow their row count.
pub const RETAINED: &[&str] = &[
    "webhook_delivery_attempts",
    "webhook_deliveries",
    "events",
    "idempotency_keys",
];

/// Search documents that append the text of another table's new rows to
/// an existing row (capped per row): they grow with that table's rows, not
/// their own.
const GROWS_WITH: &[(&str, &str)] = &[
    ("chat_session_search", "chat_messages"),
    ("ticket_search", "ticket_comments"),
];

pub struct Verdict {
    pub name: &'static str,
    pub pass: bool,
    pub detail: String,
}

impl Verdict {
    pub fn line(&self) -> String {
        format!("{}: {}", self.name, self.detail)
    }
}

pub fn judge(
    samples: &[Sample],
    baseline: Duration,
    drain: &Drain,
    counters: &Counters,
) -> Vec<Verdict> {
    let Some(base_index) = samples
        .iter()
        .position(|s| s.secs >= baseline.as_secs_f64())
    else {
        return vec![Verdict {
            name: "samples",
            pass: false,
            detail: "the run ended before the baseline sample".into(),
        }];
    };
    let base = &samples[base_index];
    let after = &samples[base_index..];
    let errors = Counters::get(&counters.errors);
    vec![
        band("RSS", base, after, |s| s.rss_kib as f64, "KiB"),
        band("open descriptors", base, after, |s| s.fds as f64, ""),
        Verdict {
            name: "outbox drains",
            pass: drain.drained(),
            detail: format!(
                "{} jobs pending when the load stopped, {} after waiting {:.0} s",
                drain.pending_at_stop,
                drain.pending_at_end,
                drain.waited.as_secs_f64()
            ),
        },
        Verdict {
            name: "errors",
            pass: errors == 0,
            detail: format!("{errors} errors"),
        },
        tables(base, after),
    ]
}

fn band(
    name: &'static str,
    base: &Sample,
    after: &[Sample],
    value: impl Fn(&Sample) -> f64,
    unit: &str,
) -> Verdict {
    let at_base = value(base);
    let (low, high) = after
        .iter()
        .map(&value)
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let rel = |v: f64| {
        if at_base > 0.0 {
            (v / at_base - 1.0) * 100.0
        } else {
            0.0
        }
    };
    let pass = at_base > 0.0 && rel(low) >= -BAND * 100.0 && rel(high) <= BAND * 100.0;
    Verdict {
        name,
        pass,
        detail: format!(
            "{at_base:.0} {unit} at {:.0} s; afterwards between {low:.0} ({:+.1}%) and {high:.0} ({:+.1}%), allowed ±{:.0}%",
            base.secs,
            rel(low),
            rel(high),
            BAND * 100.0
        ),
    }
}

/// The size `table` may have now given its baseline `at_base`: retained
/// tables level off, the others grow with their rows at the baseline's
/// bytes per row.
pub fn allowed_bytes(base: &Sample, now_sample: &Sample, at_base: &Table, now: &Table) -> u64 {
    // Whose rows this table's size follows: its own, or the appended table's.
    let (rows_base, rows_now) = match GROWS_WITH.iter().find(|(t, _)| *t == at_base.name) {
        Some((_, source)) => (
            base.table(source).map_or(0, |t| t.rows) + at_base.rows,
            now_sample.table(source).map_or(0, |t| t.rows) + now.rows,
        ),
        None => (at_base.rows, now.rows),
    };
    let allowed = if RETAINED.contains(&at_base.name.as_str()) || rows_base == 0 {
        at_base.bytes as f64 * BYTES_PER_ROW_FACTOR
    } else {
        rows_now as f64 * at_base.bytes as f64 / rows_base as f64 * BYTES_PER_ROW_FACTOR
    };
    allowed as u64 + TABLE_SLACK
}

fn tables(base: &Sample, after: &[Sample]) -> Verdict {
    // The table and sample that came nearest to (or went furthest past) its allowance.
    let mut worst: Option<(f64, String)> = None;
    for sample in after {
        for now in &sample.tables {
            let Some(at_base) = base.table(&now.name) else {
                continue;
            };
            let allowed = allowed_bytes(base, sample, at_base, now);
            let share = now.bytes as f64 / allowed as f64;
            if worst.as_ref().is_none_or(|(w, _)| share > *w) {
                worst = Some((
                    share,
                    format!(
                        "{} at {:.0} s: {} KiB, {} rows (at {:.0} s: {} KiB, {} rows), allowed {} KiB",
                        now.name,
                        sample.secs,
                        now.bytes / 1024,
                        now.rows,
                        base.secs,
                        at_base.bytes / 1024,
                        at_base.rows,
                        allowed / 1024
                    ),
                ));
            }
        }
    }
    let (share, detail) = worst.unwrap_or((0.0, "no tables sampled".into()));
    Verdict {
        name: "table sizes",
        pass: share <= 1.0,
        detail: format!(
            "nearest to its allowance: {detail} ({:.0}% of it)",
            share * 100.0
        ),
    }
}
