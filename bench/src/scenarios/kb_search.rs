//! Scenario 4: `GET /kb/search` over the seeded articles against pgbench
//! running the same two statements (the entity check, the search).

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::RowBuilder;
use super::{Baseline, Ctx};
use crate::http::{MakeRequest, Req};
use crate::report::Row;

impl Ctx {
    pub async fn kb_search(&mut self) -> anyhow::Result<()> {
        let (scenario, target) = ("4 `GET /kb/search` (10,000 articles)", "≥ 35% of pgbench");
        if self.seed.articles.is_none() {
            self.rows.push(Row::not_run(
                scenario,
                target,
                "no articles table (knowledge base not merged)",
            ));
            return Ok(());
        }
        let server = self.start("s4-service", &self.service).await?;
        let entity = self.seed.entity.clone();
        let path = move |seq: u64| {
            let term = SEARCH_TERMS[seq as usize % SEARCH_TERMS.len()];
            format!(
                "/api/v1/kb/search?q={}&entityId={entity}&limit=10",
                term.replace(' ', "+")
            )
        };
        let (status, body) = self
            .probe(&server, Req::get(path(0)).key(self.key()))
            .await?;
        if status != StatusCode::OK {
            server.stop().await;
            self.rows.push(Row::not_run(
                scenario,
                target,
                &format!("GET /kb/search answered {status}"),
            ));
            return Ok(());
        }
        let hits = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.as_array().map(|a| a.len()))
            .unwrap_or(0);
        self.note(format!(
            "scenario 4: `{}` returned {hits} results",
            SEARCH_TERMS[0]
        ));
        let key = self.key().to_string();
        let make: MakeRequest = Arc::new(move |seq| Req::get(path(seq)).key(&key));
        let mut vars = self.tenant_vars();
        vars.push(("terms".into(), SEARCH_TERMS.len().to_string()));
        let baseline = Baseline::Pgbench {
            name: "kb_search",
            script: "pgbench_kb_search.sql",
            vars,
        };
        let (m, pg) = self
            .compare(&server, StatusCode::OK, make, baseline)
            .await?;
        let pg = pg.t;
        server.stop().await;
        self.throughput_note("scenario 4 service", &m);
        self.pg_note("scenario 4 pgbench", &pg);
        self.rows.push(
            RowBuilder::throughput(scenario, &m, &pg, "tx/s", "pgbench, same 2 statements")
                .goal(target, 0.35)
                .build(),
        );
        Ok(())
    }
}

/// The queries of scenario 4, each two words from the seed's vocabulary
/// (bench/sql/seed_kb.sql): the service parses the first as a whole word
/// and the last as a prefix; the pgbench script gets the same split.
pub(super) const SEARCH_TERMS: &[&str] = &[
    "password reset",
    "refund policy",
    "shipping tracking",
    "account locked",
    "export data",
    "two factor",
    "billing address",
    "cancel subscription",
    "mobile app",
    "invoice download",
];
