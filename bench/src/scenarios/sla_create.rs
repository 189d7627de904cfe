//! Scenario 12: `POST /tickets` while an SLA policy on business hours
//! matches every new ticket, against the same requests while the company
//! has no policy, in alternating slices of one run on one server (the
//! policy list is replaced between slices), in throughput and in p99.

use std::sync::Arc;

use hyper::Method;
use hyper::StatusCode;
use serde_json::{Value, json};

use super::rows::{ab_p99, ab_throughput};
use super::{Ctx, Measured, measure};
use crate::http::{Conn, Load, MakeRequest, Req};
use crate::process::Server;

impl Ctx {
    pub async fn sla_create(&mut self) -> anyhow::Result<()> {
        let scenario = "12 `POST /tickets` with a matching SLA policy vs without";
        let target = "≥ 80% of without";
        let scenario_p99 = "12 `POST /tickets` with a matching SLA policy, p99";
        let target_p99 = "≤ 1.25× without's p99";
        let server = self.start("s12-service", &self.service).await?;
        let result = self.sla_create_on(&server).await;
        server.stop().await;
        let (with, without) = result?;
        self.throughput_note("scenario 12 with a policy", &with);
        self.throughput_note("scenario 12 without a policy", &without);
        let off = "the same requests, no policy";
        let rows = [
            ab_throughput(scenario, target, 0.8, &with, &without, off),
            ab_p99(scenario_p99, target_p99, 1.25, &with, &without, "no policy"),
        ];
        self.rows.extend(rows);
        Ok(())
    }

    /// (with a policy, without), each the sum of its slices.
    async fn sla_create_on(&self, server: &Server) -> anyhow::Result<(Measured, Measured)> {
        let mut conn = Conn::open(0, server.addr).await?;
        let calendar = conn
            .json(
                &Req::post_json("/api/v1/settings/business-hours", &office()).key(self.key()),
                StatusCode::CREATED,
            )
            .await?;
        let policies = json!({"policies": [{
            "name": "Bench",
            "businessHoursId": calendar["id"],
            "targets": {"HIGH": {"firstResponseMinutes": 60, "nextResponseMinutes": 120,
                                 "resolutionMinutes": 960}},
        }]});
        let none = json!({"policies": []});
        let entity = self.seed.entity.clone();
        let key = self.key().to_string();
        let make: MakeRequest = Arc::new(move |seq| {
            Req::post_json("/api/v1/tickets", &super::ticket_body(&entity, seq)).key(&key)
        });
        let slices = self.slices.max(1);
        let slice = Load {
            conns: self.load.conns,
            warmup: self.load.warmup,
            duration: self.load.duration / slices,
        };
        let (mut with, mut without) = (Measured::empty(), Measured::empty());
        for _ in 0..slices {
            self.put_policies(&mut conn, &policies).await?;
            with.merge(measure(server, slice, StatusCode::CREATED, make.clone()).await?);
            self.put_policies(&mut conn, &none).await?;
            without.merge(measure(server, slice, StatusCode::CREATED, make.clone()).await?);
        }
        Ok((with, without))
    }

    async fn put_policies(&self, conn: &mut Conn, body: &Value) -> anyhow::Result<()> {
        let req = Req {
            method: Method::PUT,
            ..Req::post_json("/api/v1/settings/sla-policies", body).key(self.key())
        };
        conn.json(&req, StatusCode::OK).await?;
        Ok(())
    }
}

/// Weekdays 09:00–17:30 in Berlin with a lunch break: the calendar
/// arithmetic of a real desk, not the around-the-clock shortcut.
fn office() -> Value {
    let days = ["mon", "tue", "wed", "thu", "fri"];
    let weekly: Vec<Value> = days
        .iter()
        .flat_map(|day| {
            [
                json!({"day": day, "open": "09:00", "close": "12:30"}),
                json!({"day": day, "open": "13:30", "close": "17:30"}),
            ]
        })
        .collect();
    json!({"name": "Bench office", "timezone": "Europe/Berlin", "weekly": weekly,
           "holidays": ["2026-12-25", "2026-12-26", "2027-01-01"]})
}
