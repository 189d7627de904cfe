//! The results table and RESULTS.md.

use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Met,
    Missed,
    /// The scenario could not run (reason in the row's notes).
    NotRun,
    /// A figure for context, without a target.
    Info,
}

impl Verdict {
    fn cell(&self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Missed => "**missed**",
            Verdict::NotRun => "not run",
            Verdict::Info => "–",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Row {
    pub scenario: String,
    pub service: String,
    pub baseline: String,
    pub ratio: String,
    pub target: String,
    pub verdict: Verdict,
    /// p50 / p99 of the service (and of the baseline).
    pub latency: String,
    pub rss: String,
}

impl Row {
    pub fn not_run(scenario: &str, target: &str, reason: &str) -> Row {
        Row {
            scenario: scenario.into(),
            service: format!("not run: {reason}"),
            baseline: "–".into(),
            ratio: "–".into(),
            target: target.into(),
            verdict: Verdict::NotRun,
            latency: "–".into(),
            rss: "–".into(),
        }
    }
}

pub fn verdict(ok: bool) -> Verdict {
    if ok { Verdict::Met } else { Verdict::Missed }
}

pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str(
        "| scenario | service | baseline | ratio | target | met? | p50 / p99 service (baseline) | peak RSS of the service |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.service,
            r.baseline,
            r.ratio,
            r.target,
            r.verdict.cell(),
            r.latency,
            r.rss
        );
    }
    out
}

pub struct Environment {
    pub date: String,
    pub machine: String,
    pub versions: String,
    pub commit: String,
    pub command: String,
    pub duration_secs: f64,
    pub settings: String,
}

pub fn document(env: &Environment, rows: &[Row], notes: &[String]) -> String {
    let mut out = String::new();
    out.push_str("# Benchmark results\n\n");
    let _ = writeln!(
        out,
        "Written by `{}` on {} (service commit {}, whole run {:.0} s).\n",
        env.command, env.date, env.commit, env.duration_secs
    );
    // The file holds this run only: earlier runs are its history in git,
    // and what the profiles show is kept apart, in FINDINGS.md.
    out.push_str(
        "Earlier runs are in git history (`git log -p bench/RESULTS.md`); \
         what the profiles show, what was tried and what is still open is in \
         bench/FINDINGS.md.\n\n",
    );
    let _ = writeln!(out, "- Machine: {}", env.machine);
    let _ = writeln!(out, "- Versions: {}", env.versions);
    let _ = writeln!(out, "- Settings: {}", env.settings);
    out.push_str(
        "- Client and server share the machine's cores: the load generator \
         (`bench/`, a separate process on loopback), the service, Postgres, \
         Redis and the baselines all run on the same CPUs, so absolute \
         figures are lower than on a dedicated server and drift between runs \
         by 20–50%; the ratios against the same-run baselines are the \
         figures to read.\n\n",
    );
    out.push_str(&table(rows));
    out.push_str("\nRatio is service / baseline (throughput) or service / baseline (latency, where the target is a latency multiple).\n");
    if !notes.is_empty() {
        out.push_str("\n## Notes from this run\n\n");
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text)?;
    Ok(())
}
