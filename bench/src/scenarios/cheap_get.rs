//! Scenario 3: an authenticated cheap GET, and auth + rate limit + tracing
//! alone, against `/healthz`, with each limiter; and the GET against pgbench
//! on its one SELECT for context.

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::RowBuilder;
use super::{Baseline, Ctx, Measured};
use crate::http::{MakeRequest, Req};
use crate::process::ServiceConfig;
use crate::report::Row;

impl Ctx {
    pub async fn cheap_get(&mut self) -> anyhow::Result<()> {
        if self.ab_bin.is_some() {
            return self.ab_cheap_get().await;
        }
        // The GET against `/healthz` keeps the first round's targets; the
        // request that does no work has the second round's.
        let variants = [
            (
                "in-process limiter (no REDIS_URL)",
                None,
                (0.8, "≥ 80% of /healthz"),
                (0.85, "≥ 85% of /healthz"),
            ),
            (
                "Redis limiter",
                self.service.redis_url.clone(),
                (0.5, "≥ 50% of /healthz"),
                (0.65, "≥ 65% of /healthz"),
            ),
        ];
        for (label, redis_url, (goal, target), (unrouted_goal, unrouted_target)) in variants {
            let config = ServiceConfig {
                redis_url: redis_url.clone(),
                ..self.service.clone()
            };
            let server = self.start("s3-service", &config).await?;
            let path = format!("/api/v1/entities/{}", self.seed.entity);
            let (status, _) = self.probe(&server, Req::get(&path).key(self.key())).await?;
            let health: MakeRequest = Arc::new(|_| Req::get("/healthz"));
            let key = self.key().to_string();
            // (a) a cheap endpoint: auth, limiter, tracing, one indexed SELECT.
            let scenario = format!("3 `GET /api/v1/entities/{{id}}` vs `/healthz`, {label}");
            if status == StatusCode::OK {
                let auth: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
                let (m, h) = self
                    .compare(
                        &server,
                        StatusCode::OK,
                        auth,
                        Baseline::Http(health.clone(), StatusCode::OK),
                    )
                    .await?;
                self.throughput_note(&format!("scenario 3 ({label}) GET /entities/{{id}}"), &m);
                self.throughput_note(&format!("scenario 3 ({label}) /healthz"), &h);
                self.rows
                    .push(against_healthz(scenario, &m, &h).goal(target, goal).build());
            } else {
                self.rows.push(Row::not_run(
                    &scenario,
                    target,
                    &format!("{path} answered {status}"),
                ));
            }
            // (b) auth, limiter and tracing alone: a valid key on a path no
            // route serves (answered 404 JSON after the rate limit).
            let scenario = format!(
                "3 auth + rate limit + tracing alone (`GET /api/v1/bench-unrouted` with a key, 404) vs `/healthz`, {label}"
            );
            let key = self.key().to_string();
            let unrouted: MakeRequest =
                Arc::new(move |_| Req::get("/api/v1/bench-unrouted").key(&key));
            let (m, h) = self
                .compare(
                    &server,
                    StatusCode::NOT_FOUND,
                    unrouted,
                    Baseline::Http(health, StatusCode::OK),
                )
                .await?;
            server.stop().await;
            self.throughput_note(&format!("scenario 3 ({label}) unrouted 404 with a key"), &m);
            self.rows.push(
                against_healthz(scenario, &m, &h)
                    .goal(unrouted_target, unrouted_goal)
                    .build(),
            );
        }
        // (c) the database's share of (a): pgbench on its one SELECT.
        let server = self.start("s3-service", &self.service).await?;
        let path = format!("/api/v1/entities/{}", self.seed.entity);
        let key = self.key().to_string();
        let auth: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
        let baseline = Baseline::Pgbench {
            name: "entity_get",
            script: "pgbench_entity_get.sql",
            vars: self.tenant_vars(),
        };
        let (m, pg) = self
            .compare(&server, StatusCode::OK, auth, baseline)
            .await?;
        server.stop().await;
        self.pg_note("scenario 3 pgbench (the entity SELECT)", &pg.t);
        self.rows.push(
            RowBuilder::throughput(
                "3 `GET /api/v1/entities/{id}` vs pgbench on its one SELECT (Redis limiter)",
                &m,
                &pg.t,
                "tx/s",
                "pgbench",
            )
            .goal("≥ 40% of pgbench", 0.4)
            .build(),
        );
        Ok(())
    }
}

/// A request against `/healthz` on the same server; the RSS is the peak of
/// both runs (they share the process).
fn against_healthz(scenario: String, m: &Measured, healthz: &Measured) -> RowBuilder {
    RowBuilder::throughput(scenario, m, &healthz.t, "req/s", "/healthz")
        .rss_kib(m.peak_rss_kib.max(healthz.peak_rss_kib))
}
