//! Scenario 2: `GET /tickets?status=OPEN&limit=20` against pgbench running
//! the same statement, and its p99 at half the maximum rate. The
//! comparison and its two rows are shared with scenario 9 (the same list
//! with tag and custom field filters).

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::RowBuilder;
use super::{Baseline, Ctx};
use crate::http::{self, MakeRequest, Req};
use crate::process::Server;
use crate::report::Row;
use crate::stats::fmt_ms;

/// The names a list scenario reports under.
pub(super) struct ListLabels {
    /// Its number, prefixing the notes ("scenario 2 …").
    pub number: u32,
    /// The throughput row's scenario cell.
    pub scenario: &'static str,
    /// The latency row's scenario cell (the half rate is appended).
    pub scenario_p99: &'static str,
    /// What the pgbench baseline runs, in the baseline cell's brackets.
    pub baseline: &'static str,
    /// The throughput row's target and the ratio that meets it.
    pub target: (&'static str, f64),
}

const TARGET_P99: &str = "p99 ≤ 15 ms";

impl Ctx {
    pub async fn list_tickets(&mut self) -> anyhow::Result<()> {
        let labels = ListLabels {
            number: 2,
            scenario: "2 `GET /tickets?status=OPEN&limit=20`",
            scenario_p99: "2 `GET /tickets` p99",
            baseline: "pgbench, same statement",
            target: ("≥ 60% of pgbench", 0.6),
        };
        if self.seed.tickets.is_none() {
            self.list_not_run(&labels, "no tickets table (tickets area not merged)");
            return Ok(());
        }
        let server = self.start("s2-service", &self.service).await?;
        let path = "/api/v1/tickets?status=OPEN&limit=20";
        let (status, body) = self.probe(&server, Req::get(path).key(self.key())).await?;
        if status != StatusCode::OK {
            server.stop().await;
            self.list_not_run(&labels, &format!("GET /tickets answered {status}"));
            return Ok(());
        }
        let page: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        self.note(format!(
            "scenario 2: the benchmark company has {} OPEN tickets (the page's total); page of {}",
            page["total"],
            page["data"].as_array().map_or(0, |a| a.len())
        ));
        let key = self.key().to_string();
        let make: MakeRequest = Arc::new(move |_| Req::get(path).key(&key));
        let mut vars = self.tenant_vars();
        vars.push(("status".into(), "OPEN".into()));
        let baseline = Baseline::Pgbench {
            name: "tickets_list",
            script: "pgbench_tickets_list.sql",
            vars,
        };
        self.compare_list(server, &labels, make, baseline).await
    }

    /// The two rows of a list scenario that could not run, saying why.
    pub(super) fn list_not_run(&mut self, labels: &ListLabels, reason: &str) {
        self.rows
            .push(Row::not_run(labels.scenario, labels.target.0, reason));
        self.rows
            .push(Row::not_run(labels.scenario_p99, TARGET_P99, "as above"));
    }

    /// Runs a list request against its pgbench baseline (throughput, the
    /// target ≥ 35%), then alone at half the service's maximum rate (the p99
    /// target), stops the server and adds the two rows.
    pub(super) async fn compare_list(
        &mut self,
        server: Server,
        labels: &ListLabels,
        make: MakeRequest,
        baseline: Baseline,
    ) -> anyhow::Result<()> {
        let n = labels.number;
        let (m, pg) = self
            .compare(&server, StatusCode::OK, make.clone(), baseline)
            .await?;
        let pg = pg.t;
        // The latency target is read at half the measured maximum rate (an
        // open-loop load): at saturation, latency is just connections / throughput.
        let half = (m.t.rate() / 2.0).max(1.0);
        let at_half = http::run_rate(
            server.addr,
            self.load_for_latency(),
            half,
            StatusCode::OK,
            make,
        )
        .await?;
        server.stop().await;
        self.throughput_note(&format!("scenario {n} service"), &m);
        self.note(format!(
            "scenario {n} at half load ({half:.0} req/s, open loop over {} connections): {} ok, {} errors, p50 {} / p99 {}",
            self.load.conns,
            at_half.ok,
            at_half.errors,
            fmt_ms(at_half.p50_ms()),
            fmt_ms(at_half.p99_ms())
        ));
        self.pg_note(&format!("scenario {n} pgbench"), &pg);
        self.rows.push(
            RowBuilder::throughput(labels.scenario, &m, &pg, "tx/s", labels.baseline)
                .goal(labels.target.0, labels.target.1)
                .build(),
        );
        self.rows.push(
            // The rate stays out of the label, so that `--runs` merges the
            // runs' rows into one.
            RowBuilder::new(format!(
                "{} at half the max rate (open loop)",
                labels.scenario_p99
            ))
            .service(fmt_ms(at_half.p99_ms()))
            .met_if(TARGET_P99, at_half.p99_ms() <= 15.0 && at_half.errors == 0)
            .latency(format!(
                "at {half:.0} req/s: {} / {}; at saturation ({} connections): {} / {}",
                fmt_ms(at_half.p50_ms()),
                fmt_ms(at_half.p99_ms()),
                self.load.conns,
                fmt_ms(m.t.p50_ms()),
                fmt_ms(m.t.p99_ms())
            ))
            .rss_kib(m.peak_rss_kib)
            .build(),
        );
        Ok(())
    }
}
