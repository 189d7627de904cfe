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

/// `a / b`, NaN (printed "–") when there is no baseline figure.
pub(super) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}
