//! WebSocket clients: a fleet of sockets that subscribe to one channel and
//! record, for every numbered message they receive, the time since it was
//! sent. The same client runs against the service and the bare server.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, http::HeaderValue};

use crate::http::connect_from;

pub type Socket = WebSocketStream<TcpStream>;

/// Where and how sockets connect.
#[derive(Clone)]
pub struct WsTarget {
    pub addr: SocketAddr,
    pub path: String,
    pub api_key: Option<String>,
    /// Socket.IO's Engine.IO v4 framing instead of the service's frames.
    pub engine_io: bool,
}

/// The path of a Socket.IO server's WebSocket transport.
pub const ENGINE_IO_PATH: &str = "/socket.io/?EIO=4&transport=websocket";

fn client_config() -> WebSocketConfig {
    // Small buffers: the client holds 10,000 sockets too.
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_message_size(Some(1 << 20))
}

/// Opens one socket from source address `index`.
pub async fn open(index: usize, target: &WsTarget) -> anyhow::Result<Socket> {
    let stream = connect_from(index, target.addr).await?;
    let mut request = format!("ws://{}{}", target.addr, target.path).into_client_request()?;
    if let Some(key) = &target.api_key {
        request
            .headers_mut()
            .insert("x-api-key", HeaderValue::from_str(key)?);
    }
    let (socket, _) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(client_config()))
            .await
            .context("websocket handshake")?;
    Ok(socket)
}

