//! Scenario 17: `POST /tickets` while the company has 50 active triggers
//! on `ticket.created` (each with a condition read on every new ticket,
//! one of them matching and tagging it), against the same requests while
//! the 50 are turned off, in alternating slices of one run on one server.
//! The trigger pass runs every second (`SUPPORTDESK_RULES_INTERVAL_SECS=1`)
//! so its work on the new tickets overlaps the load, as it would on a busy
//! desk. In throughput and in p99.

use std::sync::Arc;

use hyper::Method;
use hyper::StatusCode;
use serde_json::{Value, json};

use super::rows::{ab_p99, ab_throughput};
use super::{Ctx, Measured, measure};
use crate::http::{Conn, Load, MakeRequest, Req};
use crate::process::Server;

/// Triggers per company.
const TRIGGERS: usize = 50;

impl Ctx {
    pub async fn automations_create(&mut self) -> anyhow::Result<()> {
        let scenario = "17 `POST /tickets` with 50 active triggers vs none";
        let target = "≥ 80% of without";
        let scenario_p99 = "17 `POST /tickets` with 50 active triggers, p99";
        let target_p99 = "≤ 1.25× without's p99";
        let env = [("SUPPORTDESK_RULES_INTERVAL_SECS", "1".to_string())];
        let logs = self.out_dir.join("logs");
        let server = Server::service_with_env("s17-service", &self.service, &env, &logs).await?;
        let result = self.automations_create_on(&server).await;
        server.stop().await;
        let (with, without) = result?;
        self.throughput_note("scenario 17 with 50 triggers", &with);
        self.throughput_note("scenario 17 without triggers", &without);
        let off = "the same requests, the triggers off";
        let rows = [
            ab_throughput(scenario, target, 0.8, &with, &without, off),
            ab_p99(
                scenario_p99,
                target_p99,
                1.25,
                &with,
                &without,
                "triggers off",
            ),
        ];
        self.rows.extend(rows);
        Ok(())
    }

    /// (with the triggers on, with them off), each the sum of its slices.
    async fn automations_create_on(&self, server: &Server) -> anyhow::Result<(Measured, Measured)> {
        let mut conn = Conn::open(0, server.addr).await?;
        let mut ids = Vec::with_capacity(TRIGGERS);
        for i in 0..TRIGGERS {
            let created = conn
                .json(
                    &Req::post_json("/api/v1/automations", &trigger(i)).key(self.key()),
                    StatusCode::CREATED,
                )
                .await?;
            let id = created["id"]
                .as_str()
                .ok_or_else(|| anyhow::anyhow!("an automation without an id: {created}"))?;
            ids.push(id.to_string());
        }
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
            self.turn_triggers(&mut conn, &ids, true).await?;
            with.merge(measure(server, slice, StatusCode::CREATED, make.clone()).await?);
            self.turn_triggers(&mut conn, &ids, false).await?;
            without.merge(measure(server, slice, StatusCode::CREATED, make.clone()).await?);
        }
        Ok((with, without))
    }

    async fn turn_triggers(&self, conn: &mut Conn, ids: &[String], on: bool) -> anyhow::Result<()> {
        for id in ids {
            let req = Req {
                method: Method::PATCH,
                ..Req::post_json(format!("/api/v1/automations/{id}"), &json!({"enabled": on}))
                    .key(self.key())
            };
            conn.json(&req, StatusCode::OK).await?;
        }
        Ok(())
    }
}

/// Trigger `i` of the company: on a new ticket, a condition on its subject
/// and priority; the last one matches every bench ticket and tags it.
fn trigger(i: usize) -> Value {
    let word = match i + 1 == TRIGGERS {
        true => "cannot log in".to_string(),
        false => format!("refund request {i}"),
    };
    json!({"name": format!("Bench trigger {i}"), "kind": "trigger",
           "events": ["ticket.created"],
           "conditions": {"all": [
               {"field": "subject", "operator": "contains", "value": word},
               {"field": "priority", "operator": "is", "value": "HIGH"},
           ]},
           "actions": [{"type": "add_tags", "value": [format!("bench-{i}")]}]})
}
