//! The bare baseline for WebSocket fan-out: axum + one tokio broadcast
//! channel, nothing else (no auth, no store, no per-socket queue). It speaks
//! just enough of the service's protocol for the same client: a subscribe
//! frame gets `{"type":"subscribed"}`, and `POST /publish` broadcasts its body
//! as one text frame to every socket. Its sockets get the same buffer sizes
//! as the service's (src/realtime/ws.rs), so memory and speed compare the
//! machinery, not the buffer settings (axum's defaults cost ~134 KiB per
//! idle socket).

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use tokio::sync::broadcast;

#[derive(Clone)]
struct Hub {
    tx: broadcast::Sender<Utf8Bytes>,
}

pub async fn serve(bind: &str) -> anyhow::Result<()> {
    let (tx, _) = broadcast::channel(4096);
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/ws", get(upgrade))
        .route("/publish", post(publish))
        .with_state(Hub { tx });
    let listener = tokio::net::TcpListener::bind(bind).await?;
    axum::serve(listener, app).await?;
    Ok(())
}

async fn publish(State(hub): State<Hub>, body: Bytes) -> impl IntoResponse {
    match Utf8Bytes::try_from(body) {
        Ok(text) => {
            let receivers = hub.tx.send(text).unwrap_or(0);
            receivers.to_string().into_response()
        }
        Err(_) => (axum::http::StatusCode::BAD_REQUEST, "not UTF-8").into_response(),
    }
}

async fn upgrade(State(hub): State<Hub>, ws: WebSocketUpgrade) -> impl IntoResponse {
    ws.read_buffer_size(4096)
        .write_buffer_size(4096)
        .max_write_buffer_size(256 * 1024)
        .max_message_size(64 * 1024)
        .max_frame_size(64 * 1024)
        .on_upgrade(move |socket| run(socket, hub.tx.subscribe()))
}

async fn run(mut socket: WebSocket, mut rx: broadcast::Receiver<Utf8Bytes>) {
    loop {
        tokio::select! {
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if text.contains("\"subscribe\"") {
                        let reply = r#"{"type":"subscribed","channel":"bench"}"#;
                        if socket.send(Message::text(reply)).await.is_err() {
                            return;
                        }
                    }
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            event = rx.recv() => match event {
                Ok(text) => {
                    if socket.send(Message::Text(text)).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            },
        }
    }
}
