//! A socket client for the tests: JSON text frames, with timeouts.

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::WAIT;
use crate::support::TestApp;

pub type Stream = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A socket client that reads JSON text frames.
pub struct Client {
    pub ws: Stream,
}

fn client_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(4096)
}

impl Client {
    pub async fn connect(app: &TestApp, key: Option<&str>, token: Option<&str>) -> Client {
        Self::try_connect(app, key, token)
            .await
            .expect("socket opens")
    }

    pub async fn try_connect(
        app: &TestApp,
        key: Option<&str>,
        token: Option<&str>,
    ) -> Result<Client, tungstenite::Error> {
        let mut url = format!("ws://127.0.0.1:{}/api/v1/ws", app.port);
        if let Some(token) = token {
            url.push_str(&format!("?token={token}"));
        }
        let mut request = url.into_client_request().expect("request");
        if let Some(key) = key {
            request
                .headers_mut()
                .insert("X-API-Key", key.parse().expect("header"));
        }
        let (ws, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(client_config()), false)
                .await?;
        Ok(Client { ws })
    }

    /// A socket opened with `headers` (a session cookie and an `Origin`).
    pub async fn try_with_headers(
        app: &TestApp,
        headers: &[(&str, &str)],
    ) -> Result<Client, tungstenite::Error> {
        let url = format!("ws://127.0.0.1:{}/api/v1/ws", app.port);
        let mut request = url.into_client_request().expect("request");
        for (name, value) in headers {
            let name: tungstenite::http::HeaderName = name.parse().expect("header name");
            request
                .headers_mut()
                .insert(name, value.parse().expect("header value"));
        }
        let (ws, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(client_config()), false)
                .await?;
        Ok(Client { ws })
    }

    pub async fn key(app: &TestApp, key: &str) -> Client {
        Self::connect(app, Some(key), None).await
    }

    pub async fn token(app: &TestApp, token: &str) -> Client {
        Self::connect(app, None, Some(token)).await
    }

    pub async fn send(&mut self, frame: Value) {
        self.ws
            .send(Message::text(frame.to_string()))
            .await
            .expect("frame sent");
    }

    /// The next JSON frame (pings and pongs skipped).
    pub async fn next(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a frame before the timeout")
                .expect("socket open")
                .expect("frame read");
            match message {
                Message::Text(text) => return serde_json::from_str(&text).expect("JSON frame"),
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    /// The next frame of `kind`, skipping others (e.g. a presence snapshot).
    pub async fn next_of(&mut self, kind: &str) -> Value {
        self.next_where(|frame| frame["type"] == kind).await
    }

    /// The next frame that `awaited` picks, skipping the others: for a
    /// frame that may legitimately come after others of its kind (one
    /// published before the socket subscribed can still be on its way).
    pub async fn next_where(&mut self, awaited: impl Fn(&Value) -> bool) -> Value {
        loop {
            let frame = self.next().await;
            if awaited(&frame) {
                return frame;
            }
        }
    }

    /// The server's close frame (code, reason), arriving by `deadline`
    /// before any other JSON frame (pings and pongs skipped).
    pub async fn closed_by(&mut self, deadline: tokio::time::Instant) -> (u16, String) {
        loop {
            let message = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .expect("closed before the deadline")
                .expect("a close frame before the end of the stream")
                .expect("frame read");
            match message {
                Message::Close(Some(frame)) => {
                    return (frame.code.into(), frame.reason.to_string());
                }
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("a frame before the close: {other:?}"),
            }
        }
    }

    /// The server's close frame (code, reason) by `deadline`, whatever
    /// frames come before it: for a close that follows other traffic.
    pub async fn closed_after_any_by(&mut self, deadline: tokio::time::Instant) -> (u16, String) {
        loop {
            let message = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .expect("closed before the deadline")
                .expect("a close frame before the end of the stream")
                .expect("frame read");
            if let Message::Close(Some(frame)) = message {
                return (frame.code.into(), frame.reason.to_string());
            }
        }
    }

    pub async fn subscribe(&mut self, channel: &str) {
        self.send(json!({"type": "subscribe", "channel": channel}))
            .await;
        let reply = self.next().await;
        assert_eq!(reply["type"], "subscribed", "reply {reply}");
        assert_eq!(reply["channel"], channel);
    }

    /// Proves that nothing was queued before `marker` reaches this socket:
    /// the next frame is the marker (a ping answered with a pong).
    pub async fn assert_nothing_before_pong(&mut self) {
        self.send(json!({"type": "ping", "id": "marker"})).await;
        let frame = self.next().await;
        assert_eq!(frame, json!({"type": "pong", "id": "marker"}));
    }
}
