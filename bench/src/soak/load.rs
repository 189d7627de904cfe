//! The soak's mixed load: REST streams at fixed rates (tickets, comments,
//! KB search, presence heartbeats) and chats, each an agent socket and a
//! visitor socket talking in one session.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use futures_util::{SinkExt, StreamExt};
use hyper::StatusCode;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use crate::http::{Conn, Req};
use crate::process::Server;
use crate::setup::Seed;
use crate::ws::{self, WsTarget};

/// Seconds between two messages of one visitor, and of one agent.
const VISITOR_EVERY: Duration = Duration::from_secs(30);
const AGENT_EVERY: Duration = Duration::from_secs(60);
/// Seconds between two presence heartbeats of one agent (TTL 30 s).
const HEARTBEAT_EVERY: Duration = Duration::from_secs(20);
/// The tickets a GET or a comment picks from: the most recent ones.
const RECENT_TICKETS: usize = 1_000;
/// Socket handshakes in flight at once: 2,000 at a time would queue on the
/// service's database pool and time out.
const PARALLEL_HANDSHAKES: usize = 32;
/// The longest wait for every socket to subscribe before the clock starts.
const CONNECT_LIMIT: Duration = Duration::from_secs(180);
/// Error messages kept for the report (the count covers them all).
const KEPT_ERRORS: usize = 20;

/// What the load did, shared by its tasks and read by the sampler.
#[derive(Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub frames_sent: AtomicU64,
    pub frames_received: AtomicU64,
    /// Sockets subscribed now.
    pub connected: AtomicU64,
    pub errors: AtomicU64,
    pub first_errors: Mutex<Vec<String>>,
}

impl Counters {
    pub fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut kept) = self.first_errors.lock()
            && kept.len() < KEPT_ERRORS
        {
            kept.push(what);
        }
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// A chat of the soak: its session, the visitor's token, the agent who answers.
struct Chat {
    session: String,
    visitor_token: String,
    agent: String,
}

pub struct Mix {
    key: String,
    entity: String,
    agents: Vec<String>,
    chats: Vec<Chat>,
}

pub struct Running {
    tasks: Vec<JoinHandle<()>>,
}

