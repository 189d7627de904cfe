//! `--runs N`: every scenario runs N times and each of its rows becomes the
//! median run's row, with the min–max range of the N runs beside each figure.
//!
//! The rows are merged from their formatted cells, so every scenario gets it
//! without knowing about runs: a cell whose text starts with a number ("312
//! req/s (pgbench)", "1.32×", "64%") gets the range after that number and its
//! unit. The median run is picked by the ratio (by the service's figure when
//! a row has no ratio), so the figures, latencies and verdict on a row all
//! come from one run; for an even N it is the lower of the two middle runs.

use crate::report::{Row, Verdict};

/// One row per scenario label, in the order the first run wrote them.
pub fn merge(runs: &[Vec<Row>]) -> Vec<Row> {
    let mut labels: Vec<&str> = Vec::new();
    for row in runs.iter().flatten() {
        if !labels.contains(&row.scenario.as_str()) {
            labels.push(&row.scenario);
        }
    }
    labels
        .into_iter()
        .filter_map(|label| {
            let rows: Vec<&Row> = runs
                .iter()
                .flatten()
                .filter(|r| r.scenario == label)
                .collect();
            median_row(&rows)
        })
        .collect()
}

fn median_row(rows: &[&Row]) -> Option<Row> {
    let measured: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.verdict != Verdict::NotRun && sort_key(r).is_some())
        .collect();
    if measured.len() < 2 {
        return measured.first().or(rows.first()).map(|r| (*r).clone());
    }
    let mut sorted = measured.clone();
    sorted.sort_by(|a, b| sort_key(a).partial_cmp(&sort_key(b)).expect("finite keys"));
    let mut row = sorted[(sorted.len() - 1) / 2].clone();
    let runs = |cell: fn(&Row) -> &String| -> Vec<&str> {
        measured.iter().map(|r| cell(r).as_str()).collect()
    };
    row.service = with_range(&row.service, &runs(|r| &r.service));
    row.baseline = with_range(&row.baseline, &runs(|r| &r.baseline));
    row.ratio = with_range(&row.ratio, &runs(|r| &r.ratio));
    Some(row)
}

fn sort_key(row: &Row) -> Option<f64> {
    lead(&row.ratio)
        .or_else(|| lead(&row.service))
        .map(|l| l.value)
        .filter(|v| v.is_finite())
}

/// The number a cell starts with and the unit right after it.
struct Lead<'a> {
    value: f64,
    decimals: usize,
    /// Up to the end of the number and its unit.
    end: usize,
    unit: &'a str,
}

fn lead(cell: &str) -> Option<Lead<'_>> {
    let digits = cell
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(cell.len());
    let value: f64 = cell[..digits].parse().ok()?;
    let decimals = cell[..digits].split_once('.').map_or(0, |(_, d)| d.len());
    let rest = &cell[digits..];
    // The unit: "%" or "×" stuck to the number, or one word after a space
    // ("req/s", "ms", "KiB"), never an opening bracket.
    let unit_len = if rest.starts_with(['%', '×']) {
        rest.chars().next().map_or(0, char::len_utf8)
    } else if let Some(word) = rest.strip_prefix(' ') {
        let word_len = word.find(' ').unwrap_or(word.len());
        if word.starts_with('(') || word_len == 0 {
            0
        } else {
            1 + word_len
        }
    } else {
        0
    };
    Some(Lead {
        value,
        decimals,
        end: digits + unit_len,
        unit: rest[..unit_len].trim(),
    })
}

/// `cell` with " [min–max]" after its leading figure, when every run's cell
/// has a figure in the same unit; `cell` unchanged otherwise.
fn with_range(cell: &str, runs: &[&str]) -> String {
    let Some(head) = lead(cell) else {
        return cell.to_string();
    };
    let mut values = Vec::with_capacity(runs.len());
    for run in runs {
        match lead(run) {
            Some(l) if l.unit == head.unit => values.push(l.value),
            _ => return cell.to_string(),
        }
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let d = head.decimals;
    format!(
        "{} [{min:.d$}–{max:.d$}]{}",
        &cell[..head.end],
        &cell[head.end..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(service: &str, ratio: &str) -> Row {
        Row {
            service: service.into(),
            ratio: ratio.into(),
            baseline: "1000 req/s (/healthz)".into(),
            verdict: Verdict::Met,
            ..Row::not_run("3 cheap GET", "≥ 50%", "")
        }
    }

    #[test]
    fn the_row_is_the_median_run_with_the_range_of_every_run() {
        let runs = vec![
            vec![row("600 req/s", "60%")],
            vec![row("400 req/s", "40%")],
            vec![row("500 req/s", "50%")],
        ];
        let merged = merge(&runs);
        assert_eq!(merged[0].service, "500 req/s [400–600]");
        assert_eq!(merged[0].ratio, "50% [40–60]");
    }

    #[test]
    fn the_range_goes_after_the_unit_and_before_the_bracketed_label() {
        assert_eq!(
            with_range("1.5 ms (bare)", &["1.5 ms (bare)", "2.3 ms (bare)"]),
            "1.5 ms [1.5–2.3] (bare)"
        );
    }

    #[test]
    fn cells_in_different_units_keep_no_range() {
        assert_eq!(
            with_range("9.5 KiB", &["9.5 KiB", "11 MiB"]),
            "9.5 KiB".to_string()
        );
    }

    #[test]
    fn a_failed_run_is_left_out_of_the_median() {
        let runs = vec![
            vec![row("600 req/s", "60%")],
            vec![Row::not_run("3 cheap GET", "≥ 50%", "failed")],
            vec![row("400 req/s", "40%")],
        ];
        assert_eq!(merge(&runs)[0].service, "400 req/s [400–600]");
    }

    #[test]
    fn a_single_run_is_left_as_it_was() {
        let merged = merge(&[vec![row("600 req/s", "60%")]]);
        assert_eq!(merged[0].service, "600 req/s");
    }
}
