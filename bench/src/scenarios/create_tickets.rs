//! Scenario 1: `POST /tickets` against pgbench running the same statements
//! in the same round trips and transactions, in throughput and in p99; and
//! in throughput against pgbench inserting the ticket row alone, numbered by
//! a plain sequence.

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::{RowBuilder, ratio};
use super::{Baseline, Ctx, Measured};
use crate::http::{MakeRequest, Req};
use crate::report::Row;
use crate::stats::fmt_ms;

impl Ctx {
    pub async fn create_tickets(&mut self) -> anyhow::Result<()> {
        let (scenario, target) = ("1 `POST /tickets`", "≥ 50% of pgbench");
        let (scenario_p99, target_p99) = ("1 `POST /tickets` p99", "≤ 8× pgbench's p99");
        let (scenario_sequence, target_sequence) = (
            "1 `POST /tickets` vs the ticket row alone",
            "≥ 40% of pgbench",
        );
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
            self.rows
                .push(Row::not_run(scenario_sequence, target_sequence, "as above"));
            return Ok(());
        }
        let key = self.key().to_string();
        let make: MakeRequest =
            Arc::new(move |seq| Req::post_json("/api/v1/tickets", &body(seq + 1)).key(&key));
        let baselines = vec![
            Baseline::Pgbench {
                name: "tickets_create",
                script: "pgbench_tickets_create.sql",
                vars: self.tenant_vars(),
            },
            Baseline::Pgbench {
                name: "tickets_create_sequence",
                script: "pgbench_tickets_create_sequence.sql",
                vars: self.tenant_vars(),
            },
        ];
        let (m, bases) = self
            .compare_each(&server, StatusCode::CREATED, make, baselines)
            .await?;
        server.stop().await;
        let [pg, sequence]: [Measured; 2] = bases
            .try_into()
            .map_err(|_| anyhow::anyhow!("scenario 1 ran two baselines"))?;
        let (pg, sequence) = (pg.t, sequence.t);
        self.throughput_note("scenario 1 service", &m);
        self.pg_note("scenario 1 pgbench", &pg);
        self.pg_note("scenario 1 pgbench, plain sequence", &sequence);
        self.rows.push(
            RowBuilder::throughput(
                scenario,
                &m,
                &pg,
                "tx/s",
                "pgbench, same statements and round trips",
            )
            .goal(target, 0.5)
            .build(),
        );
        self.rows.push(
            RowBuilder::throughput(
                scenario_sequence,
                &m,
                &sequence,
                "tx/s",
                "pgbench, the ticket row numbered by a plain sequence",
            )
            .goal(target_sequence, 0.4)
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
