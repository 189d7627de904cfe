//! The one place that formats a scenario's result rows for RESULTS.md, so
//! every scenario writes its cells (rates, ratios, latencies, RSS) alike.

use super::Measured;
use crate::report::{Row, Verdict, verdict};
use crate::stats::{Throughput, fmt_kib, fmt_ms, fmt_rate};

/// One row of the results table; a cell never set reads "–", and a row
/// without a target is context (no verdict).
pub(super) struct RowBuilder {
    row: Row,
    /// Service / baseline of a throughput row, for [`RowBuilder::goal`].
    ratio: f64,
}

impl RowBuilder {
    pub(super) fn new(scenario: impl Into<String>) -> RowBuilder {
        RowBuilder {
            row: Row {
                scenario: scenario.into(),
                service: "–".into(),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "–".into(),
                verdict: Verdict::Info,
                latency: "–".into(),
                rss: "–".into(),
            },
            ratio: f64::NAN,
        }
    }

    /// The service's rate against the baseline's as a percentage, their
    /// p50 / p99 side by side and the service's peak RSS; `baseline_label`
    /// says in brackets what the baseline ran.
    pub(super) fn throughput(
        scenario: impl Into<String>,
        service: &Measured,
        baseline: &Throughput,
        baseline_unit: &str,
        baseline_label: &str,
    ) -> RowBuilder {
        let r = ratio(service.t.rate(), baseline.rate());
        let mut row = RowBuilder::new(scenario)
            .service(fmt_rate(service.t.rate(), "req/s"))
            .baseline(format!(
                "{} ({baseline_label})",
                fmt_rate(baseline.rate(), baseline_unit)
            ))
            .ratio_pct(r)
            .latency_pair(&service.t, Some(baseline))
            .rss_kib(service.peak_rss_kib);
        row.ratio = r;
        row
    }

    /// Met when the throughput ratio is at least `min_ratio`.
    pub(super) fn goal(self, target: &str, min_ratio: f64) -> RowBuilder {
        let met = self.ratio >= min_ratio;
        self.met_if(target, met)
    }

    pub(super) fn met_if(mut self, target: &str, met: bool) -> RowBuilder {
        self.row.target = target.into();
        self.row.verdict = verdict(met);
        self
    }

    pub(super) fn service(mut self, text: String) -> RowBuilder {
        self.row.service = text;
        self
    }

    pub(super) fn baseline(mut self, text: String) -> RowBuilder {
        self.row.baseline = text;
        self
    }

    pub(super) fn ratio_pct(mut self, r: f64) -> RowBuilder {
        self.row.ratio = if r.is_nan() {
            "–".into()
        } else {
            format!("{:.0}%", r * 100.0)
        };
        self
    }

    /// For ratios of latencies and sizes, where "1.32×" reads better than 132%.
    pub(super) fn ratio_times(mut self, r: f64) -> RowBuilder {
        self.row.ratio = if r.is_nan() {
            "–".into()
        } else {
            format!("{r:.2}×")
        };
        self
    }

    pub(super) fn latency(mut self, text: String) -> RowBuilder {
        self.row.latency = text;
        self
    }

    /// "p50 / p99" of the service, then the baseline's in brackets.
    pub(super) fn latency_pair(
        self,
        service: &Throughput,
        baseline: Option<&Throughput>,
    ) -> RowBuilder {
        let mut text = format!(
            "{} / {}",
            fmt_ms(service.p50_ms()),
            fmt_ms(service.p99_ms())
        );
        if let Some(b) = baseline {
            text.push_str(&format!(
                " ({} / {})",
                fmt_ms(b.p50_ms()),
                fmt_ms(b.p99_ms())
            ));
        }
        self.latency(text)
    }

    pub(super) fn rss_kib(mut self, kib: u64) -> RowBuilder {
        self.row.rss = fmt_kib(kib as f64);
        self
    }

    pub(super) fn build(self) -> Row {
        self.row
    }
}

/// An A/B scenario's throughput row: `with` against `without` (which
/// `without_label` names), met at `min_ratio` of its rate or more.
pub(super) fn ab_throughput(
    scenario: &str,
    target: &str,
    min_ratio: f64,
    with: &Measured,
    without: &Measured,
    without_label: &str,
) -> Row {
    RowBuilder::throughput(scenario, with, &without.t, "req/s", without_label)
        .goal(target, min_ratio)
        .build()
}

/// An A/B scenario's p99 row: `with`'s p99 against `without`'s (which
/// `without_label` names), met at `max_ratio` times it or less.
pub(super) fn ab_p99(
    scenario: &str,
    target: &str,
    max_ratio: f64,
    with: &Measured,
    without: &Measured,
    without_label: &str,
) -> Row {
    let r99 = ratio(with.t.p99_ms(), without.t.p99_ms());
    RowBuilder::new(scenario)
        .service(fmt_ms(with.t.p99_ms()))
        .baseline(format!("{} ({without_label})", fmt_ms(without.t.p99_ms())))
        .ratio_times(r99)
        .met_if(target, r99 <= max_ratio)
        .latency_pair(&with.t, Some(&without.t))
        .rss_kib(with.peak_rss_kib)
        .build()
}

/// `a / b`, NaN (printed "–") when there is no baseline figure.
pub(super) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats;

    /// `ok` operations in `secs`, each taking `micros`.
    fn run(ok: u64, secs: f64, micros: u64) -> Throughput {
        let mut hist = stats::histogram();
        for _ in 0..ok {
            stats::record(&mut hist, micros);
        }
        Throughput {
            ok,
            errors: 0,
            secs,
            hist,
            first_error: None,
        }
    }

    fn service(ok: u64, secs: f64, micros: u64, peak_rss_kib: u64) -> Measured {
        Measured {
            t: run(ok, secs, micros),
            peak_rss_kib,
            cpu_secs: 0.0,
            ops: 0.0,
        }
    }

    #[test]
    fn a_throughput_row_compares_the_rates_as_a_percentage() {
        let row = RowBuilder::throughput(
            "2 `GET /tickets`",
            &service(600, 2.0, 2_000, 18_432),
            &run(1_000, 2.0, 1_000),
            "tx/s",
            "pgbench, same 2 queries",
        )
        .goal("≥ 35% of pgbench", 0.35)
        .build();
        assert_eq!(
            crate::report::table(&[row]).lines().nth(2),
            Some(
                "| 2 `GET /tickets` | 300 req/s | 500 tx/s (pgbench, same 2 queries) | 60% | ≥ 35% of pgbench | met | 2.0 ms / 2.0 ms (1.0 ms / 1.0 ms) | 18 MiB |"
            )
        );
    }

    #[test]
    fn a_row_without_a_target_is_context_with_empty_cells() {
        let row = RowBuilder::new("3 context")
            .service("1 req/s".into())
            .build();
        assert_eq!(
            crate::report::table(&[row]).lines().nth(2),
            Some("| 3 context | 1 req/s | – | – | – | – | – | – |")
        );
    }

    #[test]
    fn a_ratio_without_a_baseline_reads_as_a_dash() {
        let row = RowBuilder::new("x").ratio_times(ratio(1.0, 0.0)).build();
        assert_eq!(row.ratio, "–");
    }
}
