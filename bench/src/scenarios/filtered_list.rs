//! Scenario 9: the ticket list filtered by a tag, a custom field and the
//! status together, against pgbench running the same two statements (the
//! capped count, the page), and its p99 at half the maximum rate.

use std::sync::Arc;

use anyhow::Context;
use hyper::StatusCode;

use super::list_tickets::ListLabels;
use super::{Baseline, Ctx};
use crate::http::{MakeRequest, Req};

/// The filter values (bench/sql/seed_tickets.sql: `billing` is the most
/// common tag, `pro` the plan of 30% of the tickets).
const TAG: &str = "billing";
const PLAN: &str = "pro";

impl Ctx {
    pub async fn filtered_list(&mut self) -> anyhow::Result<()> {
        let labels = ListLabels {
            number: 9,
            scenario: "9 `GET /tickets?tag=billing&cf.plan=pro&status=OPEN&limit=20`",
            scenario_p99: "9 `GET /tickets?tag=…&cf.plan=…&status=OPEN` p99",
            baseline: "pgbench, same 2 queries",
            target: ("≥ 35% of pgbench", 0.35),
        };
        if self.seed.ticket_tags.is_none() || self.seed.field_values.is_none() {
            let reason = "no tags or custom fields seeded (areas not merged)";
            self.list_not_run(&labels, reason);
            return Ok(());
        }
        let server = self.start("s9-service", &self.service).await?;
        let query = format!("/api/v1/tickets?tag={TAG}&cf.plan={PLAN}&status=OPEN");
        let path = format!("{query}&limit=20");
        let (status, body) = self.probe(&server, Req::get(&path).key(self.key())).await?;
        if status != StatusCode::OK {
            server.stop().await;
            self.list_not_run(&labels, &format!("GET /tickets answered {status}"));
            return Ok(());
        }
        let page: serde_json::Value = serde_json::from_str(&body).context("the list's JSON")?;
        let rows = page["data"].as_array().map_or(0, Vec::len);
        self.note(format!(
            "scenario 9: {} OPEN tickets of the benchmark company carry the tag `{TAG}` and the plan `{PLAN}` (the page's total{}); page of {}",
            page["total"],
            if page["totalIsLowerBound"] == true { ", a lower bound" } else { "" },
            rows
        ));
        if rows == 0 {
            server.stop().await;
            self.list_not_run(&labels, "no ticket matches the filter (seed?)");
            return Ok(());
        }
        let key = self.key().to_string();
        let make: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
        let mut vars = self.tenant_vars();
        vars.extend([
            ("status".into(), "OPEN".into()),
            ("tag".into(), TAG.into()),
            ("cf_key".into(), "plan".into()),
            ("cf_value".into(), PLAN.into()),
        ]);
        let baseline = Baseline::Pgbench {
            name: "tickets_filtered",
            script: "pgbench_tickets_filtered.sql",
            vars,
        };
        self.compare_list(server, &labels, make, baseline).await
    }
}
