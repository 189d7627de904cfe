//! `sdbench all …`: seeds a fresh database, runs every scenario of the
//! supportdesk benchmark with its baseline beside it, and writes the table
//! (bench/run.sh prepares the database and calls it).
//! `sdbench bare-server --bind ADDR`: the bare WebSocket broadcast baseline.
//! `sdbench recall --service-bin PATH`: retrieval quality of the knowledge
//! base over bench/kb's labelled questions.

mod bare;
mod http;
mod pgbench;
mod process;
mod recall;
mod report;
mod runs;
mod scenarios;
mod setup;
mod soak;
mod stats;
mod ws;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};

use crate::http::Load;
use crate::process::ServiceConfig;
use crate::report::{Environment, Row};
use crate::scenarios::{AssignmentChannel, Ctx};

#[derive(Parser)]
#[command(name = "sdbench", about = "supportdesk benchmark")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Seed and run the scenarios, write the report.
    All(Box<AllArgs>),
    /// One service process under a mixed load for a long time (`run.sh --soak 30m`).
    Soak(Box<soak::SoakArgs>),
    /// Recall@1 and @3 of today's KB search and of the retrieval tuned for
    /// questions, over the labelled questions of bench/kb.
    Recall(Box<recall::RecallArgs>),
    /// The bare axum + tokio broadcast WebSocket server (baseline of scenario 5).
    BareServer {
        #[arg(long)]
        bind: String,
    },
    /// One closed-loop HTTP load against a running server (for profiling:
    /// run `perf record -p <service pid>` meanwhile).
    Load {
        /// e.g. 127.0.0.1:8080
        #[arg(long)]
        addr: std::net::SocketAddr,
        /// Path and query, e.g. `/api/v1/tickets?status=OPEN`.
        #[arg(long)]
        path: String,
        #[arg(long)]
        key: Option<String>,
        /// A `Cookie` header (`sd_session=…`: an agent's session).
        #[arg(long)]
        cookie: Option<String>,
        /// A JSON body makes it a POST.
        #[arg(long)]
        body: Option<String>,
        #[arg(long, default_value_t = 16)]
        conns: usize,
        #[arg(long, default_value_t = 10)]
        secs: u64,
        /// The status a response must have to count (default: 201 for a
        /// POST, else 200), e.g. 404 for a path no route serves.
        #[arg(long)]
        expect: Option<u16>,
    },
}

