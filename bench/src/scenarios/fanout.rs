//! The fan-out measurement of scenario 5, run alike against the service and
//! the bare server.

use std::time::Duration;

use hyper::StatusCode;

use super::{Ctx, hist_of};
use crate::http::{Conn, Req};
use crate::process::Server;
use crate::stats::{fmt_kib, quantile_ms};
use crate::ws::{Fleet, Tally, WsTarget};

impl Ctx {
    /// Connects `self.sockets` subscribers, measures memory, then sends
    /// single numbered messages and a burst.
    pub(super) async fn fanout(
        &self,
        server: &Server,
        target: WsTarget,
        channel: Option<String>,
        publish: &dyn Fn(u64, &Option<String>) -> Req,
        expect: StatusCode,
        template: Option<String>,
    ) -> anyhow::Result<Fanout> {
        const SINGLES: u64 = 10;
        const BURST: u64 = 20;
        const BURST_FROM: u64 = 100;
        let sampler = server.sampler();
        let tally = Tally::new(1000);
        // Settle, then the memory before any socket.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rss_before = server.rss_kib();
        let fleet = Fleet::open(&target, self.sockets, channel.clone(), 64, tally.clone()).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let rss_after = server.rss_kib();
        let connected = fleet.connected.max(1);
        let failed = fleet.failures.len();
        let first_failure = fleet.failures.first().cloned();
        eprintln!(
            "  {}: {} sockets connected ({} failed), RSS {} -> {}",
            server.name,
            fleet.connected,
            fleet.failures.len(),
            fmt_kib(rss_before as f64),
            fmt_kib(rss_after as f64)
        );
        anyhow::ensure!(
            fleet.connected > 0,
            "no socket connected: {:?}",
            fleet.failures.first()
        );
        let mut conn = Conn::open(250, server.addr).await?;
        // Single messages, one at a time.
        let mut all_received = Vec::new();
        let mut frame = template;
        for seq in 0..SINGLES {
            let req = publish(seq, &frame);
            tally.mark_sent(seq);
            let (status, body) = conn.send(&req).await?;
            anyhow::ensure!(
                status == expect,
                "publish answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
            let complete = tally
                .wait_all(
                    seq..seq + 1,
                    fleet.connected as u64,
                    Duration::from_secs(15),
                )
                .await;
            let lat = tally.latencies(seq..seq + 1);
            all_received.push(lat.iter().copied().max().unwrap_or(0));
            if !complete {
                eprintln!(
                    "  {}: message {seq} reached {} of {} sockets",
                    server.name,
                    tally.received(seq),
                    fleet.connected
                );
            }
            if frame.is_none() {
                frame = tally.sample_frame.lock().expect("lock").clone();
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        // A burst: BURST messages back to back.
        let first_sent = tally.now_ns();
        for seq in BURST_FROM..BURST_FROM + BURST {
            let req = publish(seq, &frame);
            tally.mark_sent(seq);
            let (status, _) = conn.send(&req).await?;
            anyhow::ensure!(status == expect, "burst publish answered {status}");
        }
        tally
            .wait_all(
                BURST_FROM..BURST_FROM + BURST,
                fleet.connected as u64,
                Duration::from_secs(60),
            )
            .await;
        let burst_received: u64 = (BURST_FROM..BURST_FROM + BURST)
            .map(|s| tally.received(s))
            .sum();
        let last = tally
            .last_receive_ns
            .load(std::sync::atomic::Ordering::SeqCst);
        let burst_secs = (last.saturating_sub(first_sent)) as f64 / 1e9;
        let single_hist = hist_of(&tally.latencies(0..SINGLES));
        let burst_hist = hist_of(&tally.latencies(BURST_FROM..BURST_FROM + BURST));
        all_received.sort_unstable();
        let closed = tally.closed.load(std::sync::atomic::Ordering::SeqCst);
        let close_reason = tally.close_reasons.lock().expect("lock").first().cloned();
        let sample_frame = tally.sample_frame.lock().expect("lock").clone();
        let peak_rss_kib = sampler.peak_kib();
        fleet.close().await;
        Ok(Fanout {
            connected,
            failed,
            first_failure,
            kib_per_socket: rss_after.saturating_sub(rss_before) as f64 / connected as f64,
            p50_ms: quantile_ms(&single_hist, 0.5),
            p99_ms: quantile_ms(&single_hist, 0.99),
            all_received_ms: all_received
                .get(all_received.len() / 2)
                .copied()
                .unwrap_or(0) as f64
                / 1000.0,
            burst_rate: if burst_secs > 0.0 {
                burst_received as f64 / burst_secs
            } else {
                f64::NAN
            },
            burst_p50_ms: quantile_ms(&burst_hist, 0.5),
            burst_p99_ms: quantile_ms(&burst_hist, 0.99),
            burst_received,
            burst_expected: BURST * connected as u64,
            closed,
            close_reason,
            frame_len: sample_frame.as_ref().map_or(0, |f| f.len()),
            sample_frame,
            peak_rss_kib,
        })
    }
}

/// What [`Ctx::fanout`] measured on one server.
pub(super) struct Fanout {
    pub(super) connected: usize,
    pub(super) failed: usize,
    pub(super) first_failure: Option<String>,
    pub(super) kib_per_socket: f64,
    pub(super) p50_ms: f64,
    pub(super) p99_ms: f64,
    pub(super) all_received_ms: f64,
    pub(super) burst_rate: f64,
    pub(super) burst_p50_ms: f64,
    pub(super) burst_p99_ms: f64,
    pub(super) burst_received: u64,
    pub(super) burst_expected: u64,
    pub(super) closed: u64,
    pub(super) close_reason: Option<String>,
    pub(super) frame_len: usize,
    pub(super) sample_frame: Option<String>,
    pub(super) peak_rss_kib: u64,
}