/// Sends a subscribe frame and waits for `subscribed` (other frames before it are skipped).
pub async fn subscribe(socket: &mut Socket, channel: &str) -> anyhow::Result<()> {
    let frame = serde_json::json!({"type": "subscribe", "channel": channel}).to_string();
    socket.send(Message::text(frame)).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let next = tokio::time::timeout_at(deadline, socket.next())
            .await
            .context("no answer to subscribe within 30 s")?;
        match next {
            Some(Ok(Message::Text(text))) => {
                let value: serde_json::Value =
                    serde_json::from_str(text.as_str()).unwrap_or_default();
                match value["type"].as_str() {
                    Some("subscribed") => return Ok(()),
                    Some("error") => anyhow::bail!("subscribe refused: {text}"),
                    _ => {}
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => anyhow::bail!("socket closed before subscribed"),
        }
    }
}

/// Joins Socket.IO's default namespace: the server's open packet (`0{…}`),
/// then `40` answered by `40{"sid":…}`. The server puts every socket in its
/// one room, so this is the subscription.
pub async fn join_namespace(socket: &mut Socket) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut opened = false;
    loop {
        let next = tokio::time::timeout_at(deadline, socket.next())
            .await
            .context("no Engine.IO handshake within 30 s")?;
        match next {
            Some(Ok(Message::Text(text))) => {
                let text = text.as_str();
                if !opened && text.starts_with('0') {
                    opened = true;
                    socket.send(Message::text("40")).await?;
                } else if text.starts_with("40") {
                    return Ok(());
                } else if text.starts_with("44") {
                    anyhow::bail!("namespace refused: {text}");
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => anyhow::bail!("socket closed before the namespace was joined"),
        }
    }
}

/// Marker of numbered benchmark messages: `bench-<seq, 8 digits>-`.
pub const MARK: &[u8] = b"bench-";

pub fn numbered_body(seq: u64) -> String {
    format!("bench-{seq:08}-")
}

/// The sequence number of a benchmark message in a frame, if any.
pub fn find_seq(frame: &[u8]) -> Option<u64> {
    let at = frame.windows(MARK.len()).position(|w| w == MARK)?;
    let digits = frame.get(at + MARK.len()..at + MARK.len() + 8)?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// What a fleet of subscribers has received.
pub struct Tally {
    base: Instant,
    /// Send time (ns since `base`, +1 so 0 means "not sent") per sequence number.
    sent: Vec<AtomicU64>,
    received: Vec<AtomicU64>,
    latencies: Vec<Mutex<Vec<(u32, u32)>>>,
    pub last_receive_ns: AtomicU64,
    pub closed: AtomicU64,
    pub close_reasons: Mutex<Vec<String>>,
    /// One frame as received, to size the bare server's frames alike.
    pub sample_frame: Mutex<Option<String>>,
}

const SHARDS: usize = 64;

impl Tally {
    pub fn new(max_seq: usize) -> Arc<Tally> {
        Arc::new(Tally {
            base: Instant::now(),
            sent: (0..max_seq).map(|_| AtomicU64::new(0)).collect(),
            received: (0..max_seq).map(|_| AtomicU64::new(0)).collect(),
            latencies: (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect(),
            last_receive_ns: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            close_reasons: Mutex::new(Vec::new()),
            sample_frame: Mutex::new(None),
        })
    }

    pub fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64 + 1
    }

    pub fn mark_sent(&self, seq: u64) -> u64 {
        let now = self.now_ns();
        self.sent[seq as usize].store(now, Ordering::SeqCst);
        now
    }

    pub fn received(&self, seq: u64) -> u64 {
        self.received[seq as usize].load(Ordering::SeqCst)
    }

    fn on_frame(&self, socket: usize, frame: &[u8]) {
        let Some(seq) = find_seq(frame) else { return };
        let Some(sent_slot) = self.sent.get(seq as usize) else {
            return;
        };
        let now = self.now_ns();
        let sent = sent_slot.load(Ordering::SeqCst);
        if sent == 0 {
            return;
        }
        let micros = (now.saturating_sub(sent) / 1000).min(u32::MAX as u64) as u32;
        self.latencies[socket % SHARDS]
            .lock()
            .expect("tally lock")
            .push((seq as u32, micros));
        self.received[seq as usize].fetch_add(1, Ordering::SeqCst);
        self.last_receive_ns.fetch_max(now, Ordering::SeqCst);
        if socket == 0 {
            let mut sample = self.sample_frame.lock().expect("sample lock");
            if sample.is_none() {
                *sample = Some(String::from_utf8_lossy(frame).into_owned());
            }
        }
    }

    /// Latencies (µs) of the given sequence numbers.
    pub fn latencies(&self, seqs: std::ops::Range<u64>) -> Vec<u32> {
        let mut out = Vec::new();
        for shard in &self.latencies {
            let shard = shard.lock().expect("tally lock");
            out.extend(
                shard
                    .iter()
                    .filter(|(s, _)| seqs.contains(&(*s as u64)))
                    .map(|(_, l)| *l),
            );
        }
        out
    }

    /// Waits until every seq in `seqs` was received `expected` times, or `timeout`.
    pub async fn wait_all(
        &self,
        seqs: std::ops::Range<u64>,
        expected: u64,
        timeout: Duration,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if seqs.clone().all(|s| self.received(s) >= expected) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

/// Sockets that subscribed to one channel and feed a `Tally`.
pub struct Fleet {
    tasks: Vec<JoinHandle<()>>,
    pub connected: usize,
    pub failures: Vec<String>,
}

impl Fleet {
    /// Opens `n` sockets (at most `parallel` handshakes at once); each
    /// subscribes to `channel` when given, then reads until dropped.
    pub async fn open(
        target: &WsTarget,
        n: usize,
        channel: Option<String>,
        parallel: usize,
        tally: Arc<Tally>,
    ) -> Fleet {
        let gate = Arc::new(Semaphore::new(parallel));
        let (ready_tx, mut ready_rx) = tokio::sync::mpsc::unbounded_channel();
        let mut tasks = Vec::with_capacity(n);
        for index in 0..n {
            let (target, channel, tally, gate, ready) = (
                target.clone(),
                channel.clone(),
                tally.clone(),
                gate.clone(),
                ready_tx.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let permit = gate.acquire_owned().await.expect("semaphore");
                let opened = async {
                    let mut socket = open(index, &target).await?;
                    if target.engine_io {
                        join_namespace(&mut socket).await?;
                    } else if let Some(channel) = &channel {
                        subscribe(&mut socket, channel).await?;
                    }
                    anyhow::Ok(socket)
                }
                .await;
                drop(permit);
                let mut socket = match opened {
                    Ok(socket) => {
                        let _ = ready.send(Ok(()));
                        socket
                    }
                    Err(e) => {
                        let _ = ready.send(Err(format!("{e:#}")));
                        return;
                    }
                };
                drop(ready);
                while let Some(message) = socket.next().await {
                    match message {
                        // Engine.IO's ping: unanswered, the server drops the socket.
                        Ok(Message::Text(text)) if target.engine_io && text.as_str() == "2" => {
                            if socket.send(Message::text("3")).await.is_err() {
                                break;
                            }
                        }
                        Ok(Message::Text(text)) => tally.on_frame(index, text.as_bytes()),
                        Ok(Message::Close(frame)) => {
                            let reason = frame
                                .map(|f| format!("{} {}", f.code, f.reason))
                                .unwrap_or_else(|| "no close frame".into());
                            tally.close_reasons.lock().expect("lock").push(reason);
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            tally
                                .close_reasons
                                .lock()
                                .expect("lock")
                                .push(format!("{e}"));
                            break;
                        }
                    }
                }
                tally.closed.fetch_add(1, Ordering::SeqCst);
            }));
        }
        drop(ready_tx);
        let mut fleet = Fleet {
            tasks,
            connected: 0,
            failures: Vec::new(),
        };
        while let Some(outcome) = ready_rx.recv().await {
            match outcome {
                Ok(()) => fleet.connected += 1,
                Err(e) => fleet.failures.push(e),
            }
        }
        fleet
    }

    /// Closes every socket (drops them).
    pub async fn close(self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
