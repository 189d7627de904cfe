//! Private dependencies and service processes for the fault tests. The
//! shared Postgres (5432) and Redis (6379) are never touched: each test
//! starts its own Redis or Postgres cluster on a free loopback port, and
//! stops or restarts only that one.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::support::{Backend, eventually, eventually_within};

/// True when the environment says missing tools must fail, not skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Skips (with a notice) or, in CI, fails when `what` is missing.
pub fn missing(what: &str) -> bool {
    assert!(!in_ci(), "CI=true needs {what} for the fault tests");
    eprintln!("fault test skipped: {what} is not installed");
    true
}

/// The backend the fault tests run the service on: Postgres (with the
/// test's private Redis) when Postgres is configured, else SQLite.
pub fn main_backend() -> Backend {
    if std::env::var("TEST_DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

// ------------------------------------------------------------------ Redis

/// A Redis server of our own (no persistence), stopped on drop.
pub struct PrivateRedis {
    pub port: u16,
    child: Option<Child>,
}

impl PrivateRedis {
    /// None (after a notice) when `redis-server` is not installed.
    pub async fn start() -> Option<PrivateRedis> {
        if !have("redis-server") && missing("redis-server") {
            return None;
        }
        let mut redis = PrivateRedis {
            port: free_port(),
            child: None,
        };
        redis.resume().await;
        Some(redis)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts it again on the same port (empty: nothing was saved).
    pub async fn resume(&mut self) {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let port = self.port;
        eventually_within(
            "private redis answers PING",
            Duration::from_secs(10),
            || redis_ping(port),
        )
        .await;
    }

    /// Kills it (like a crash: no shutdown handshake).
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}

async fn redis_ping(port: u16) -> bool {
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    if stream.write_all(b"PING\r\n").await.is_err() {
        return false;
    }
    let mut reply = [0u8; 7];
    matches!(
        tokio::time::timeout(Duration::from_secs(1), stream.read(&mut reply)).await,
        Ok(Ok(n)) if reply[..n].starts_with(b"+PONG")
    )
}

// --------------------------------------------------------------- Postgres

/// A Postgres cluster of our own in a temp dir, run as the `postgres` user
/// (Postgres refuses root), stopped on drop.
pub struct PrivatePostgres {
    pub port: u16,
    bin: PathBuf,
    dir: tempfile::TempDir,
}

fn postgres_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("initdb").exists() && p.join("pg_ctl").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn as_postgres(program: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("runuser");
    command.args(["-u", "postgres", "--"]).arg(program);
    command
}

impl PrivatePostgres {
    /// None (after a notice) when the Postgres server binaries are missing.
    pub async fn start() -> Option<PrivatePostgres> {
        let Some(bin) = postgres_bin() else {
            missing("the Postgres server (initdb, pg_ctl)");
            return None;
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let status = std::process::Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir.path())
            .status()
            .expect("chown");
        assert!(status.success(), "chown the cluster dir to postgres");
        let pg = PrivatePostgres {
            port: free_port(),
            bin,
            dir,
        };
        let output = as_postgres(&pg.bin.join("initdb"))
            .args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(pg.data())
            .output()
            .expect("initdb runs");
        assert!(
            output.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        pg.pg_ctl_start();
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn pg_ctl_start(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=60",
            self.port,
            self.dir.path().display()
        );
        let output = as_postgres(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.path().join("log"))
            .args(["-w", "-t", "60", "-o", &options, "start"])
            .output()
            .expect("pg_ctl start runs");
        assert!(
            output.status.success(),
            "pg_ctl start: {} {}",
            String::from_utf8_lossy(&output.stdout),
            std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
        );
    }

    /// Stops it the hard way (`immediate`: no checkpoint, connections cut,
    /// recovery from the WAL on the next start).
    pub fn stop_immediately(&self) {
        let _ = as_postgres(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["-w", "-m", "immediate", "stop"])
            .output();
    }

    pub fn start_again(&self) {
        self.pg_ctl_start();
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        self.stop_immediately();
    }
}

// --------------------------------------------------------------- service

/// The real `supportdesk` binary as a child process, its output in a file.
pub struct ServiceProcess {
    pub port: u16,
    child: Child,
}

impl ServiceProcess {
    /// Runs `supportdesk <args>` to completion with `env`; its stdout.
    pub fn run(env: &[(&str, String)], args: &[&str]) -> String {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_supportdesk"))
            .args(args)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env_remove("REDIS_URL")
            .output()
            .expect("supportdesk runs");
        assert!(
            output.status.success(),
            "supportdesk {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Migrates, then creates a company named `name`, an entity and an
    /// all-scope TEST key through the CLI: (company id, entity id, key).
    pub fn provision(env: &[(&str, String)], name: &str) -> (String, String, String) {
        let json = |args: &[&str]| -> serde_json::Value {
            serde_json::from_str(&Self::run(env, args)).expect("CLI prints JSON")
        };
        Self::run(env, &["migrate"]);
        let company = json(&["companies", "create", "--name", name, "--json"]);
        let company = company["id"].as_str().expect("company id").to_string();
        let entity = json(&[
            "entities",
            "create",
            "--company",
            &company,
            "--name",
            "Main",
            "--json",
        ]);
        let entity = entity["id"].as_str().expect("entity id").to_string();
        let key = json(&[
            "keys",
            "create",
            "--company",
            &company,
            "--type",
            "test",
            "--scopes",
            "all",
            "--json",
        ]);
        let key = key["key"].as_str().expect("key").to_string();
        (company, entity, key)
    }

    /// `supportdesk serve` on `port`, output appended to `log`.
    pub async fn serve(env: &[(&str, String)], port: u16, log: &Path) -> ServiceProcess {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_supportdesk"))
            .arg("serve")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env_remove("REDIS_URL")
            .env("SUPPORTDESK_BIND", format!("127.0.0.1:{port}"))
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .kill_on_drop(true)
            .spawn()
            .expect("supportdesk serve starts");
        let url = format!("http://127.0.0.1:{port}/healthz");
        eventually_within(
            "the service answers /healthz",
            Duration::from_secs(30),
            || {
                let url = url.clone();
                async move { reqwest::get(&url).await.is_ok_and(|r| r.status() == 200) }
            },
        )
        .await;
        ServiceProcess { port, child }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// SIGKILL: no shutdown, no draining.
    pub async fn kill(mut self) {
        self.child.kill().await.expect("SIGKILL");
    }

    /// SIGTERM, and returns once the process has exited: it has finished
    /// its requests and written all it will to its log.
    pub async fn stop(mut self) {
        let pid = self.child.id().expect("the service runs");
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM sent");
        eventually("the service exits", async || {
            self.child.try_wait().expect("service status").is_some()
        })
        .await;
    }
}
