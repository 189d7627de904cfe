//! Scenario 7: agents heartbeating presence, and how late the offline push
//! follows each expiry.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use hyper::StatusCode;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use super::Ctx;
use super::rows::RowBuilder;
use crate::http::{Conn, Req};
use crate::process::ServiceConfig;
use crate::report::Row;
use crate::stats::{self, fmt_ms, quantile_ms};
use crate::ws::{self, WsTarget};

impl Ctx {
    pub async fn presence(&mut self) -> anyhow::Result<()> {
        let agents = self.seed.agents.clone();
        let n = agents.len();
        let ttl = self.presence_ttl;
        let interval = self.heartbeat;
        let scenario = format!(
            "7 presence: {n} agents heartbeating every {} s (TTL {ttl} s), offline push after expiry, p99",
            interval.as_secs()
        );
        let target = "p99 ≤ 1 s";
        let config = ServiceConfig {
            presence_ttl_secs: Some(ttl),
            ..self.service.clone()
        };
        let server = self.start("s7-service", &config).await?;
        let probe_body = heartbeat_body(0, &agents[0]);
        let (status, text) = self
            .probe(
                &server,
                Req::post_json("/api/v1/chat/agent-presence", &probe_body).key(self.key()),
            )
            .await?;
        if status != StatusCode::OK {
            server.stop().await;
            let reason = format!(
                "POST /chat/agent-presence answered {status}: {}",
                text.chars().take(100).collect::<String>()
            );
            self.rows.push(Row::not_run(&scenario, target, &reason));
            return Ok(());
        }
        let sampler = server.sampler();
        // The listener: a console subscribed to presence.
        let ws_target = WsTarget {
            addr: server.addr,
            path: "/api/v1/ws".into(),
            api_key: Some(self.key().to_string()),
            engine_io: false,
        };
        let mut socket = ws::open(0, &ws_target).await?;
        ws::subscribe(&mut socket, "presence").await?;
        let (events_tx, mut events_rx) =
            tokio::sync::mpsc::unbounded_channel::<(String, bool, chrono::DateTime<chrono::Utc>)>();
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = socket.next().await {
                if let Message::Text(text) = message {
                    let now = chrono::Utc::now();
                    let v: serde_json::Value =
                        serde_json::from_str(text.as_str()).unwrap_or_default();
                    if v["type"] == "presence" {
                        let user = v["data"]["userId"].as_str().unwrap_or("").to_string();
                        let online = v["data"]["online"].as_bool().unwrap_or(false);
                        let _ = events_tx.send((user, online, now));
                    }
                }
            }
        });

        // Heartbeats: agent i at i/n of the interval, then every interval.
        let conns = self.load.conns;
        let rounds = self.heartbeat_rounds;
        let started = tokio::time::Instant::now() + Duration::from_millis(200);
        let agents = Arc::new(agents);
        let key = self.key().to_string();
        let mut tasks = Vec::new();
        for c in 0..conns {
            let (agents, key) = (agents.clone(), key.clone());
            let addr = server.addr;
            tasks.push(tokio::spawn(async move {
                let mut conn = Conn::open(300 + c, addr).await?;
                let mut hist = stats::histogram();
                let mut last_seen: Vec<(usize, chrono::DateTime<chrono::Utc>)> = Vec::new();
                let mut errors = 0u64;
                let mut slots: Vec<(Duration, usize)> = Vec::new();
                for round in 0..rounds {
                    for i in (c..agents.len()).step_by(conns) {
                        let at =
                            interval.mul_f64(i as f64 / agents.len() as f64) + interval * round;
                        slots.push((at, i));
                    }
                }
                slots.sort();
                for (at, i) in slots {
                    tokio::time::sleep_until(started + at).await;
                    let req = Req::post_json(
                        "/api/v1/chat/agent-presence",
                        &heartbeat_body(i, &agents[i]),
                    )
                    .key(&key);
                    let sent = Instant::now();
                    match conn.send(&req).await {
                        Ok((status, body)) if status == StatusCode::OK => {
                            stats::record(&mut hist, sent.elapsed().as_micros() as u64);
                            let v: serde_json::Value =
                                serde_json::from_slice(&body).unwrap_or_default();
                            if let Some(seen) = v["lastSeen"]
                                .as_str()
                                .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
                            {
                                last_seen.push((i, seen.with_timezone(&chrono::Utc)));
                            }
                        }
                        _ => errors += 1,
                    }
                }
                anyhow::Ok((hist, last_seen, errors))
            }));
        }
        let mut hb_hist = stats::histogram();
        let mut last_seen: HashMap<usize, chrono::DateTime<chrono::Utc>> = HashMap::new();
        let mut hb_errors = 0;
        for task in tasks {
            let (hist, seen, errors) = task.await??;
            hb_hist.add(&hist).ok();
            hb_errors += errors;
            for (i, at) in seen {
                last_seen.insert(i, at);
            }
        }
        let heartbeats_done = chrono::Utc::now();
        // Wait for every expiry plus a margin far beyond the target.
        let latest_expiry = last_seen.values().max().copied().unwrap_or(heartbeats_done)
            + chrono::Duration::seconds(ttl as i64);
        let wait_until = latest_expiry + chrono::Duration::seconds(5);
        let index: HashMap<&str, usize> = agents
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        let mut online_pushes = 0u64;
        let mut early = 0u64;
        let mut lags = stats::histogram();
        let mut offline_seen = HashSet::new();
        loop {
            let remaining = (wait_until - chrono::Utc::now())
                .to_std()
                .unwrap_or(Duration::ZERO);
            if remaining.is_zero() || offline_seen.len() == last_seen.len() {
                break;
            }
            let Ok(Some((user, online, at))) =
                tokio::time::timeout(remaining, events_rx.recv()).await
            else {
                break;
            };
            let Some(&i) = index.get(user.as_str()) else {
                continue;
            };
            if online {
                online_pushes += 1;
                continue;
            }
            let Some(seen) = last_seen.get(&i) else {
                continue;
            };
            let expiry = *seen + chrono::Duration::milliseconds((ttl * 1000) as i64);
            if at < expiry {
                early += 1;
                continue;
            }
            if offline_seen.insert(i) {
                let lag_us = (at - expiry).num_microseconds().unwrap_or(0);
                stats::record(&mut lags, lag_us.max(0) as u64);
            }
        }
        reader.abort();
        let peak = sampler.peak_kib();
        server.stop().await;
        let missing = last_seen.len() - offline_seen.len();
        self.note(format!(
            "scenario 7: {} heartbeats in {} rounds over {} connections ({} errors), heartbeat p50 {} / p99 {}; {online_pushes} online pushes, {} offline pushes after expiry, {missing} agents never pushed offline within 5 s of expiry, {early} offline pushes before expiry (an agent flapping while it heartbeats)",
            hb_hist.len(),
            rounds,
            conns,
            hb_errors,
            fmt_ms(quantile_ms(&hb_hist, 0.5)),
            fmt_ms(quantile_ms(&hb_hist, 0.99)),
            offline_seen.len(),
        ));
        let p99 = quantile_ms(&lags, 0.99);
        let pushed = !lags.is_empty();
        self.rows.push(
            RowBuilder::new(scenario)
                .service(if pushed {
                    fmt_ms(p99)
                } else {
                    "no offline push".into()
                })
                .met_if(target, pushed && p99 <= 1000.0 && missing == 0)
                .latency(format!(
                    "{} / {} (max {})",
                    fmt_ms(quantile_ms(&lags, 0.5)),
                    fmt_ms(p99),
                    fmt_ms(quantile_ms(&lags, 1.0))
                ))
                .rss_kib(peak)
                .build(),
        );
        Ok(())
    }
}

fn heartbeat_body(i: usize, user_id: &str) -> serde_json::Value {
    json!({
        "userId": user_id,
        "name": format!("Agent {}", i + 1),
        "email": format!("agent{}@bench.example", i + 1),
        "role": "AGENT",
    })
}
