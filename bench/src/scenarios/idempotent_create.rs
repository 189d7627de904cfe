//! Scenario 8: `POST /tickets` with a new `Idempotency-Key` on every
//! request against the same request without one, on the same server in the
//! same run: the cost of claiming the key and storing the answer.

use std::sync::Arc;

use hyper::StatusCode;

use super::rows::RowBuilder;
use super::{Baseline, Ctx};
use crate::http::{MakeRequest, Req};
use crate::report::Row;

impl Ctx {
    pub async fn idempotent_create(&mut self) -> anyhow::Result<()> {
        let scenario = "8 `POST /tickets` with a new `Idempotency-Key` each vs without";
        let target = "≥ 80% of without";
        let server = self.start("s8-service", &self.service).await?;
        let entity = self.seed.entity.clone();
        let body = move |seq: u64| super::ticket_body(&entity, seq);
        let key = self.key().to_string();
        let keyed = {
            let (key, body) = (key.clone(), body.clone());
            move |seq: u64| {
                let mut req = Req::post_json("/api/v1/tickets", &body(seq)).key(&key);
                req.headers
                    .push(("idempotency-key", uuid::Uuid::new_v4().to_string()));
                req
            }
        };
        let (status, text) = self.probe(&server, keyed(0)).await?;
        if status != StatusCode::CREATED {
            server.stop().await;
            let reason = format!(
                "POST /tickets with Idempotency-Key answered {status}: {}",
                text.chars().take(120).collect::<String>()
            );
            self.rows.push(Row::not_run(scenario, target, &reason));
            return Ok(());
        }
        let with_key: MakeRequest = Arc::new(move |seq| keyed(seq + 1));
        let without_key: MakeRequest =
            Arc::new(move |seq| Req::post_json("/api/v1/tickets", &body(seq + 1)).key(&key));
        let (m, plain) = self
            .compare(
                &server,
                StatusCode::CREATED,
                with_key,
                Baseline::Http(without_key, StatusCode::CREATED),
            )
            .await?;
        server.stop().await;
        self.throughput_note("scenario 8 service, with Idempotency-Key", &m);
        self.throughput_note("scenario 8 service, without", &plain);
        self.rows.push(
            RowBuilder::throughput(
                scenario,
                &m,
                &plain.t,
                "req/s",
                "the same POST without the header",
            )
            .rss_kib(m.peak_rss_kib.max(plain.peak_rss_kib))
            .goal(target, 0.8)
            .build(),
        );
        Ok(())
    }
}
