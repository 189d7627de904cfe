//! Scenario 1: `POST /tickets` against pgbench running the same statements
//! in one transaction, in throughput and in p99.

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::{RowBuilder, ratio};
use super::{Baseline, Ctx};
use crate::http::{MakeRequest, Req};
use crate::report::Row;
use crate::stats::fmt_ms;

impl Ctx {
    pub async fn create_tickets(&mut self) -> anyhow::Result<()> {
        let (scenario, target) = ("1 `POST /tickets`", "≥ 50% of pgbench");
        let (scenario_p99, target_p99) = ("1 `POST /tickets` p99", "≤ 8× pgbench's p99");
        let server = self.start("s1-service", &self.service).await?;
        let entity = self.seed.entity.clone();
        let body = move |seq: u64| super::ticket_body(&entity, seq);
        let (status, text) = self
            .probe(
                &server,
                Req::post_json("/api/v1/tickets", &body(0)).key(self.key()),
            )
            .await?;
        if status != StatusCode::CREATED {
            server.stop().await;
            let reason = format!(
                "POST /tickets answered {status}: {}",
                text.chars().take(120).collect::<String>()
            );
            self.rows.push(Row::not_run(scenario, target, &reason));
            self.rows
                .push(Row::not_run(scenario_p99, target_p99, "as above"));
            return Ok(());
        }
        let key = self.key().to_string();
        let make: MakeRequest =
            Arc::new(move |seq| Req::post_json("/api/v1/tickets", &body(seq + 1)).key(&key));
        let baseline = Baseline::Pgbench {
            name: "tickets_create",
            script: "pgbench_tickets_create.sql",
            vars: self.tenant_vars(),
        };
        let (m, pg) = self
            .compare(&server, StatusCode::CREATED, make, baseline)
            .await?;
        let pg = pg.t;
        server.stop().await;
        self.throughput_note("scenario 1 service", &m);
        self.pg_note("scenario 1 pgbench", &pg);
        self.rows.push(
            RowBuilder::throughput(
                scenario,
                &m,
                &pg,
                "tx/s",
                "pgbench, same statements, one tx",
            )
            .goal(target, 0.5)
            .build(),
        );
        let r99 = ratio(m.t.p99_ms(), pg.p99_ms());
        self.rows.push(
            RowBuilder::new(scenario_p99)
                .service(fmt_ms(m.t.p99_ms()))
                .baseline(fmt_ms(pg.p99_ms()))
                .ratio_times(r99)
                .met_if(target_p99, r99 <= 8.0)
                .latency_pair(&m.t, Some(&pg))
                .rss_kib(m.peak_rss_kib)
                .build(),
        );
        Ok(())
    }
}
