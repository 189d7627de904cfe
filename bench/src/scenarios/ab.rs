//! `--ab-bin`: scenarios 3 and 5 compare two builds of the service (A =
//! `--service-bin`, B = `--ab-bin`, e.g. with another allocator) instead of
//! the baselines. Scenario 3's requests alternate between the two running
//! binaries slice by slice; scenario 5 runs its fan-out on A, then on B.
//! Rows show B in the service column and A as the baseline.

use std::sync::Arc;

use anyhow::Context;
use hyper::StatusCode;

use super::rows::{RowBuilder, ratio};
use super::{Ctx, Measured, measure};
use crate::http::{Load, MakeRequest, Req};
use crate::process::{Server, ServiceConfig};
use crate::stats::{fmt_kib, fmt_ms, fmt_rate};

impl Ctx {
    fn ab_configs(&self) -> anyhow::Result<(ServiceConfig, ServiceConfig)> {
        let b = self.ab_bin.clone().context("no --ab-bin")?;
        let a = self.service.clone();
        Ok((a.clone(), ServiceConfig { bin: b, ..a }))
    }

    /// Scenario 3's two cheap requests, with the in-process limiter (where
    /// the service's own CPU, allocation included, is the bulk of the cost)
    /// and then with the Redis limiter.
    pub(super) async fn ab_cheap_get(&mut self) -> anyhow::Result<()> {
        let (a, b) = self.ab_configs()?;
        let limiters = [
            ("in-process limiter", None),
            ("Redis limiter", self.service.redis_url.clone()),
        ];
        for (limiter, redis_url) in limiters {
            let a = ServiceConfig {
                redis_url: redis_url.clone(),
                ..a.clone()
            };
            let b = ServiceConfig {
                redis_url,
                ..b.clone()
            };
            let server_a = self.start("s3-a", &a).await?;
            let server_b = match self.start("s3-b", &b).await {
                Ok(server) => server,
                Err(e) => {
                    server_a.stop().await;
                    return Err(e);
                }
            };
            let result = self.ab_requests(&server_a, &server_b, limiter).await;
            server_a.stop().await;
            server_b.stop().await;
            result?;
        }
        Ok(())
    }

    async fn ab_requests(&mut self, a: &Server, b: &Server, limiter: &str) -> anyhow::Result<()> {
        let key = self.key().to_string();
        let path = format!("/api/v1/entities/{}", self.seed.entity);
        let entity: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
        let key = self.key().to_string();
        let unrouted: MakeRequest = Arc::new(move |_| Req::get("/api/v1/bench-unrouted").key(&key));
        let requests = [
            ("`GET /api/v1/entities/{id}`", entity, StatusCode::OK),
            (
                "auth + rate limit + tracing alone (unrouted, 404)",
                unrouted,
                StatusCode::NOT_FOUND,
            ),
        ];
        for (label, make, expect) in requests {
            let slices = self.slices.max(1);
            let slice = Load {
                conns: self.load.conns,
                warmup: self.load.warmup,
                duration: self.load.duration / slices,
            };
            let (mut on_a, mut on_b) = (Measured::empty(), Measured::empty());
            for _ in 0..slices {
                on_a.merge(measure(a, slice, expect, make.clone()).await?);
                on_b.merge(measure(b, slice, expect, make.clone()).await?);
            }
            self.throughput_note(&format!("scenario 3 A/B {label}, {limiter}, A"), &on_a);
            self.throughput_note(&format!("scenario 3 A/B {label}, {limiter}, B"), &on_b);
            self.rows.push(
                RowBuilder::throughput(
                    format!("3 A/B {label}, {limiter}: B (service) vs A (baseline)"),
                    &on_b,
                    &on_a.t,
                    "req/s",
                    "A",
                )
                .latency(format!(
                    "CPU {:.1} µs/request ({:.1}); p99 {} ({})",
                    on_b.cpu_us_per_op(),
                    on_a.cpu_us_per_op(),
                    fmt_ms(on_b.t.p99_ms()),
                    fmt_ms(on_a.t.p99_ms())
                ))
                .build(),
            );
        }
        Ok(())
    }

    /// Scenario 5's fan-out on A, then on B.
    pub(super) async fn ab_websocket(&mut self) -> anyhow::Result<()> {
        let (a, b) = self.ab_configs()?;
        let on_a = self.service_fanout("s5-a", &a).await?;
        let on_b = self.service_fanout("s5-b", &b).await?;
        let n = self.sockets;
        self.note(format!(
            "scenario 5 A/B: connected {} (A) and {} (B) of {n}; burst deliveries {} and {} of {}; peak RSS {} and {}",
            on_a.connected,
            on_b.connected,
            on_a.burst_received,
            on_b.burst_received,
            on_a.burst_expected,
            fmt_kib(on_a.peak_rss_kib as f64),
            fmt_kib(on_b.peak_rss_kib as f64),
        ));
        self.rows.push(
            RowBuilder::new(format!(
                "5 A/B idle memory per socket ({n} sockets): B vs A"
            ))
            .service(fmt_kib(on_b.kib_per_socket))
            .baseline(format!("{} (A)", fmt_kib(on_a.kib_per_socket)))
            .ratio_times(ratio(on_b.kib_per_socket, on_a.kib_per_socket))
            .rss_kib(on_b.peak_rss_kib)
            .build(),
        );
        self.rows.push(
            RowBuilder::new(format!("5 A/B fan-out to {n} subscribers, p99: B vs A"))
                .service(fmt_ms(on_b.p99_ms))
                .baseline(format!("{} (A)", fmt_ms(on_a.p99_ms)))
                .ratio_times(ratio(on_b.p99_ms, on_a.p99_ms))
                .latency(format!(
                    "all received after {} ({})",
                    fmt_ms(on_b.all_received_ms),
                    fmt_ms(on_a.all_received_ms)
                ))
                .rss_kib(on_b.peak_rss_kib)
                .build(),
        );
        self.rows.push(
            RowBuilder::new(format!(
                "5 A/B burst fan-out to {n} subscribers, deliveries/s: B vs A"
            ))
            .service(fmt_rate(on_b.burst_rate, "/s"))
            .baseline(format!("{} (A)", fmt_rate(on_a.burst_rate, "/s")))
            .ratio_pct(ratio(on_b.burst_rate, on_a.burst_rate))
            .latency(format!(
                "p50 / p99 {} / {} ({} / {})",
                fmt_ms(on_b.burst_p50_ms),
                fmt_ms(on_b.burst_p99_ms),
                fmt_ms(on_a.burst_p50_ms),
                fmt_ms(on_a.burst_p99_ms)
            ))
            .rss_kib(on_b.peak_rss_kib)
            .build(),
        );
        Ok(())
    }
}
