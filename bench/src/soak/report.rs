//! bench/SOAK.md: the verdicts, the numbers behind them, where they came from.

use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use super::SoakArgs;
use super::load::Counters;
use super::receiver::Counts;
use super::sample::{Drain, Sample};
use super::verdict::{RETAINED, Verdict, allowed_bytes};

pub struct Inputs<'a> {
    pub args: &'a SoakArgs,
    pub samples: &'a [Sample],
    pub verdicts: &'a [Verdict],
    pub baseline: Duration,
    pub drain: &'a Drain,
    pub counters: &'a Counters,
    pub webhooks: Counts,
    pub png: &'a Path,
    pub csv: &'a Path,
    /// /proc/loadavg before the seed and after the load.
    pub load_average: (String, String),
    pub machine: String,
    /// `SHOW autovacuum` of the server.
    pub autovacuum: String,
    /// The stand-in's checks that found work, tables vacuumed, failures.
    pub vacuum: (u64, u64, u64),
}

const MIB: f64 = 1024.0 * 1024.0;

pub fn document(i: &Inputs) -> String {
    let mut d = String::new();
    let passed = i.verdicts.iter().all(|v| v.pass);
    let png_name = i
        .png
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let _ = writeln!(
        d,
        "# Soak: one service process under a mixed load for {}\n",
        fmt_duration(i.args.duration)
    );
    let _ = writeln!(
        d,
        "Written by `{}` (bench/src/soak/); do not edit by hand.\n",
        i.args.command
    );
    let _ = writeln!(d, "**Verdict: {}**\n", if passed { "PASS" } else { "FAIL" });
    let _ = writeln!(d, "| criterion | verdict | measured |\n|---|---|---|");
    for v in i.verdicts {
        let _ = writeln!(
            d,
            "| {} | {} | {} |",
            v.name,
            if v.pass { "pass" } else { "**FAIL**" },
            v.detail.replace('|', "/")
        );
    }
    let _ = writeln!(d, "\n## Run\n");
    let _ = writeln!(
        d,
        "- date: {}",
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC")
    );
    let _ = writeln!(d, "- commit: {}", i.args.commit);
    let _ = writeln!(d, "- command: `{}`", i.args.command);
    let _ = writeln!(d, "- machine: {}", i.machine);
    let _ = writeln!(
        d,
        "- load average (1/5/15 min) before the seed: {}, after the load: {} (the machine was shared with other builds and tests: the soak measures growth, not speed)",
        i.load_average.0, i.load_average.1
    );
    let _ = writeln!(
        d,
        "- Postgres `autovacuum`: {} (when off, the soak stands in for it: at every sample it runs `VACUUM (ANALYZE)` on each table whose dead rows exceed 50 + 20% of its live rows, autovacuum's default trigger, one table at a time like one autovacuum worker; otherwise nothing reclaims dead rows and the tables updated in place grow with every write); here {} checks found tables due and {} table vacuums ran, {} failed",
        i.autovacuum, i.vacuum.0, i.vacuum.1, i.vacuum.2
    );
    let _ = writeln!(
        d,
        "- the service: one process on Postgres + Redis, retention on with `SUPPORTDESK_RETENTION_DAYS=0` and `SUPPORTDESK_RETENTION_INTERVAL_SECS=30` (finished deliveries, their attempts and events go at the next pass, every 30 s), webhook retries after 1, 2, 4 and 8 s"
    );
    let _ = writeln!(
        d,
        "- the load: {} sockets, half agents (API key) and half visitors (visitor token), one chat per pair, each socket subscribed to its session (opened 32 handshakes at a time before the clock starts; a socket that fails reconnects after 1, 2, 4, … up to 30 s); visitors send a message every 30 s, agents every 60 s; presence heartbeats of the same agents every 20 s (TTL 30 s); REST at fixed rates per second: 5 `POST /tickets`, 5 `GET /tickets?status=OPEN&limit=20`, 10 `GET /tickets/:id`, 5 `POST /tickets/:id/comments`, 5 `GET /tickets/:id/comments`, 5 `GET /kb/search` (over the seeded 10,000 articles); a webhook on `ticket.created` and `comment.created` to a local receiver that answers 500 to every 20th delivery (5%)",
        i.args.sockets
    );
    let last = i.samples.last();
    if let Some(s) = last {
        let _ = writeln!(
            d,
            "- totals: {} requests, {} socket frames sent and {} received, {} webhook deliveries received ({} answered 500), {} errors",
            s.requests,
            s.frames_sent,
            s.frames_received,
            i.webhooks.received,
            i.webhooks.failed,
            s.errors
        );
    }
    let _ = writeln!(
        d,
        "- samples every {} s in `{}` (columns: seconds, RSS KiB, open descriptors, Redis `used_memory`, outbox pending jobs, counters, dead rows of all tables, the oldest open transaction's age in seconds, then `<table>_bytes` and `<table>_rows` per table)",
        i.args.sample_secs,
        relative(i.csv)
    );
    let _ = writeln!(d, "\n## The checks\n");
    let _ = writeln!(
        d,
        "- Baseline: the first sample at or after {:.0} s (five minutes, or a third of a shorter run); every later sample is checked against it.",
        i.baseline.as_secs_f64()
    );
    let _ = writeln!(
        d,
        "- RSS and open descriptors (`/proc/<pid>/status` VmRSS, entries of `/proc/<pid>/fd`) stay within ±10% of their baseline value."
    );
    let _ = writeln!(
        d,
        "- Outbox: once the load stops, `SELECT count(*) FROM outbox_jobs WHERE status = 'pending'` must reach 0 within 180 s (polled every 2 s); here {} pending at the stop, {} after {:.0} s.",
        i.drain.pending_at_stop,
        i.drain.pending_at_end,
        i.drain.waited.as_secs_f64()
    );
    let _ = writeln!(
        d,
        "- Errors: a REST answer other than the expected status, a connection failure, a socket `error` frame, close or failure; the receiver's own 500s are not errors (the service retries them)."
    );
    let _ = writeln!(
        d,
        "- Table sizes (`pg_total_relation_size`: heap, indexes, TOAST; exact `count(*)` rows): a table may grow only with the rows the load wrote, at the bytes per row it had at the baseline, times 1.25 (page fill, index splits, dead rows autovacuum has not reused yet) plus 1 MiB. The tables retention empties ({}) must level off instead: at most 1.25 times their baseline size plus 1 MiB. The search documents (`chat_session_search`, `ticket_search`) append each new message or comment to their session's or ticket's row (up to 100,000 characters), so their size follows the rows of `chat_messages` and `ticket_comments` (plus their own). `outbox_jobs` keeps finished jobs for 7 days (not a setting), so it grows with the load like the tickets do.",
        RETAINED.join(", ")
    );
    let _ = writeln!(
        d,
        "- Redis `used_memory` is the whole server's (other tests share it): shown, not judged."
    );
    if let (Some(base), Some(end)) = (
        i.samples
            .iter()
            .find(|s| s.secs >= i.baseline.as_secs_f64()),
        last,
    ) {
        let first = &i.samples[0];
        let _ = writeln!(
            d,
            "\n## Series\n\n| | first sample | baseline | end |\n|---|---|---|---|"
        );
        let row = |name: &str, f: &dyn Fn(&Sample) -> String| {
            format!("| {name} | {} | {} | {} |", f(first), f(base), f(end))
        };
        let _ = writeln!(d, "{}", row("seconds", &|s| format!("{:.0}", s.secs)));
        let _ = writeln!(
            d,
            "{}",
            row("RSS MiB", &|s| format!("{:.1}", s.rss_kib as f64 / 1024.0))
        );
        let _ = writeln!(d, "{}", row("open descriptors", &|s| s.fds.to_string()));
        let _ = writeln!(
            d,
            "{}",
            row("Postgres MiB (all tables)", &|s| format!(
                "{:.1}",
                s.db_bytes() as f64 / MIB
            ))
        );
        let _ = writeln!(
            d,
            "{}",
            row("Redis used_memory MiB", &|s| format!(
                "{:.1}",
                s.redis_used_bytes as f64 / MIB
            ))
        );
        let _ = writeln!(
            d,
            "{}",
            row("outbox pending", &|s| s.outbox_pending.to_string())
        );
        let _ = writeln!(d, "{}", row("errors so far", &|s| s.errors.to_string()));
        let _ = writeln!(
            d,
            "{}",
            row("dead rows (all tables)", &|s| s.dead_rows.to_string())
        );
        let most = |f: &dyn Fn(&Sample) -> f64| {
            i.samples
                .iter()
                .filter(|s| s.secs >= i.baseline.as_secs_f64())
                .map(f)
                .fold(0.0, f64::max)
        };
        let _ = writeln!(
            d,
            "{}",
            row("oldest open transaction s", &|s| format!(
                "{:.1}",
                s.oldest_transaction_secs
            ))
        );
        let _ = writeln!(
            d,
            "\nAfter the baseline: at most {:.0} dead rows, and no transaction open longer than {:.1} s (a long one would stop vacuum from reclaiming anything newer).",
            most(&|s| s.dead_rows as f64),
            most(&|s| s.oldest_transaction_secs)
        );
        let _ = writeln!(
            d,
            "\nTables that changed between the baseline and the end:\n\n| table | KiB at baseline | rows | KiB at end | rows | allowed KiB |\n|---|---|---|---|---|---|"
        );
        for now in &end.tables {
            let Some(at_base) = base.table(&now.name) else {
                continue;
            };
            if at_base.bytes == now.bytes && at_base.rows == now.rows {
                continue;
            }
            let _ = writeln!(
                d,
                "| {} | {} | {} | {} | {} | {} |",
                now.name,
                at_base.bytes / 1024,
                at_base.rows,
                now.bytes / 1024,
                now.rows,
                allowed_bytes(base, end, at_base, now) / 1024
            );
        }
    }
    let _ = writeln!(d, "\n## Plot\n\n![soak series]({png_name})\n");
    let _ = writeln!(
        d,
        "Six panels, time (0 to the end of the run) across, each from 0 up; left to right, top to bottom: RSS, open descriptors, Postgres size of all tables, Redis `used_memory`, outbox pending jobs, errors so far. Blue: the series; grey vertical line: the baseline; red: ±10% of the baseline value (RSS and descriptors). The plot has no text so that it needs no font; the numbers are above and in the CSV."
    );
    if let Ok(errors) = i.counters.first_errors.lock()
        && !errors.is_empty()
    {
        let _ = writeln!(d, "\n## First errors\n");
        for e in errors.iter() {
            let _ = writeln!(
                d,
                "- `{}`",
                e.replace('`', "'").chars().take(300).collect::<String>()
            );
        }
    }
    d
}

/// `bench/out/…` rather than the checkout's absolute path.
fn relative(path: &Path) -> String {
    let text = path.display().to_string();
    match text.find("bench/out/") {
        Some(at) => text[at..].to_string(),
        None => text,
    }
}

fn fmt_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs.is_multiple_of(60) {
        format!("{} minutes", secs / 60)
    } else {
        format!("{secs} s")
    }
}
