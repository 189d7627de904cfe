//! Scenario 12: what recording Prometheus metrics costs the hot path. The
//! cheap authenticated GET of scenario 3 against two services on the same
//! database, one with `SUPPORTDESK_METRICS_BIND` set (metrics on) and one
//! without, in alternating slices so drift on this shared machine hits both
//! alike. Target: metrics on keeps at least 97% of the throughput.

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::ab_throughput;
use super::{Ctx, Measured, measure};
use crate::http::{Load, MakeRequest, Req};
use crate::process::ServiceConfig;

impl Ctx {
    pub async fn metrics_overhead(&mut self) -> anyhow::Result<()> {
        let off = self.start("s12-metrics-off", &self.service).await?;
        let with_metrics = ServiceConfig {
            metrics: true,
            ..self.service.clone()
        };
        let on = self.start("s12-metrics-on", &with_metrics).await?;
        let path = format!("/api/v1/entities/{}", self.seed.entity);
        let key = self.key().to_string();
        let get: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
        let slices = self.slices.max(1);
        let slice = Load {
            conns: self.load.conns,
            warmup: self.load.warmup,
            duration: self.load.duration / slices,
        };
        let (mut with, mut without) = (Measured::empty(), Measured::empty());
        for _ in 0..slices {
            with.merge(measure(&on, slice, StatusCode::OK, get.clone()).await?);
            without.merge(measure(&off, slice, StatusCode::OK, get.clone()).await?);
        }
        on.stop().await;
        off.stop().await;
        self.throughput_note("scenario 14 GET /entities/{id}, metrics on", &with);
        self.throughput_note("scenario 14 GET /entities/{id}, metrics off", &without);
        self.rows.push(ab_throughput(
            "14 `GET /api/v1/entities/{id}` with metrics on (`SUPPORTDESK_METRICS_BIND`) vs off",
            "≥ 97% of metrics off",
            0.97,
            &with,
            &without,
            "metrics off",
        ));
        Ok(())
    }
}
