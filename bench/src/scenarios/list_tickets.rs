//! Scenario 2: `GET /tickets?status=OPEN&limit=20` against pgbench running
//! the same two queries, and its p99 at half the maximum rate.

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::RowBuilder;
use super::{Baseline, Ctx};
use crate::http::{self, MakeRequest, Req};
use crate::report::Row;
use crate::stats::fmt_ms;

impl Ctx {
    pub async fn list_tickets(&mut self) -> anyhow::Result<()> {
        let (scenario, target) = ("2 `GET /tickets?status=OPEN&limit=20`", "≥ 35% of pgbench");
        let (scenario_p99, target_p99) = ("2 `GET /tickets` p99", "p99 ≤ 15 ms");
        if self.seed.tickets.is_none() {
            self.rows.push(Row::not_run(
                scenario,
                target,
                "no tickets table (tickets area not merged)",
            ));
            self.rows
                .push(Row::not_run(scenario_p99, target_p99, "as above"));
            return Ok(());
        }
        let server = self.start("s2-service", &self.service).await?;
        let path = "/api/v1/tickets?status=OPEN&limit=20";
        let (status, body) = self.probe(&server, Req::get(path).key(self.key())).await?;
        if status != StatusCode::OK {
            server.stop().await;
            let reason = format!("GET /tickets answered {status}");
            self.rows.push(Row::not_run(scenario, target, &reason));
            self.rows
                .push(Row::not_run(scenario_p99, target_p99, &reason));
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
        self.throughput_note("scenario 2 service", &m);
        self.note(format!(
            "scenario 2 at half load ({half:.0} req/s, open loop over {} connections): {} ok, {} errors, p50 {} / p99 {}",
            self.load.conns,
            at_half.ok,
            at_half.errors,
            fmt_ms(at_half.p50_ms()),
            fmt_ms(at_half.p99_ms())
        ));
        self.pg_note("scenario 2 pgbench", &pg);
        self.rows.push(
            RowBuilder::throughput(scenario, &m, &pg, "tx/s", "pgbench, same 2 queries")
                .goal(target, 0.35)
                .build(),
        );
        self.rows.push(
            RowBuilder::new(format!(
                "{scenario_p99} at half the max rate ({half:.0} req/s, open loop)"
            ))
            .service(fmt_ms(at_half.p99_ms()))
            .met_if(target_p99, at_half.p99_ms() <= 15.0 && at_half.errors == 0)
            .latency(format!(
                "{} / {}; at saturation ({} connections): {} / {}",
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