impl Running {
    /// Ends every task: the REST streams have stopped by the end time; the
    /// sockets close.
    pub async fn stop(self) {
        for task in self.tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Mix {
    /// Registers the webhook and opens the chats' sessions.
    pub async fn prepare(
        server: &Server,
        seed: &Seed,
        sockets: usize,
        hook_url: String,
        counters: &Counters,
    ) -> anyhow::Result<Mix> {
        let mut conn = Conn::open(0, server.addr).await?;
        let webhook = json!({
            "name": "soak", "url": hook_url,
            "events": ["ticket.created", "comment.created"],
        });
        conn.json(
            &Req::post_json("/api/v1/company/webhooks", &webhook).key(&seed.key),
            StatusCode::CREATED,
        )
        .await
        .context("registering the webhook")?;
        let pairs = (sockets / 2).min(seed.agents.len());
        let mut chats = Vec::with_capacity(pairs);
        for i in 0..pairs {
            let body = json!({"entityId": seed.entity, "visitorName": format!("Soak visitor {i}")});
            let session = conn
                .json(
                    &Req::post_json("/api/v1/chat/sessions", &body).key(&seed.key),
                    StatusCode::CREATED,
                )
                .await
                .context("creating a chat session")?;
            counters.requests.fetch_add(1, Ordering::Relaxed);
            chats.push(Chat {
                session: session["id"].as_str().context("session id")?.to_string(),
                visitor_token: session["visitorToken"]
                    .as_str()
                    .context("visitorToken")?
                    .to_string(),
                agent: seed.agents[i].clone(),
            });
        }
        Ok(Mix {
            key: seed.key.clone(),
            entity: seed.entity.clone(),
            agents: seed.agents[..pairs].to_vec(),
            chats,
        })
    }

    /// Starts every chat's two sockets, at most [`PARALLEL_HANDSHAKES`]
    /// handshakes at a time, and waits until they have all subscribed (or
    /// [`CONNECT_LIMIT`]), so the measured run starts with every socket open.
    async fn open_chats(&self, addr: SocketAddr, counters: &Arc<Counters>) -> Vec<JoinHandle<()>> {
        let gate = Arc::new(Semaphore::new(PARALLEL_HANDSHAKES));
        let mut tasks = Vec::new();
        let n = self.chats.len().max(1) as f64;
        for (i, chat) in self.chats.iter().enumerate() {
            // Each side starts at its own phase so sends spread evenly.
            let phase = i as f64 / n;
            let visitor = WsTarget {
                addr,
                path: format!("/api/v1/ws?token={}", chat.visitor_token),
                api_key: None,
                engine_io: false,
            };
            let agent = WsTarget {
                addr,
                path: "/api/v1/ws".into(),
                api_key: Some(self.key.clone()),
                engine_io: false,
            };
            let say_visitor = json!({"type": "message", "sessionId": chat.session});
            let mut say_agent = say_visitor.clone();
            say_agent["senderId"] = json!(chat.agent);
            let (c, g) = (counters.clone(), gate.clone());
            let s = chat.session.clone();
            let side = Side {
                index: 2 * i,
                target: visitor,
                session: s,
                frame: say_visitor,
                first: VISITOR_EVERY.mul_f64(phase + 0.05),
                every: VISITOR_EVERY,
            };
            tasks.push(tokio::spawn(talk(side, c, g)));
            let (c, g) = (counters.clone(), gate.clone());
            let side = Side {
                index: 2 * i + 1,
                target: agent,
                session: chat.session.clone(),
                frame: say_agent,
                first: AGENT_EVERY.mul_f64(phase + 0.05),
                every: AGENT_EVERY,
            };
            tasks.push(tokio::spawn(talk(side, c, g)));
        }
        let expected = 2 * self.chats.len() as u64;
        let deadline = Instant::now() + CONNECT_LIMIT;
        while Counters::get(&counters.connected) < expected && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        tasks
    }

    pub fn chats(&self) -> usize {
        self.chats.len()
    }

    /// Starts every stream and socket; the REST streams stop by themselves
    /// after `duration`, the sockets when [`Running::stop`] aborts them.
    pub async fn start(
        self,
        addr: SocketAddr,
        duration: Duration,
        counters: Arc<Counters>,
    ) -> Running {
        let mut tasks = self.open_chats(addr, &counters).await;
        let end = Instant::now() + duration;
        let recent: Arc<Mutex<Vec<String>>> = Arc::default();
        let (key, entity) = (self.key.clone(), self.entity.clone());
        let rest = Rest {
            addr,
            end,
            key: key.clone(),
            counters: counters.clone(),
        };
        let ticket = json!({
            "subject": "Soak ticket: the tracking page shows no update",
            "description": "Ordered on Monday, the tracking page has not moved since.",
            "priority": "MEDIUM", "entityId": entity,
        });
        let recent_w = recent.clone();
        tasks.push(rest.stream(
            1,
            5.0,
            StatusCode::CREATED,
            move |_| Some(Req::post_json("/api/v1/tickets", &ticket)),
            Some(recent_w),
        ));
        tasks.push(rest.stream(
            2,
            5.0,
            StatusCode::OK,
            |_| Some(Req::get("/api/v1/tickets?status=OPEN&limit=20")),
            None,
        ));
        let r = recent.clone();
        tasks.push(rest.stream(
            3,
            10.0,
            StatusCode::OK,
            move |k| pick(&r, k).map(|id| Req::get(format!("/api/v1/tickets/{id}"))),
            None,
        ));
        let r = recent.clone();
        tasks.push(rest.stream(
            4,
            5.0,
            StatusCode::CREATED,
            move |k| {
                pick(&r, k).map(|id| {
                    Req::post_json(
                        format!("/api/v1/tickets/{id}/comments"),
                        &json!({"body": format!("Soak comment {k}: any news on this?")}),
                    )
                })
            },
            None,
        ));
        let r = recent.clone();
        tasks.push(rest.stream(
            5,
            5.0,
            StatusCode::OK,
            move |k| pick(&r, k).map(|id| Req::get(format!("/api/v1/tickets/{id}/comments"))),
            None,
        ));
        let e = entity.clone();
        tasks.push(rest.stream(
            6,
            5.0,
            StatusCode::OK,
            move |k| {
                let term =
                    ["password+reset", "invoice", "shipping+delayed", "refund"][k as usize % 4];
                Some(Req::get(format!(
                    "/api/v1/kb/search?q={term}&entityId={e}&limit=10"
                )))
            },
            None,
        ));
        let agents = Arc::new(self.agents.clone());
        let rate = agents.len() as f64 / HEARTBEAT_EVERY.as_secs_f64();
        tasks.push(rest.stream(
            7,
            rate,
            StatusCode::OK,
            move |k| {
                let i = k as usize % agents.len();
                Some(Req::post_json(
                    "/api/v1/chat/agent-presence",
                    &json!({
                        "userId": agents[i],
                        "name": format!("Agent {}", i + 1),
                        "email": format!("agent{}@bench.example", i + 1),
                        "role": "AGENT",
                    }),
                ))
            },
            None,
        ));
        Running { tasks }
    }
}

/// Ticket `k` among the recent ones, if any was created yet.
fn pick(recent: &Mutex<Vec<String>>, k: u64) -> Option<String> {
    let recent = recent.lock().ok()?;
    if recent.is_empty() {
        return None;
    }
    recent.get(k as usize % recent.len()).cloned()
}

#[derive(Clone)]
struct Rest {
    addr: SocketAddr,
    end: Instant,
    key: String,
    counters: Arc<Counters>,
}

impl Rest {
    /// One keep-alive connection sending `make(k)` at `rate` per second
    /// until the end; a request the answer of which comes late just delays
    /// the next ones. With `created`, keeps the ids the answers carry.
    fn stream(
        &self,
        index: usize,
        rate: f64,
        expect: StatusCode,
        make: impl Fn(u64) -> Option<Req> + Send + 'static,
        created: Option<Arc<Mutex<Vec<String>>>>,
    ) -> JoinHandle<()> {
        let rest = self.clone();
        tokio::spawn(async move {
            let start = Instant::now();
            let mut conn: Option<Conn> = None;
            let mut k = 0u64;
            loop {
                let due = start + Duration::from_secs_f64(k as f64 / rate);
                if due >= rest.end {
                    return;
                }
                tokio::time::sleep_until(due).await;
                k += 1;
                let Some(req) = make(k) else { continue };
                let req = req.key(&rest.key);
                if conn.is_none() {
                    match Conn::open(400 + index, rest.addr).await {
                        Ok(c) => conn = Some(c),
                        Err(e) => {
                            rest.counters.error(format!("connecting: {e:#}"));
                            continue;
                        }
                    }
                }
                let Some(open) = conn.as_mut() else { continue };
                rest.counters.requests.fetch_add(1, Ordering::Relaxed);
                match open.send(&req).await {
                    Ok((status, body)) if status == expect => {
                        if let Some(created) = &created
                            && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body)
                            && let Some(id) = v["id"].as_str()
                            && let Ok(mut recent) = created.lock()
                        {
                            if recent.len() >= RECENT_TICKETS {
                                recent.remove(0);
                            }
                            recent.push(id.to_string());
                        }
                    }
                    Ok((status, body)) => rest.counters.error(format!(
                        "{} {} -> {status}: {}",
                        req.method,
                        req.path,
                        String::from_utf8_lossy(&body[..body.len().min(200)])
                    )),
                    Err(e) => {
                        rest.counters
                            .error(format!("{} {}: {e:#}", req.method, req.path));
                        conn = None;
                    }
                }
            }
        })
    }
}

/// One side of a chat: which socket, its session, what it sends and when.
struct Side {
    index: usize,
    target: WsTarget,
    session: String,
    frame: serde_json::Value,
    first: Duration,
    every: Duration,
}

/// One side of a chat: a socket subscribed to the session that sends
/// `frame` (with a fresh body) every `every` after `first`, and reads
/// everything pushed to it. An error frame, a close or a broken socket is
/// an error; the socket then reconnects.
async fn talk(side: Side, counters: Arc<Counters>, gate: Arc<Semaphore>) {
    let Side {
        index,
        target,
        session,
        frame,
        first,
        every,
    } = side;
    let mut next = Instant::now() + first;
    let mut sent = 0u64;
    let mut backoff = Duration::from_secs(1);
    loop {
        let opened = async {
            let _permit = gate.acquire().await?;
            let mut socket = ws::open(index, &target).await?;
            ws::subscribe(&mut socket, &format!("session:{session}")).await?;
            anyhow::Ok(socket)
        }
        .await;
        let mut socket = match opened {
            Ok(socket) => socket,
            Err(e) => {
                counters.error(format!("socket {index}: {e:#}"));
                // Back off so failed sockets do not all retry at once.
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(30));
                continue;
            }
        };
        backoff = Duration::from_secs(1);
        counters.connected.fetch_add(1, Ordering::Relaxed);
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(next) => {
                    next += every;
                    sent += 1;
                    let mut out = frame.clone();
                    out["body"] = json!(format!("Soak line {sent} of socket {index}: is my parcel on its way?"));
                    counters.frames_sent.fetch_add(1, Ordering::Relaxed);
                    if let Err(e) = socket.send(Message::text(out.to_string())).await {
                        counters.error(format!("socket {index} send: {e}"));
                        break;
                    }
                }
                message = socket.next() => match message {
                    Some(Ok(Message::Text(text))) => {
                        counters.frames_received.fetch_add(1, Ordering::Relaxed);
                        if text.as_str().contains("\"type\":\"error\"") {
                            counters.error(format!("socket {index} error frame: {}", text.as_str()));
                        }
                    }
                    Some(Ok(Message::Close(close))) => {
                        counters.error(format!("socket {index} closed by the service: {close:?}"));
                        break;
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        counters.error(format!("socket {index}: {e}"));
                        break;
                    }
                    None => {
                        counters.error(format!("socket {index} ended"));
                        break;
                    }
                }
            }
        }
        counters.connected.fetch_sub(1, Ordering::Relaxed);
    }
}
