//! Scenario 5: idle memory per socket, single-message and burst fan-out,
//! the service against a bare axum broadcast server with frames of the same
//! size.

use anyhow::Context;
use hyper::StatusCode;
use serde_json::json;

use super::fanout::Fanout;
use super::rows::{RowBuilder, ratio};
use super::{Ctx, chat_body};
use crate::http::Req;
use crate::process::{Server, ServiceConfig};
use crate::report::Row;
use crate::stats::{fmt_kib, fmt_ms, fmt_rate};
use crate::ws::{self, WsTarget};

impl Ctx {
    pub async fn websocket(&mut self) -> anyhow::Result<()> {
        if self.ab_bin.is_some() {
            return self.ab_websocket().await;
        }
        let n = self.sockets;
        let mem_scenario = format!("5 idle memory per authenticated socket ({n} sockets)");
        let fan_scenario = format!("5 fan-out of one `chat.message` to {n} subscribers, p99");
        let burst_scenario = format!("5 burst fan-out to {n} subscribers, deliveries/s");
        let (mem_target, fan_target, burst_target) = (
            "≤ 1.2× the bare server's per socket",
            "p99 ≤ 1.1× the bare server's",
            "≥ 75% of bare",
        );

        let service = self
            .service_fanout("s5-service", &self.service.clone())
            .await
            .map_err(|e| {
                let reason: String = format!("{e:#}").chars().take(160).collect();
                eprintln!("  {reason}");
                reason
            });
        // The bare broadcast server, with frames of the same size.
        let template = service.as_ref().ok().and_then(|f| f.sample_frame.clone());
        let bare = Server::bare(&self.out_dir.join("logs")).await?;
        let target = WsTarget {
            addr: bare.addr,
            path: "/ws".into(),
            api_key: None,
            engine_io: false,
        };
        let bare_publish = |seq: u64, frame: &Option<String>| {
            let frame = frame_for(seq, frame.as_deref());
            Req {
                method: hyper::Method::POST,
                path: "/publish".into(),
                headers: vec![("content-type", "text/plain".into())],
                body: Some(bytes::Bytes::from(frame)),
            }
        };
        let bare_result = self
            .fanout(
                &bare,
                target,
                Some("bench".into()),
                &bare_publish,
                StatusCode::OK,
                template.clone(),
            )
            .await;
        bare.stop().await;
        let bare_result = bare_result?;

        self.note(format!(
            "scenario 5 bare server: {} sockets, {} per socket, frame of {} bytes, single-message rounds: time until all received p50 {}",
            bare_result.connected,
            fmt_kib(bare_result.kib_per_socket),
            bare_result.frame_len,
            fmt_ms(bare_result.all_received_ms),
        ));

        match &service {
            Err(reason) => {
                self.rows.push(Row {
                    baseline: format!("bare: {}", fmt_kib(bare_result.kib_per_socket)),
                    ..Row::not_run(&mem_scenario, mem_target, reason)
                });
                self.rows.push(Row {
                    baseline: format!("bare: {}", fmt_ms(bare_result.p99_ms)),
                    ..Row::not_run(&fan_scenario, fan_target, "as above")
                });
                self.rows.push(Row {
                    baseline: format!("bare: {}", fmt_rate(bare_result.burst_rate, "/s")),
                    ..Row::not_run(&burst_scenario, burst_target, "as above")
                });
            }
            Ok(s) => {
                self.note(format!(
                    "scenario 5 service: {} of {n} sockets connected ({} failed{}), {} closed by the server during the run{}; frame of {} bytes; single-message rounds: time until all received p50 {}; burst: {} of {} deliveries",
                    s.connected,
                    s.failed,
                    s.first_failure.as_deref().map(|f| format!(", first: `{f}`")).unwrap_or_default(),
                    s.closed,
                    s.close_reason.as_deref().map(|r| format!(" (first reason: {r})")).unwrap_or_default(),
                    s.frame_len,
                    fmt_ms(s.all_received_ms),
                    s.burst_received,
                    s.burst_expected,
                ));
                self.rows.push(
                    RowBuilder::new(mem_scenario)
                        .service(fmt_kib(s.kib_per_socket))
                        .baseline(format!(
                            "{} (bare axum)",
                            fmt_kib(bare_result.kib_per_socket)
                        ))
                        .ratio_times(ratio(s.kib_per_socket, bare_result.kib_per_socket))
                        .met_if(
                            mem_target,
                            ratio(s.kib_per_socket, bare_result.kib_per_socket) <= 1.2,
                        )
                        .rss_kib(s.peak_rss_kib)
                        .build(),
                );
                let r99 = ratio(s.p99_ms, bare_result.p99_ms);
                self.rows.push(
                    RowBuilder::new(fan_scenario)
                        .service(fmt_ms(s.p99_ms))
                        .baseline(format!("{} (bare)", fmt_ms(bare_result.p99_ms)))
                        .ratio_times(r99)
                        .met_if(fan_target, r99 <= 1.1)
                        .latency(format!(
                            "{} / {} ({} / {}); all received after {} ({})",
                            fmt_ms(s.p50_ms),
                            fmt_ms(s.p99_ms),
                            fmt_ms(bare_result.p50_ms),
                            fmt_ms(bare_result.p99_ms),
                            fmt_ms(s.all_received_ms),
                            fmt_ms(bare_result.all_received_ms)
                        ))
                        .rss_kib(s.peak_rss_kib)
                        .build(),
                );
                let rb = ratio(s.burst_rate, bare_result.burst_rate);
                self.rows.push(
                    RowBuilder::new(burst_scenario)
                        .service(fmt_rate(s.burst_rate, "/s"))
                        .baseline(format!("{} (bare)", fmt_rate(bare_result.burst_rate, "/s")))
                        .ratio_pct(rb)
                        .met_if(
                            burst_target,
                            rb >= 0.75 && s.burst_received == s.burst_expected,
                        )
                        .latency(format!(
                            "{} / {} ({} / {})",
                            fmt_ms(s.burst_p50_ms),
                            fmt_ms(s.burst_p99_ms),
                            fmt_ms(bare_result.burst_p50_ms),
                            fmt_ms(bare_result.burst_p99_ms)
                        ))
                        .rss_kib(s.peak_rss_kib)
                        .build(),
                );
            }
        }
        // Socket.IO last, its events sized like the service's frame.
        if let (Some(dir), Ok(ours)) = (self.peers_dir.clone(), &service) {
            self.socketio_rows(&dir.join("socketio"), ours, template)
                .await?;
        }
        Ok(())
    }
}