#[derive(clap::Args)]
struct AllArgs {
    /// The service's release binary.
    #[arg(long)]
    service_bin: PathBuf,
    /// A fresh, empty database (run.sh creates and drops it).
    #[arg(long)]
    database_url: String,
    #[arg(long)]
    redis_url: String,
    #[arg(long)]
    redis_prefix: String,
    /// bench/sql: seeds and pgbench scripts.
    #[arg(long)]
    sql_dir: PathBuf,
    /// Logs, pgbench logs, the service's data dir.
    #[arg(long)]
    out_dir: PathBuf,
    /// Where to write the markdown report.
    #[arg(long)]
    results: PathBuf,
    /// Connections (HTTP) and clients (pgbench) of the throughput scenarios.
    #[arg(long, default_value_t = 16)]
    conns: usize,
    /// Warm-up of each slice (not measured).
    #[arg(long, default_value_t = 1)]
    warmup_secs: u64,
    /// Measured seconds per side (service, baseline) of a throughput scenario.
    #[arg(long, default_value_t = 20)]
    duration_secs: u64,
    /// The service and its baseline alternate in this many slices.
    #[arg(long, default_value_t = 4)]
    slices: u32,
    #[arg(long, default_value_t = 10_000)]
    sockets: usize,
    #[arg(long, default_value_t = 1_000)]
    idle_sockets: usize,
    /// SUPPORTDESK_PRESENCE_TTL_SECS for scenario 7 (default 30).
    #[arg(long, default_value_t = 30)]
    presence_ttl: u64,
    #[arg(long, default_value_t = 15)]
    heartbeat_secs: u64,
    #[arg(long, default_value_t = 2)]
    heartbeat_rounds: u32,
    /// Tickets of scenario 10's large company.
    #[arg(long, default_value_t = 1_000_000)]
    scale_tickets: u64,
    /// Scenarios to run, e.g. `1,2,5` (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<u32>,
    /// Runs of each scenario; a row shows the median run with the range.
    /// Default 3, or 1 with `--only`.
    #[arg(long)]
    runs: Option<u32>,
    /// Scenario 5 also against Socket.IO (bench/peers/socketio, installed by
    /// `run.sh --peers`).
    #[arg(long)]
    peers: bool,
    #[arg(long, default_value = "bench/peers")]
    peers_dir: PathBuf,
    /// A second service binary: scenarios 3 and 5 then compare the two
    /// binaries (A = --service-bin, B = this) instead of the baselines.
    #[arg(long)]
    ab_bin: Option<PathBuf>,
    /// Where scenario 13's consoles hear their assignments: `agent` (each
    /// its own `agent:<userId>` channel) or `entity` (all on the team's
    /// entity channel).
    #[arg(long, value_enum, default_value_t = AssignmentChannel::Agent)]
    assignment_channel: AssignmentChannel,
    #[arg(long, default_value = "unknown")]
    commit: String,
    #[arg(long, default_value = "bench/run.sh")]
    command: String,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::BareServer { bind } => runtime.block_on(bare::serve(&bind)),
        Command::All(args) => runtime.block_on(all(*args)),
        Command::Soak(args) => runtime.block_on(soak::run(*args)),
        Command::Recall(args) => runtime.block_on(recall::run(*args)),
        Command::Load {
            addr,
            path,
            key,
            cookie,
            body,
            conns,
            secs,
            expect,
        } => runtime.block_on(async move {
            let body: Option<serde_json::Value> =
                body.map(|b| serde_json::from_str(&b)).transpose()?;
            let expect = match expect {
                Some(code) => hyper::StatusCode::from_u16(code)?,
                None if body.is_some() => hyper::StatusCode::CREATED,
                None => hyper::StatusCode::OK,
            };
            let make: http::MakeRequest = std::sync::Arc::new(move |_| {
                let req = match &body {
                    Some(body) => http::Req::post_json(&path, body),
                    None => http::Req::get(&path),
                };
                let req = match &key {
                    Some(key) => req.key(key),
                    None => req,
                };
                match &cookie {
                    Some(cookie) => req.header("cookie", cookie.clone()),
                    None => req,
                }
            });
            let load = Load {
                conns,
                warmup: Duration::from_secs(1),
                duration: Duration::from_secs(secs),
            };
            let t = http::run_load(addr, load, expect, make).await?;
            println!(
                "{:.0} req/s, p50 {} p99 {}, {} errors {:?}",
                t.rate(),
                stats::fmt_ms(t.p50_ms()),
                stats::fmt_ms(t.p99_ms()),
                t.errors,
                t.first_error
            );
            Ok(())
        }),
    }
}

