//! Scenario 13: assignment latency. 500 agents online (presence
//! heartbeats), each with a console socket on its own `agent:<userId>`
//! channel (or, with `--assignment-channel entity`, all on the routed
//! team's entity channel, where every console hears every assignment);
//! new chats arrive at 50 per second; each is timed from the moment its
//! `POST /chat/sessions` is sent to the moment its `assignment` frame
//! reaches the socket of the agent it was assigned to.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::StreamExt;
use hyper::StatusCode;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use super::Ctx;
use super::rows::RowBuilder;
use crate::http::{Conn, Req};
use crate::process::{Server, ServiceConfig};
use crate::report::Row;
use crate::stats::{self, fmt_ms, quantile_ms};
use crate::ws::{self, WsTarget};

const AGENTS: usize = 500;
const RATE: f64 = 50.0;
/// Connections the chats are created over (open loop: a slow answer
/// delays only its own connection's next chat).
const POSTERS: usize = 8;

/// Where the consoles hear their assignments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AssignmentChannel {
    /// `agent:<userId>`: each console its own.
    Agent,
    /// `entity:<id>`: every console the team's entity.
    Entity,
}

impl AssignmentChannel {
    fn of(self, agent: &str, entity: &str) -> String {
        match self {
            AssignmentChannel::Agent => format!("agent:{agent}"),
            AssignmentChannel::Entity => format!("entity:{entity}"),
        }
    }
}

/// The team's entity, its chats' send instants and the frames' arrivals.
struct Run {
    sent: Vec<(String, Instant)>,
    arrived: HashMap<String, Instant>,
    post_hist: hdrhistogram::Histogram<u64>,
    sockets: usize,
}

impl Ctx {
    pub async fn assignment(&mut self) -> anyhow::Result<()> {
        let channel = match self.assignment_channel {
            AssignmentChannel::Agent => "agent:<id>",
            AssignmentChannel::Entity => "entity:<id>",
        };
        let scenario = format!(
            "13 chat created → `assignment` frame at the agent, {AGENTS} online agents (sockets on `{channel}`), {RATE:.0} chats/s, p99"
        );
        let target = "p99 ≤ 20 ms";
        if self.seed.agents.len() < AGENTS {
            self.rows.push(Row::not_run(
                &scenario,
                target,
                "fewer than 500 seeded agents",
            ));
            return Ok(());
        }
        // Presence outlives the run: no heartbeats while measuring.
        let config = ServiceConfig {
            presence_ttl_secs: Some(600),
            ..self.service.clone()
        };
        let server = self.start("s13-service", &config).await?;
        let sampler = server.sampler();
        let result = self.assignment_on(&server).await;
        let peak = sampler.peak_kib();
        server.stop().await;
        let run = result?;
        let mut hist = stats::histogram();
        let mut missing = 0;
        for (session, sent) in &run.sent {
            match run.arrived.get(session) {
                Some(at) => stats::record(
                    &mut hist,
                    at.saturating_duration_since(*sent).as_micros() as u64,
                ),
                None => missing += 1,
            }
        }
        self.note(format!(
            "scenario 13: {} chats at {RATE:.0}/s over {POSTERS} connections, {} agent sockets, {missing} chats without an `assignment` frame at their agent within 5 s; the POST answered in p50 {} / p99 {}",
            run.sent.len(),
            run.sockets,
            fmt_ms(quantile_ms(&run.post_hist, 0.5)),
            fmt_ms(quantile_ms(&run.post_hist, 0.99)),
        ));
        let p99 = quantile_ms(&hist, 0.99);
        self.rows.push(
            RowBuilder::new(scenario)
                .service(fmt_ms(p99))
                .met_if(target, p99 <= 20.0 && missing == 0 && !hist.is_empty())
                .latency(format!(
                    "{} / {} (max {})",
                    fmt_ms(quantile_ms(&hist, 0.5)),
                    fmt_ms(p99),
                    fmt_ms(quantile_ms(&hist, 1.0))
                ))
                .rss_kib(peak)
                .build(),
        );
        Ok(())
    }

