//! Scenario 6: REST message to socket delivery among idle sockets, against
//! pgbench running the message transaction at the same rate.

use std::time::{Duration, Instant};

use hyper::StatusCode;
use serde_json::json;

use super::rows::{RowBuilder, ratio};
use super::{Ctx, chat_body, hist_of, prepare_script};
use crate::http::{Conn, Load, Req};
use crate::pgbench::Pgbench;
use crate::report::Row;
use crate::stats::{self, fmt_ms, quantile_ms};
use crate::ws::{Fleet, Tally, WsTarget};

impl Ctx {
    pub async fn message_to_socket(&mut self) -> anyhow::Result<()> {
        let idle = self.idle_sockets;
        let scenario = format!("6 REST message → socket delivery, {idle} idle sockets, p99");
        let target = "p99 ≤ 10 ms";
        let server = self.start("s6-service", &self.service).await?;
        let session = match self.create_session(&server).await {
            Ok(session) => session,
            Err(e) => {
                server.stop().await;
                let reason: String = format!("chat sessions not available ({e:#})")
                    .chars()
                    .take(160)
                    .collect();
                self.rows.push(Row::not_run(&scenario, target, &reason));
                return Ok(());
            }
        };
        let sampler = server.sampler();
        let ws_target = WsTarget {
            addr: server.addr,
            path: "/api/v1/ws".into(),
            api_key: Some(self.key().to_string()),
            engine_io: false,
        };
        let idle_tally = Tally::new(1);
        let idle_fleet = Fleet::open(&ws_target, idle, None, 64, idle_tally).await;
        let tally = Tally::new(10_000);
        let listener = Fleet::open(
            &ws_target,
            1,
            Some(format!("session:{session}")),
            1,
            tally.clone(),
        )
        .await;
        anyhow::ensure!(
            listener.connected == 1,
            "listener socket failed: {:?}",
            listener.failures.first()
        );
        let mut conn = Conn::open(251, server.addr).await?;
        let mut post_hist = stats::histogram();
        let mut post_latency = Vec::new();
        let rate = 20.0;
        let count = (self.load.duration.as_secs_f64() * rate) as u64;
        let started = tokio::time::Instant::now();
        let mut lost = 0;
        for seq in 0..count {
            tokio::time::sleep_until(started + Duration::from_secs_f64(seq as f64 / rate)).await;
            let req = Req::post_json(
                format!("/api/v1/chat/sessions/{session}/messages"),
                &json!({"body": chat_body(seq), "senderType": "visitor"}),
            )
            .key(self.key());
            let sent = Instant::now();
            tally.mark_sent(seq);
            let (status, body) = conn.send(&req).await?;
            let post_us = sent.elapsed().as_micros() as u64;
            stats::record(&mut post_hist, post_us);
            post_latency.push(post_us);
            anyhow::ensure!(
                status == StatusCode::CREATED,
                "message answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
            if !tally
                .wait_all(seq..seq + 1, 1, Duration::from_secs(5))
                .await
            {
                lost += 1;
            }
        }
        let hist = hist_of(&tally.latencies(0..count));
        let peak = sampler.peak_kib();
        // The push's own share: socket delivery minus the POST's round trip
        // (negative when the frame arrived before the HTTP response).
        let mut before_response = 0;
        let mut after_response = stats::histogram();
        for seq in 0..count {
            if let Some(socket_us) = tally.latencies(seq..seq + 1).first() {
                let diff = *socket_us as i64 - post_latency[seq as usize] as i64;
                if diff < 0 {
                    before_response += 1;
                } else {
                    stats::record(&mut after_response, diff as u64);
                }
            }
        }
        self.note(format!(
            "scenario 6: {before_response} of {count} frames arrived before the POST's own response; the others trailed it by p50 {} / p99 {}",
            fmt_ms(quantile_ms(&after_response, 0.5)),
            fmt_ms(quantile_ms(&after_response, 0.99)),
        ));
        self.note(format!(
            "scenario 6: {count} messages at {rate:.0}/s, {} idle sockets connected ({} failed), {lost} not delivered within 5 s; the POST itself answered in p50 {} / p99 {}",
            idle_fleet.connected,
            idle_fleet.failures.len(),
            fmt_ms(quantile_ms(&post_hist, 0.5)),
            fmt_ms(quantile_ms(&post_hist, 0.99)),
        ));
        listener.close().await;
        idle_fleet.close().await;
        server.stop().await;
        // The database's share: the same transaction at the same rate.
        let script = "pgbench_chat_message.sql";
        let runnable = self.out_dir.join("pgbench").join(script);
        prepare_script(&self.database_url, &self.sql_dir.join(script), &runnable).await?;
        let mut vars = self.tenant_vars();
        vars.push(("session".into(), session.clone()));
        let pg = Pgbench {
            name: "chat_message".into(),
            script: runnable,
            vars,
            database_url: &self.database_url,
            load: Load {
                conns: 1,
                warmup: Duration::from_secs(1),
                duration: self.load.duration,
            },
            out_dir: &self.out_dir,
            rate: Some(rate),
        }
        .run()
        .await?;
        self.pg_note(
            "scenario 6 pgbench (the message transaction at the same rate)",
            &pg,
        );
        let p99 = quantile_ms(&hist, 0.99);
        self.rows.push(
            RowBuilder::new(scenario)
                .service(fmt_ms(p99))
                .baseline(format!(
                    "{} (pgbench: the same transaction at {rate:.0}/s, p99; p50 {})",
                    fmt_ms(pg.p99_ms()),
                    fmt_ms(pg.p50_ms())
                ))
                .ratio_times(ratio(p99, pg.p99_ms()))
                .met_if(target, p99 <= 10.0 && lost == 0)
                .latency(format!(
                    "{} / {}",
                    fmt_ms(quantile_ms(&hist, 0.5)),
                    fmt_ms(p99)
                ))
                .rss_kib(peak)
                .build(),
        );
        Ok(())
    }
}