impl Ctx {
    /// Scenario 5's fan-out against the service started with `config`.
    pub(super) async fn service_fanout(
        &self,
        name: &str,
        config: &ServiceConfig,
    ) -> anyhow::Result<Fanout> {
        let server = self.start(name, config).await?;
        let result = async {
            let session = self
                .create_session(&server)
                .await
                .context("chat sessions not available")?;
            let target = WsTarget {
                addr: server.addr,
                path: "/api/v1/ws".into(),
                api_key: Some(self.key().to_string()),
                engine_io: false,
            };
            let key = self.key().to_string();
            let channel = format!("session:{session}");
            let publish = move |seq: u64, _frame: &Option<String>| {
                Req::post_json(
                    format!("/api/v1/chat/sessions/{session}/messages"),
                    &json!({"body": chat_body(seq), "senderType": "visitor"}),
                )
                .key(&key)
            };
            self.fanout(
                &server,
                target,
                Some(channel),
                &publish,
                StatusCode::CREATED,
                None,
            )
            .await
        }
        .await;
        server.stop().await;
        result
    }
}

/// The frame the bare server broadcasts for `seq`: the service's frame with
/// the number replaced (same size), or a frame shaped like it.
pub(super) fn frame_for(seq: u64, template: Option<&str>) -> String {
    match template {
        Some(t) => t.replacen(&ws::numbered_body(0), &ws::numbered_body(seq), 1),
        None => json!({
            "type": "chat.message",
            "channel": "session:0190b5a2-7c4e-7d2a-9f1e-3b8c6d5e4f21",
            "data": {
                "id": "0190b5a2-7c4e-7d2a-9f1e-3b8c6d5e4f22",
                "sessionId": "0190b5a2-7c4e-7d2a-9f1e-3b8c6d5e4f21",
                "body": chat_body(seq),
                "senderType": "visitor",
                "senderId": null,
                "createdAt": "2026-11-21T10:04:05.123Z"
            }
        })
        .to_string(),
    }
}
