//! Scenario 16: whether the audit log's sealer keeps up. Audited writes
//! (`POST /teams`, each a `team.created` entry written unsealed in its
//! change's transaction) run at full load over the usual connections while
//! the age of the company's oldest unsealed entry is sampled from the
//! database every [`SAMPLE_EVERY`]: that age is the sealer's lag at that
//! moment. The sealer runs once a second on every node, so a lag that
//! stays under two seconds means it keeps up.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper::StatusCode;
use serde_json::json;

use super::rows::RowBuilder;
use super::{Ctx, measure};
use crate::http::{Load, MakeRequest, Req};
use crate::setup::{Sql, psql};
use crate::stats;

const SAMPLE_EVERY: Duration = Duration::from_millis(100);

impl Ctx {
    pub async fn audit_sealer(&mut self) -> anyhow::Result<()> {
        let server = self.start("s16-service", &self.service).await?;
        let key = self.key().to_string();
        // Team names are unique per company: the run's start tells runs apart.
        let run = chrono::Utc::now().timestamp_millis();
        let create: MakeRequest = Arc::new(move |seq| {
            Req::post_json(
                "/api/v1/teams",
                &json!({"name": format!("bench team {run}-{seq}"), "memberIds": []}),
            )
            .key(&key)
        });
        let load = Load {
            conns: self.load.conns,
            warmup: self.load.warmup,
            duration: self.load.duration,
        };
        let writing = Arc::new(AtomicBool::new(true));
        let sampler = tokio::spawn(sample_lag(
            self.database_url.clone(),
            self.seed.company.clone(),
            writing.clone(),
        ));
        let writes = measure(&server, load, StatusCode::CREATED, create).await;
        writing.store(false, Ordering::SeqCst);
        let lags = sampler.await??;
        server.stop().await;
        let writes = writes?;
        self.throughput_note("scenario 16 POST /teams (audited)", &writes);
        let lag = super::hist_of(&lags);
        let (p50, p99) = (
            lag.value_at_quantile(0.5) as f64 / 1000.0,
            lag.value_at_quantile(0.99) as f64 / 1000.0,
        );
        self.note(format!(
            "scenario 16: {} samples of the oldest unsealed entry's age, one every {} ms",
            lags.len(),
            SAMPLE_EVERY.as_millis()
        ));
        self.rows.push(
            RowBuilder::new(format!(
                "16 audit sealer lag under audited writes (`POST /teams`, {} connections)",
                load.conns
            ))
            .service(stats::fmt_rate(writes.t.rate(), "writes/s"))
            .latency(format!(
                "lag p50 / p99: {} / {}",
                stats::fmt_ms(p50),
                stats::fmt_ms(p99)
            ))
            .rss_kib(writes.peak_rss_kib)
            // Met only when writes were made and sampled.
            .met_if(
                "lag p99 ≤ 2 s",
                writes.t.ok > 0 && !lags.is_empty() && p99 <= 2000.0,
            )
            .build(),
        );
        Ok(())
    }
}

/// The age in microseconds of `company`'s oldest unsealed audit entry
/// (0 when every entry is sealed), every [`SAMPLE_EVERY`] while `writing`.
async fn sample_lag(
    database_url: String,
    company: String,
    writing: Arc<AtomicBool>,
) -> anyhow::Result<Vec<u32>> {
    let query = format!(
        "SELECT COALESCE(FLOOR(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)) * 1000000), 0)::bigint \
         FROM audit_entries WHERE company_id = '{company}' AND seq IS NULL"
    );
    let mut lags = Vec::new();
    while writing.load(Ordering::SeqCst) {
        let out = psql(&database_url, Sql::Text(&query), &[]).await?;
        let micros: i64 = out.trim().parse().unwrap_or(0);
        lags.push(u32::try_from(micros.max(0)).unwrap_or(u32::MAX));
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
    Ok(lags)
}
