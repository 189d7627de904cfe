//! Server processes under test (the service, the bare WebSocket server,
//! the Socket.IO peer):
//! start, wait until they answer, memory from /proc, stop.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::process::{Child, Command};

use crate::http::{Conn, Req};

/// How the service is started for a scenario.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    pub bin: PathBuf,
    pub database_url: String,
    /// None: in-process limiter, bus and presence.
    pub redis_url: Option<String>,
    pub redis_prefix: String,
    pub data_dir: PathBuf,
    pub presence_ttl_secs: Option<u64>,
    /// Serve Prometheus metrics (`SUPPORTDESK_METRICS_BIND` on a free port),
    /// which also turns recording on.
    pub metrics: bool,
}

pub struct Server {
    pub name: String,
    child: Child,
    pub pid: u32,
    pub addr: SocketAddr,
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

impl Server {
    /// Starts the service with `config`, its log in `log_dir/<name>.log`.
    pub async fn service(
        name: &str,
        config: &ServiceConfig,
        log_dir: &Path,
    ) -> anyhow::Result<Server> {
        Server::service_with_env(name, config, &[], log_dir).await
    }

    /// As [`Server::service`], with more environment variables (settings the
    /// scenarios leave at their defaults, e.g. the soak's short retention).
    pub async fn service_with_env(
        name: &str,
        config: &ServiceConfig,
        env: &[(&str, String)],
        log_dir: &Path,
    ) -> anyhow::Result<Server> {
        let port = free_port()?;
        let mut command = Command::new(&config.bin);
        command
            .arg("serve")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", &config.database_url)
            .env("SUPPORTDESK_BIND", format!("127.0.0.1:{port}"))
            .env("SUPPORTDESK_REDIS_PREFIX", &config.redis_prefix)
            .env("SUPPORTDESK_DATA_DIR", &config.data_dir)
            .env(
                "RUST_LOG",
                std::env::var("BENCH_SERVICE_LOG").unwrap_or_else(|_| "info".into()),
            );
        if let Some(url) = &config.redis_url {
            command.env("REDIS_URL", url);
        }
        if config.metrics {
            command.env(
                "SUPPORTDESK_METRICS_BIND",
                format!("127.0.0.1:{}", free_port()?),
            );
        }
        if let Some(ttl) = config.presence_ttl_secs {
            command.env("SUPPORTDESK_PRESENCE_TTL_SECS", ttl.to_string());
        }
        for (name, value) in env {
            command.env(name, value);
        }
        Server::spawn(name, command, port, log_dir).await
    }

    /// Starts the bare axum broadcast server (this binary, `bare-server`).
    pub async fn bare(log_dir: &Path) -> anyhow::Result<Server> {
        let port = free_port()?;
        let mut command = Command::new(std::env::current_exe()?);
        command
            .arg("bare-server")
            .arg("--bind")
            .arg(format!("127.0.0.1:{port}"));
        Server::spawn("bare-ws", command, port, log_dir).await
    }

    /// Starts the Socket.IO peer (`node server.js` in `dir`, its packages
    /// installed there by `bench/run.sh --peers`).
    pub async fn socketio(dir: &Path, log_dir: &Path) -> anyhow::Result<Server> {
        anyhow::ensure!(
            dir.join("node_modules/socket.io").is_dir(),
            "Socket.IO is not installed in {} (bench/run.sh --peers runs npm ci there)",
            dir.display()
        );
        let port = free_port()?;
        let mut command = Command::new("node");
        command
            .current_dir(dir)
            .arg("server.js")
            .arg("--port")
            .arg(port.to_string());
        Server::spawn("socketio", command, port, log_dir).await
    }

    async fn spawn(
        name: &str,
        mut command: Command,
        port: u16,
        log_dir: &Path,
    ) -> anyhow::Result<Server> {
        std::fs::create_dir_all(log_dir)?;
        let log_path = log_dir.join(format!("{name}.log"));
        let log = std::fs::File::create(&log_path)?;
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true);
        let child = command
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        let pid = child.id().context("child pid")?;
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
        let mut server = Server {
            name: name.to_string(),
            child,
            pid,
            addr,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = server.child.try_wait()? {
                anyhow::bail!(
                    "{name} exited with {status} while starting; see {}",
                    log_path.display()
                );
            }
            if let Ok(mut conn) = Conn::open(0, addr).await
                && let Ok((status, _)) = conn.send(&Req::get("/healthz")).await
                && status.is_success()
            {
                return Ok(server);
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "{name} did not answer /healthz within 60 s; see {}",
                log_path.display()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.pid).unwrap_or(0)
    }

    /// Starts sampling this process's RSS every 50 ms.
    pub fn sampler(&self) -> RssSampler {
        RssSampler::start(self.pid)
    }

    /// SIGTERM, then SIGKILL after 10 s.
    pub async fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(self.pid.to_string())
            .status();
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            eprintln!("  {} did not stop within 10 s; killing it", self.name);
            let _ = self.child.kill().await;
        }
    }
}

/// VmRSS of `pid` in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_field(pid, "VmRSS:")
}

fn status_field(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Peak of VmRSS over a scenario (VmHWM would be the peak over the whole
/// life of the process, and the service lives across several scenarios).
pub struct RssSampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let peak = Arc::new(AtomicU64::new(rss_kib(pid).unwrap_or(0)));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (peak.clone(), stop.clone());
        tokio::spawn(async move {
            while !s.load(Ordering::Relaxed) {
                if let Some(rss) = rss_kib(pid) {
                    p.fetch_max(rss, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        RssSampler { peak, stop }
    }

    pub fn peak_kib(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// CPU time (user + system) of `pid` so far, seconds.
pub fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}