async fn all(args: AllArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    std::fs::create_dir_all(&args.out_dir)?;
    eprintln!("== seeding {}", args.database_url);
    let seed = setup::seed(&args.service_bin, &args.database_url, &args.sql_dir).await?;
    let service = ServiceConfig {
        bin: args.service_bin.clone(),
        database_url: args.database_url.clone(),
        redis_url: Some(args.redis_url.clone()),
        redis_prefix: args.redis_prefix.clone(),
        data_dir: args.out_dir.join("data"),
        presence_ttl_secs: None,
        metrics: false,
    };
    let mut ctx = Ctx {
        service,
        database_url: args.database_url.clone(),
        out_dir: args.out_dir.clone(),
        sql_dir: args.sql_dir.clone(),
        seed,
        load: Load {
            conns: args.conns,
            warmup: Duration::from_secs(args.warmup_secs),
            duration: Duration::from_secs(args.duration_secs),
        },
        slices: args.slices,
        sockets: args.sockets,
        idle_sockets: args.idle_sockets,
        presence_ttl: args.presence_ttl,
        heartbeat: Duration::from_secs(args.heartbeat_secs),
        heartbeat_rounds: args.heartbeat_rounds,
        peers_dir: args.peers.then(|| args.peers_dir.clone()),
        ab_bin: args.ab_bin.clone(),
        assignment_channel: args.assignment_channel,
        scale_tenant: None,
        rows: Vec::new(),
        notes: Vec::new(),
    };
    let runs = args
        .runs
        .unwrap_or(if args.only.is_empty() { 3 } else { 1 })
        .max(1);
    let wanted = |n: u32| args.only.is_empty() || args.only.contains(&n);
    // Scenarios 2, 9 and 10 read the seeded tickets before scenario 1 adds to them.
    let plan: [(u32, &str); 17] = [
        (2, "GET /tickets"),
        (9, "GET /tickets filtered by tag, custom field and status"),
        (10, "lists and search at scale"),
        (1, "POST /tickets"),
        (3, "authenticated cheap GET vs /healthz"),
        (4, "KB search"),
        (5, "WebSocket memory and fan-out"),
        (6, "REST message -> socket"),
        (7, "presence expiry"),
        (8, "POST /tickets with Idempotency-Key vs without"),
        (11, "20 parallel uploads of 20 MiB"),
        (12, "POST /tickets with a matching SLA policy vs without"),
        (13, "assignment latency"),
        (14, "authenticated cheap GET, metrics on vs off"),
        (
            15,
            "authenticated cheap GET by session cookie, and sign-in under load",
        ),
        (16, "audit sealer lag under audited writes"),
        (17, "POST /tickets with 50 active triggers vs none"),
    ];
    for (n, name) in plan {
        if !wanted(n) {
            continue;
        }
        let mut per_run = Vec::new();
        for run in 1..=runs {
            let (rows_before, notes_before) = (ctx.rows.len(), ctx.notes.len());
            eprintln!(
                "== scenario {n}: {name}, run {run} of {runs} ({:.0} s into the run)",
                started.elapsed().as_secs_f64()
            );
            run_scenario(&mut ctx, n, name, args.scale_tickets).await;
            per_run.push(ctx.rows.split_off(rows_before));
            if runs > 1 {
                for note in &mut ctx.notes[notes_before..] {
                    *note = format!("run {run} of {runs}: {note}");
                }
            }
        }
        ctx.rows.extend(runs::merge(&per_run));
    }
    let mut rows = ctx.rows.clone();
    rows.sort_by_key(|r| scenario_number(&r.scenario));

    let env = Environment {
        date: chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
        machine: machine().await,
        versions: versions(&args).await,
        commit: args.commit.clone(),
        command: args.command.clone(),
        duration_secs: started.elapsed().as_secs_f64(),
        settings: format!(
            "{}; {} keep-alive HTTP/1.1 connections and {} pgbench clients (prepared protocol) per throughput run; service and baseline alternate in {} slices, each {} s warm-up + {} s measured ({} s measured per side); {} sockets (scenario 5), {} idle sockets (6); presence TTL {} s, heartbeats every {} s (7); seeded: {} tickets ({} tags on them, {} values of a `plan` select custom field), {} KB articles, 50 companies; the service on Postgres + Redis unless stated",
            if runs > 1 {
                format!(
                    "each scenario ran {runs} times: a row is the median run (by its ratio), [min–max] of the runs beside each figure"
                )
            } else {
                "each scenario ran once".to_string()
            },
            args.conns,
            args.conns,
            args.slices,
            args.warmup_secs,
            args.duration_secs / args.slices.max(1) as u64,
            args.duration_secs,
            args.sockets,
            args.idle_sockets,
            args.presence_ttl,
            args.heartbeat_secs,
            ctx.seed.tickets.map_or("no".to_string(), |n| n.to_string()),
            ctx.seed
                .ticket_tags
                .map_or("no".to_string(), |n| n.to_string()),
            ctx.seed
                .field_values
                .map_or("no".to_string(), |n| n.to_string()),
            ctx.seed
                .articles
                .map_or("no".to_string(), |n| n.to_string()),
        ),
    };
    let document = report::document(&env, &rows, &ctx.notes);
    report::write(&args.results, &document)?;
    println!("{}", report::table(&rows));
    eprintln!(
        "== wrote {} ({:.0} s)",
        args.results.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs scenario `n` once; a failure becomes a "not run" row.
async fn run_scenario(ctx: &mut Ctx, n: u32, name: &str, scale_tickets: u64) {
    let result = match n {
        1 => ctx.create_tickets().await,
        2 => ctx.list_tickets().await,
        3 => ctx.cheap_get().await,
        4 => ctx.kb_search().await,
        5 => ctx.websocket().await,
        6 => ctx.message_to_socket().await,
        7 => ctx.presence().await,
        9 => ctx.filtered_list().await,
        10 => ctx.scale(scale_tickets).await,
        11 => ctx.uploads().await,
        12 => ctx.sla_create().await,
        13 => ctx.assignment().await,
        14 => ctx.metrics_overhead().await,
        15 => ctx.session_cookie().await,
        16 => ctx.audit_sealer().await,
        17 => ctx.automations_create().await,
        _ => ctx.idempotent_create().await,
    };
    if let Err(e) = result {
        eprintln!("  scenario {n} failed: {e:#}");
        let reason: String = format!("failed: {e:#}")
            .replace('|', "/")
            .chars()
            .take(200)
            .collect();
        ctx.rows.push(Row::not_run(
            &format!("{n} {name}"),
            "see the issue",
            &reason,
        ));
    }
}

async fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let output = tokio::process::Command::new(program)
        .args(args)
        .output()
        .await
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

async fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|m| m.trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: f64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let kernel = command_output("uname", &["-r"]).await.unwrap_or_default();
    format!(
        "{cores} cores (nproc), {model}, {:.1} GiB memory, Linux {kernel}",
        mem_kib / 1024.0 / 1024.0
    )
}

async fn versions(args: &AllArgs) -> String {
    let rustc = command_output("rustc", &["--version"])
        .await
        .unwrap_or_else(|| "rustc ?".into());
    let postgres = setup::psql(
        &args.database_url,
        setup::Sql::Text("SHOW server_version"),
        &[],
    )
    .await
    .unwrap_or_else(|_| "?".into());
    let redis = redis_version(&args.redis_url)
        .await
        .unwrap_or_else(|| "?".into());
    let pgbench = command_output("pgbench", &["--version"])
        .await
        .unwrap_or_default();
    format!("{rustc}; PostgreSQL {postgres}; Redis {redis}; {pgbench}")
}

/// `INFO server` over a raw connection (no client library needed).
async fn redis_version(url: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let hostport = url
        .trim_start_matches("redis://")
        .split('/')
        .next()?
        .to_string();
    let hostport = hostport.rsplit('@').next()?.to_string();
    let mut stream = tokio::net::TcpStream::connect(hostport).await.ok()?;
    stream.write_all(b"INFO server\r\n").await.ok()?;
    let mut buf = vec![0u8; 8192];
    let n = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf))
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&buf[..n]);
    text.lines()
        .find(|l| l.starts_with("redis_version:"))
        .map(|l| l.trim_start_matches("redis_version:").trim().to_string())
}

/// The number a row's scenario cell starts with ("10 `GET …`" is 10), so
/// rows sort by scenario; a cell without one sorts last.
fn scenario_number(scenario: &str) -> u32 {
    let digits: String = scenario.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::scenario_number;

    #[test]
    fn rows_sort_by_their_whole_scenario_number() {
        assert!(scenario_number("9 `GET /tickets`") < scenario_number("10 deep page"));
    }

    #[test]
    fn a_row_without_a_number_sorts_last() {
        assert_eq!(scenario_number("presence"), u32::MAX);
    }
}
