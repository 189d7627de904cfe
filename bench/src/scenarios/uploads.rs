//! Scenario 11: 20 uploads of 20 MiB at once. The service streams each body
//! to disk in small chunks, so its RSS should rise by less than 64 MiB
//! (far less than the 400 MiB sent); its throughput is set against `dd`
//! writing the same bytes, 20 writers at once, to the same disk.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::{Method, StatusCode};
use tokio::io::AsyncWriteExt;
use tokio::task::JoinSet;

use super::Ctx;
use crate::http::{Conn, Req};
use crate::report::{Row, verdict};

const FILES: usize = 20;
const FILE_BYTES: usize = 20 * 1024 * 1024;
const RSS_RISE_TARGET_MIB: f64 = 64.0;

impl Ctx {
    pub async fn uploads(&mut self) -> anyhow::Result<()> {
        // Distinct bytes per file: the service stores each (no dedupe).
        let files: Vec<Bytes> = (0..FILES).map(|i| file_bytes(i as u64)).collect();
        let server = self.start("s11-service", &self.service).await?;
        // One small upload first, so the path's one-time allocations are
        // in the baseline RSS, not in the rise.
        let mut conn = Conn::open(0, server.addr).await?;
        conn.json(
            &upload(self.key(), 999, Bytes::from_static(b"warm")),
            StatusCode::CREATED,
        )
        .await?;
        let before_kib = server.rss_kib();
        let sampler = server.sampler();
        let started = Instant::now();
        let mut uploads = JoinSet::new();
        for (i, body) in files.iter().enumerate() {
            let req = upload(self.key(), i, body.clone());
            let addr = server.addr;
            uploads.spawn(async move {
                let mut conn = Conn::open(i, addr).await?;
                conn.json(&req, StatusCode::CREATED).await
            });
        }
        while let Some(done) = uploads.join_next().await {
            done??;
        }
        let service_secs = started.elapsed();
        let peak_kib = sampler.peak_kib();
        drop(sampler);
        server.stop().await;

        let dd_secs = dd_in_parallel(&self.service.data_dir, &files).await?;
        let rise_mib = peak_kib.saturating_sub(before_kib) as f64 / 1024.0;
        let total_mib = (FILES * FILE_BYTES) as f64 / (1024.0 * 1024.0);
        let service_rate = total_mib / service_secs.as_secs_f64();
        let dd_rate = total_mib / dd_secs.as_secs_f64();
        self.notes.push(format!(
            "scenario 11: {FILES} uploads of {} MiB in {:.2} s; RSS {} KiB before, peak {} KiB; dd of the same bytes (20 writers, no sync, like the service) in {:.2} s",
            FILE_BYTES / (1024 * 1024),
            service_secs.as_secs_f64(),
            before_kib,
            peak_kib,
            dd_secs.as_secs_f64()
        ));
        self.rows.push(Row {
            scenario: format!(
                "11 {FILES} parallel uploads of 20 MiB (`POST /api/v1/attachments`, raw body) vs `dd` of the same bytes"
            ),
            service: format!("{service_rate:.0} MiB/s, RSS +{rise_mib:.1} MiB"),
            baseline: format!("dd {dd_rate:.0} MiB/s"),
            ratio: format!("{:.0}%", 100.0 * service_rate / dd_rate),
            target: format!("RSS rise < {RSS_RISE_TARGET_MIB:.0} MiB"),
            verdict: verdict(rise_mib < RSS_RISE_TARGET_MIB),
            latency: "–".into(),
            rss: format!("{:.1} MiB peak", peak_kib as f64 / 1024.0),
        });
        Ok(())
    }
}

fn upload(key: &str, index: usize, body: Bytes) -> Req {
    Req {
        method: Method::POST,
        path: format!("/api/v1/attachments?filename=bench-{index}.bin"),
        headers: vec![
            ("content-type", "application/octet-stream".into()),
            ("x-api-key", key.to_string()),
        ],
        body: Some(body),
    }
}

/// 20 MiB that differ per `seed` and do not compress (xorshift).
fn file_bytes(seed: u64) -> Bytes {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut bytes = Vec::with_capacity(FILE_BYTES);
    while bytes.len() < FILE_BYTES {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(FILE_BYTES);
    Bytes::from(bytes)
}

/// Writes each file with its own `dd` (stdin to a file beside the service's
/// data), all at once; answers the time until the last one is done.
async fn dd_in_parallel(dir: &Path, files: &[Bytes]) -> anyhow::Result<Duration> {
    let target = dir.join("dd-bench");
    tokio::fs::create_dir_all(&target).await?;
    let started = Instant::now();
    let mut writers = JoinSet::new();
    for (i, body) in files.iter().enumerate() {
        let body = body.clone();
        let out = target.join(format!("dd-{i}.bin"));
        writers.spawn(async move {
            let mut child = tokio::process::Command::new("dd")
                .arg(format!("of={}", out.display()))
                .arg("bs=1M")
                .arg("iflag=fullblock")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(&body).await?;
            }
            let status = child.wait().await?;
            anyhow::ensure!(status.success(), "dd exited with {status}");
            anyhow::Ok(())
        });
    }
    while let Some(done) = writers.join_next().await {
        done??;
    }
    let elapsed = started.elapsed();
    tokio::fs::remove_dir_all(&target).await?;
    Ok(elapsed)
}
