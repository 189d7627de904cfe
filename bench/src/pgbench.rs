//! The SQL baselines: pgbench running a script that mirrors the statements
//! the service runs, at the same concurrency, with per-transaction logs so
//! throughput and percentiles are computed exactly as for HTTP (warm-up
//! excluded).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::http::Load;
use crate::stats::{self, Throughput};

pub struct Pgbench<'a> {
    pub name: String,
    pub script: PathBuf,
    pub vars: Vec<(String, String)>,
    pub database_url: &'a str,
    pub load: Load,
    pub out_dir: &'a Path,
    /// Transactions per second (pgbench --rate); None: as fast as possible.
    pub rate: Option<f64>,
}

impl Pgbench<'_> {
    pub async fn run(&self) -> anyhow::Result<Throughput> {
        let log_dir = self.out_dir.join("pgbench");
        std::fs::create_dir_all(&log_dir)?;
        let prefix = log_dir.join(&self.name);
        for entry in std::fs::read_dir(&log_dir)? {
            let path = entry?.path();
            if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{}.", self.name)))
            {
                std::fs::remove_file(path)?;
            }
        }
        let total = self.load.warmup + self.load.duration;
        let mut command = tokio::process::Command::new("pgbench");
        command
            .arg("--no-vacuum")
            .arg("--protocol=prepared")
            .arg(format!("--client={}", self.load.conns))
            .arg(format!("--jobs={}", self.load.conns.min(2)))
            .arg(format!("--time={}", total.as_secs().max(1)))
            .arg(format!("--file={}", self.script.display()))
            .arg("--log")
            .arg(format!("--log-prefix={}", prefix.display()));
        if let Some(rate) = self.rate {
            command.arg(format!("--rate={rate}"));
        }
        for (name, value) in &self.vars {
            command.arg(format!("--define={name}={value}"));
        }
        command.arg(self.database_url);
        let output = command.output().await.context("running pgbench")?;
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        std::fs::write(
            log_dir.join(format!("{}.out", self.name)),
            format!("{stdout}\n{stderr}"),
        )?;
        anyhow::ensure!(
            output.status.success(),
            "pgbench {} failed: {}",
            self.name,
            stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        );
        let failed = stdout
            .lines()
            .find(|l| l.starts_with("number of failed transactions"))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        let mut result = parse_logs(&log_dir, &self.name, self.load.warmup, self.load.duration)?;
        result.errors += failed;
        if failed > 0 {
            result.first_error = stderr
                .lines()
                .find(|l| l.contains("ERROR"))
                .map(String::from);
        }
        Ok(result)
    }
}

/// Reads `<name>.<pid>[.<thread>]` logs: `client txno latency_us script epoch_s epoch_us`.
fn parse_logs(
    dir: &Path,
    name: &str,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Throughput> {
    let mut rows: Vec<(f64, u64)> = Vec::new(); // (start time s, latency µs)
    let mut failed = 0u64;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !file.starts_with(&format!("{name}.")) || file.ends_with(".out") {
            continue;
        }
        for line in std::fs::read_to_string(&path)?.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 {
                continue;
            }
            // A failed transaction logs "failed" (or "skipped") as latency.
            let Ok(latency) = f[2].parse::<u64>() else {
                failed += 1;
                continue;
            };
            let end_s: f64 = f[4].parse::<f64>()? + f[5].parse::<f64>()? / 1e6;
            rows.push((end_s - latency as f64 / 1e6, latency));
        }
    }
    anyhow::ensure!(!rows.is_empty(), "pgbench {name} logged no transaction");
    let first = rows.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let from = first + warmup.as_secs_f64();
    let to = from + duration.as_secs_f64();
    let mut hist = stats::histogram();
    let mut ok = 0;
    for (start, latency) in rows {
        if start >= from && start < to {
            ok += 1;
            stats::record(&mut hist, latency);
        }
    }
    Ok(Throughput {
        ok,
        errors: failed,
        secs: duration.as_secs_f64(),
        hist,
        first_error: None,
    })
}
