//! Scenario 5 against Socket.IO (`--peers`): the same fan-out measurement on
//! a Node.js Socket.IO server (bench/peers/socketio/server.js, WebSocket
//! transport, one room), its clients speaking Engine.IO v4 from the same
//! Rust client as the service's, with events of the same size as the
//! service's `chat.message` frame.

use std::path::Path;

use hyper::StatusCode;
use serde_json::Value;

use super::Ctx;
use super::fanout::Fanout;
use super::rows::{RowBuilder, ratio};
use super::websocket::frame_for;
use crate::http::Req;
use crate::process::Server;
use crate::stats::{fmt_kib, fmt_ms, fmt_rate};
use crate::ws::{ENGINE_IO_PATH, WsTarget};

/// What Socket.IO wraps around an event's data on the wire.
const ENVELOPE: &str = r#"42["chat.message",]"#;

impl Ctx {
    /// Runs the fan-out on the Socket.IO server in `dir` and adds the rows
    /// comparing `ours` (the service's run) with it.
    pub(super) async fn socketio_rows(
        &mut self,
        dir: &Path,
        ours: &Fanout,
        template: Option<String>,
    ) -> anyhow::Result<()> {
        let server = Server::socketio(dir, &self.out_dir.join("logs")).await?;
        let target = WsTarget {
            addr: server.addr,
            path: ENGINE_IO_PATH.into(),
            api_key: None,
            engine_io: true,
        };
        let publish = |seq: u64, frame: &Option<String>| Req {
            method: hyper::Method::POST,
            path: "/publish".into(),
            headers: vec![("content-type", "application/json".into())],
            body: Some(bytes::Bytes::from(socketio_data(seq, frame.as_deref()))),
        };
        let result = self
            .fanout(&server, target, None, &publish, StatusCode::OK, template)
            .await;
        server.stop().await;
        let theirs = result?;
        let version = socketio_version(dir).unwrap_or_else(|| "?".into());
        let n = self.sockets;
        self.note(format!(
            "scenario 5 Socket.IO {version} (Node {}): {} of {n} sockets connected ({} failed), {} closed during the run; frame of {} bytes (ours {}); time until all received p50 {} (ours {}); burst: {} of {} deliveries",
            node_version().unwrap_or_else(|| "?".into()),
            theirs.connected,
            theirs.failed,
            theirs.closed,
            theirs.frame_len,
            ours.frame_len,
            fmt_ms(theirs.all_received_ms),
            fmt_ms(ours.all_received_ms),
            theirs.burst_received,
            theirs.burst_expected,
        ));
        let label = format!("Socket.IO {version}");
        let complete = theirs.connected == n && ours.connected == n;
        let memory = ratio(ours.kib_per_socket, theirs.kib_per_socket);
        self.rows.push(
            RowBuilder::new(format!(
                "5 idle memory per socket vs Socket.IO ({n} sockets)"
            ))
            .service(fmt_kib(ours.kib_per_socket))
            .baseline(format!("{} ({label})", fmt_kib(theirs.kib_per_socket)))
            .ratio_times(memory)
            .met_if("≤ 0.6× Socket.IO's", complete && memory <= 0.6)
            .rss_kib(ours.peak_rss_kib)
            .build(),
        );
        let p99 = ratio(ours.p99_ms, theirs.p99_ms);
        self.rows.push(
            RowBuilder::new(format!(
                "5 fan-out of one message to {n} sockets vs Socket.IO, p99"
            ))
            .service(fmt_ms(ours.p99_ms))
            .baseline(format!("{} ({label})", fmt_ms(theirs.p99_ms)))
            .ratio_times(p99)
            .met_if("≤ 0.6× Socket.IO's", complete && p99 <= 0.6)
            .latency(format!(
                "{} / {} ({} / {}); all received after {} ({})",
                fmt_ms(ours.p50_ms),
                fmt_ms(ours.p99_ms),
                fmt_ms(theirs.p50_ms),
                fmt_ms(theirs.p99_ms),
                fmt_ms(ours.all_received_ms),
                fmt_ms(theirs.all_received_ms)
            ))
            .rss_kib(ours.peak_rss_kib)
            .build(),
        );
        let burst = ratio(ours.burst_rate, theirs.burst_rate);
        self.rows.push(
            RowBuilder::new(format!(
                "5 burst fan-out to {n} sockets vs Socket.IO, deliveries/s"
            ))
            .service(fmt_rate(ours.burst_rate, "/s"))
            .baseline(format!("{} ({label})", fmt_rate(theirs.burst_rate, "/s")))
            .ratio_times(burst)
            .met_if(
                "≥ 2× Socket.IO's",
                burst >= 2.0 && ours.burst_received == ours.burst_expected,
            )
            .latency(format!(
                "{} / {} ({} / {})",
                fmt_ms(ours.burst_p50_ms),
                fmt_ms(ours.burst_p99_ms),
                fmt_ms(theirs.burst_p50_ms),
                fmt_ms(theirs.burst_p99_ms)
            ))
            .rss_kib(ours.peak_rss_kib)
            .build(),
        );
        Ok(())
    }
}

/// The data the Socket.IO server emits for `seq`: the `data` of the
/// service's frame, its body padded so that the event on the wire
/// (`42["chat.message",{…}]`) is as long as the service's frame.
fn socketio_data(seq: u64, template: Option<&str>) -> String {
    let frame = frame_for(seq, template);
    let Ok(Value::Object(mut whole)) = serde_json::from_str::<Value>(&frame) else {
        return frame;
    };
    let Some(mut data) = whole.remove("data") else {
        return frame;
    };
    let short = frame
        .len()
        .saturating_sub(ENVELOPE.len() + data.to_string().len());
    if let Some(Value::String(body)) = data.get_mut("body") {
        body.push_str(&" ".repeat(short));
    }
    data.to_string()
}

fn socketio_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("node_modules/socket.io/package.json")).ok()?;
    let manifest: Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_string)
}

fn node_version() -> Option<String> {
    let output = std::process::Command::new("node")
        .arg("--version")
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socketio_event_is_as_long_as_the_service_frame() {
        let frame = frame_for(7, None);
        let event = format!("42[\"chat.message\",{}]", socketio_data(7, None));
        assert_eq!(event.len(), frame.len());
    }
}
