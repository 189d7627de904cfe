//! Latency histograms (microseconds) and the figures a scenario reports.

use hdrhistogram::Histogram;

pub fn histogram() -> Histogram<u64> {
    // 1 µs .. 120 s, 3 significant digits.
    Histogram::new_with_bounds(1, 120_000_000, 3).expect("histogram bounds")
}

/// Records `micros`, clamped into the histogram's range.
pub fn record(hist: &mut Histogram<u64>, micros: u64) {
    let _ = hist.record(micros.clamp(1, 120_000_000));
}

/// What a throughput run measured.
#[derive(Debug, Clone)]
pub struct Throughput {
    /// Successful operations in the measured window.
    pub ok: u64,
    /// Failed operations (wrong status, transport error, aborted transaction).
    pub errors: u64,
    /// Length of the measured window, seconds.
    pub secs: f64,
    pub hist: Histogram<u64>,
    /// First failure seen, for the notes.
    pub first_error: Option<String>,
}

impl Throughput {
    pub fn empty() -> Throughput {
        Throughput {
            ok: 0,
            errors: 0,
            secs: 0.0,
            hist: histogram(),
            first_error: None,
        }
    }

    /// Adds another measured window (slices of one interleaved run).
    pub fn merge(&mut self, other: Throughput) {
        self.ok += other.ok;
        self.errors += other.errors;
        self.secs += other.secs;
        let _ = self.hist.add(&other.hist);
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    pub fn rate(&self) -> f64 {
        if self.secs > 0.0 {
            self.ok as f64 / self.secs
        } else {
            0.0
        }
    }

    pub fn p50_ms(&self) -> f64 {
        quantile_ms(&self.hist, 0.50)
    }

    pub fn p99_ms(&self) -> f64 {
        quantile_ms(&self.hist, 0.99)
    }
}

pub fn quantile_ms(hist: &Histogram<u64>, q: f64) -> f64 {
    if hist.is_empty() {
        return f64::NAN;
    }
    hist.value_at_quantile(q) as f64 / 1000.0
}

pub fn fmt_ms(ms: f64) -> String {
    if ms.is_nan() {
        "–".into()
    } else if ms < 1.0 {
        format!("{ms:.2} ms")
    } else if ms < 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

pub fn fmt_rate(rate: f64, unit: &str) -> String {
    if rate.is_nan() {
        "–".into()
    } else if rate >= 100.0 {
        format!("{rate:.0} {unit}")
    } else {
        format!("{rate:.1} {unit}")
    }
}

pub fn fmt_kib(kib: f64) -> String {
    if kib >= 10_240.0 {
        format!("{:.0} MiB", kib / 1024.0)
    } else {
        format!("{kib:.1} KiB")
    }
}