    async fn assignment_on(&self, server: &Server) -> anyhow::Result<Run> {
        let mut conn = Conn::open(0, server.addr).await?;
        let key = self.key().to_string();
        let agents: Vec<String> = self.seed.agents[..AGENTS].to_vec();
        let count = (self.load.duration.as_secs_f64() * RATE) as usize;
        // Room for every chat of the run: none waits in the queue.
        let capacity = count.div_ceil(AGENTS) + 1;
        let entity = conn
            .json(
                &Req::post_json("/api/v1/entities", &json!({"name": "Bench routing"})).key(&key),
                StatusCode::CREATED,
            )
            .await?;
        let entity = entity["id"].as_str().context("entity id")?.to_string();
        let team = conn
            .json(
                &Req::post_json(
                    "/api/v1/teams",
                    &json!({"name": "Bench routing", "memberIds": agents, "entityIds": [entity],
                            "routing": {"mode": "least_busy", "chatCapacity": capacity}}),
                )
                .key(&key),
                StatusCode::CREATED,
            )
            .await?;
        let patch = Req {
            method: hyper::Method::PATCH,
            ..Req::post_json(
                format!("/api/v1/entities/{entity}"),
                &json!({"defaultTeamId": team["id"]}),
            )
            .key(&key)
        };
        conn.json(&patch, StatusCode::OK).await?;
        for (i, agent) in agents.iter().enumerate() {
            let body = json!({"userId": agent, "name": format!("Agent {}", i + 1)});
            conn.json(
                &Req::post_json("/api/v1/chat/agent-presence", &body).key(&key),
                StatusCode::OK,
            )
            .await?;
        }

        let (arrivals_tx, mut arrivals) = mpsc::unbounded_channel::<(String, Instant)>();
        let ws_target = WsTarget {
            addr: server.addr,
            path: "/api/v1/ws".into(),
            api_key: Some(key.clone()),
            engine_io: false,
        };
        let mut readers = Vec::new();
        for (i, agent) in agents.iter().enumerate() {
            let mut socket = ws::open(1000 + i, &ws_target).await?;
            let channel = self.assignment_channel.of(agent, &entity);
            ws::subscribe(&mut socket, &channel).await?;
            let (agent, arrivals_tx) = (agent.clone(), arrivals_tx.clone());
            readers.push(tokio::spawn(async move {
                while let Some(Ok(message)) = socket.next().await {
                    let Message::Text(text) = message else {
                        continue;
                    };
                    let at = Instant::now();
                    // On the entity channel every console hears every
                    // assignment: only the assignee's own is parsed.
                    if !text.as_str().contains(agent.as_str()) {
                        continue;
                    }
                    let frame: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                    if frame["type"] == "assignment" && frame["data"]["assigneeId"] == agent {
                        let session = frame["data"]["sessionId"].as_str().unwrap_or_default();
                        let _ = arrivals_tx.send((session.to_string(), at));
                    }
                }
            }));
        }
        drop(arrivals_tx);

        let started = tokio::time::Instant::now() + Duration::from_millis(200);
        let mut posters = Vec::new();
        for p in 0..POSTERS {
            let (key, entity, addr) = (key.clone(), entity.clone(), server.addr);
            posters.push(tokio::spawn(async move {
                let mut conn = Conn::open(100 + p, addr).await?;
                let mut sent = Vec::new();
                let mut hist = stats::histogram();
                for seq in (p..count).step_by(POSTERS) {
                    let at = started + Duration::from_secs_f64(seq as f64 / RATE);
                    tokio::time::sleep_until(at).await;
                    let req = Req::post_json(
                        "/api/v1/chat/sessions",
                        &json!({"entityId": entity, "visitorName": format!("Visitor {seq}")}),
                    )
                    .key(&key);
                    let t0 = Instant::now();
                    let session = conn.json(&req, StatusCode::CREATED).await?;
                    stats::record(&mut hist, t0.elapsed().as_micros() as u64);
                    let id = session["id"].as_str().context("session id")?.to_string();
                    sent.push((id, t0));
                }
                anyhow::Ok((sent, hist))
            }));
        }
        let mut sent = Vec::new();
        let mut post_hist = stats::histogram();
        for poster in posters {
            let (part, hist) = poster.await??;
            sent.extend(part);
            post_hist.add(&hist).ok();
        }
        let mut arrived = HashMap::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while arrived.len() < sent.len() {
            match tokio::time::timeout_at(deadline, arrivals.recv()).await {
                Ok(Some((session, at))) => {
                    arrived.entry(session).or_insert(at);
                }
                _ => break,
            }
        }
        // Frames that came while the posters were still sending are queued.
        while let Ok((session, at)) = arrivals.try_recv() {
            arrived.entry(session).or_insert(at);
        }
        let sockets = readers.len();
        for reader in readers {
            reader.abort();
        }
        // The next run (`--runs`) routes to the same agents: they start it
        // with no open chats, as this one did, not at capacity.
        let mut closer = Conn::open(2, server.addr).await?;
        for (session, _) in &sent {
            let close = Req {
                method: hyper::Method::PATCH,
                ..Req::post_json(
                    format!("/api/v1/chat/sessions/{session}"),
                    &json!({"status": "CLOSED"}),
                )
                .key(&key)
            };
            closer.json(&close, StatusCode::OK).await?;
        }
        Ok(Run {
            sent,
            arrived,
            post_hist,
            sockets,
        })
    }
}
