//! The soak's PNG: six panels of the sampled series over the run's time,
//! drawn without any text (no font is needed; SOAK.md carries the legend).
//! Panels, left to right, top to bottom: RSS, open descriptors, Postgres
//! total size, Redis used memory, outbox pending jobs, errors so far. A grey
//! vertical line marks the baseline; red lines the ±10% band of RSS and
//! descriptors.

use std::path::Path;
use std::time::Duration;

use plotters::prelude::*;

use super::sample::Sample;

const MIB: f64 = 1024.0 * 1024.0;

struct Panel {
    values: Vec<(f64, f64)>,
    /// The baseline value whose ±10% band is drawn.
    band_around: Option<f64>,
}

pub fn draw(samples: &[Sample], baseline: Duration, path: &Path) -> anyhow::Result<()> {
    let base = samples
        .iter()
        .find(|s| s.secs >= baseline.as_secs_f64())
        .or(samples.last());
    let series = |f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> {
        samples.iter().map(|s| (s.secs, f(s))).collect()
    };
    let panels = [
        Panel {
            values: series(&|s| s.rss_kib as f64 / 1024.0),
            band_around: base.map(|b| b.rss_kib as f64 / 1024.0),
        },
        Panel {
            values: series(&|s| s.fds as f64),
            band_around: base.map(|b| b.fds as f64),
        },
        Panel {
            values: series(&|s| s.db_bytes() as f64 / MIB),
            band_around: None,
        },
        Panel {
            values: series(&|s| s.redis_used_bytes as f64 / MIB),
            band_around: None,
        },
        Panel {
            values: series(&|s| s.outbox_pending as f64),
            band_around: None,
        },
        Panel {
            values: series(&|s| s.errors as f64),
            band_around: None,
        },
    ];
    let x_max = samples.last().map_or(1.0, |s| s.secs).max(1.0);
    let root = BitMapBackend::new(path, (1200, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    for (area, panel) in root.split_evenly((3, 2)).iter().zip(&panels) {
        let area = area.margin(12, 12, 12, 12);
        let top = panel
            .values
            .iter()
            .map(|(_, v)| *v)
            .chain(panel.band_around.map(|b| b * 1.1))
            .fold(0.0, f64::max);
        let y_max = if top > 0.0 { top * 1.15 } else { 1.0 };
        let mut chart = ChartBuilder::on(&area)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(plot_error)?;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, 0.0), (x_max, y_max)],
                BLACK.stroke_width(1),
            )))
            .map_err(plot_error)?;
        let at = baseline.as_secs_f64();
        chart
            .draw_series(LineSeries::new(
                [(at, 0.0), (at, y_max)],
                RGBColor(160, 160, 160),
            ))
            .map_err(plot_error)?;
        if let Some(b) = panel.band_around {
            for edge in [b * 0.9, b * 1.1] {
                chart
                    .draw_series(LineSeries::new([(at, edge), (x_max, edge)], RED))
                    .map_err(plot_error)?;
            }
        }
        chart
            .draw_series(LineSeries::new(
                panel.values.iter().copied(),
                BLUE.stroke_width(2),
            ))
            .map_err(plot_error)?;
    }
    root.present().map_err(plot_error)?;
    Ok(())
}

fn plot_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("drawing the plot: {e}")
}
