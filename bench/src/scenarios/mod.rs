//! The scenarios, each with its baseline beside it in the same run:
//! one module per scenario (`Ctx::<scenario>` methods), the context and the
//! service-vs-baseline comparison they share here, their result rows built
//! by [`rows::RowBuilder`].

mod ab;
mod assignment;
mod audit_sealer;
mod automations_create;
mod cheap_get;
mod create_tickets;
mod fanout;
mod filtered_list;
mod idempotent_create;
mod kb_search;
mod list_tickets;
mod message_to_socket;
mod metrics_overhead;
mod peers;
mod pgbench_script;
mod presence;
mod rows;
mod scale;
mod session_cookie;
mod settle;
mod sla_create;
mod uploads;
mod websocket;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use hyper::StatusCode;
use serde_json::json;

use crate::http::{self, Conn, Load, MakeRequest, Req};
use crate::pgbench::Pgbench;
use crate::process::{self, Server, ServiceConfig};
use crate::report::Row;
use crate::setup::{Seed, Tenant};
use crate::stats::{self, Throughput};
use crate::ws;
pub use assignment::AssignmentChannel;
use pgbench_script::prepare_script;

pub struct Ctx {
    pub service: ServiceConfig,
    pub database_url: String,
    pub out_dir: PathBuf,
    pub sql_dir: PathBuf,
    pub seed: Seed,
    pub load: Load,
    /// Service and baseline alternate in this many slices of the duration.
    pub slices: u32,
    pub sockets: usize,
    pub idle_sockets: usize,
    pub presence_ttl: u64,
    pub heartbeat: Duration,
    pub heartbeat_rounds: u32,
    /// bench/peers, when scenario 5 also runs against Socket.IO.
    pub peers_dir: Option<PathBuf>,
    /// Scenarios 3 and 5 compare this service binary (B) with `service.bin` (A).
    pub ab_bin: Option<PathBuf>,
    /// Where scenario 13's consoles subscribe.
    pub assignment_channel: AssignmentChannel,
    /// Scenario 10's large company, seeded by its first run.
    pub scale_tenant: Option<Tenant>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

/// A load run against a server, with the server's peak RSS and CPU per operation.
struct Measured {
    t: Throughput,
    peak_rss_kib: u64,
    cpu_secs: f64,
    /// Operations including the warm-up (the CPU covers them too).
    ops: f64,
}

impl Measured {
    fn empty() -> Measured {
        Measured {
            t: Throughput::empty(),
            peak_rss_kib: 0,
            cpu_secs: 0.0,
            ops: 0.0,
        }
    }

    fn merge(&mut self, other: Measured) {
        self.t.merge(other.t);
        self.peak_rss_kib = self.peak_rss_kib.max(other.peak_rss_kib);
        self.cpu_secs += other.cpu_secs;
        self.ops += other.ops;
    }

    fn cpu_us_per_op(&self) -> f64 {
        if self.ops > 0.0 {
            self.cpu_secs * 1e6 / self.ops
        } else {
            f64::NAN
        }
    }
}

async fn measure(
    server: &Server,
    load: Load,
    expect: StatusCode,
    make: MakeRequest,
) -> anyhow::Result<Measured> {
    let sampler = server.sampler();
    let cpu_before = process::cpu_secs(server.pid).unwrap_or(0.0);
    let t = http::run_load(server.addr, load, expect, make).await?;
    let cpu_secs = process::cpu_secs(server.pid).unwrap_or(0.0) - cpu_before;
    let ops =
        (t.ok as f64) * (load.warmup + load.duration).as_secs_f64() / load.duration.as_secs_f64();
    Ok(Measured {
        peak_rss_kib: sampler.peak_kib(),
        cpu_secs,
        ops,
        t,
    })
}

/// The baseline a service figure is compared with.
enum Baseline {
    /// pgbench with `script` (in bench/sql) and variables.
    Pgbench {
        name: &'static str,
        script: &'static str,
        vars: Vec<(String, String)>,
    },
    /// Another request to the same server, answered with this status.
    Http(MakeRequest, StatusCode),
}

impl Ctx {
    fn note(&mut self, text: impl Into<String>) {
        let text = text.into();
        eprintln!("  note: {text}");
        self.notes.push(text);
    }

    fn throughput_note(&mut self, what: &str, m: &Measured) {
        let mut text = format!(
            "{what}: {} ok, {} errors in {:.0} s, service CPU {:.0} µs per request",
            m.t.ok,
            m.t.errors,
            m.t.secs,
            m.cpu_us_per_op()
        );
        if let Some(e) = &m.t.first_error {
            text.push_str(&format!("; first error: `{}`", e.replace('|', "/")));
        }
        self.note(text);
    }

    fn pg_note(&mut self, what: &str, t: &Throughput) {
        let mut text = format!(
            "{what}: {} transactions, {} failed in {:.0} s",
            t.ok, t.errors, t.secs
        );
        if let Some(e) = &t.first_error {
            text.push_str(&format!("; first error: `{}`", e.replace('|', "/")));
        }
        self.note(text);
    }

    async fn start(&self, name: &str, config: &ServiceConfig) -> anyhow::Result<Server> {
        Server::service(name, config, &self.out_dir.join("logs")).await
    }

    fn key(&self) -> &str {
        &self.seed.key
    }

    /// Sends one request to a fresh connection and returns its status and body.
    async fn probe(&self, server: &Server, req: Req) -> anyhow::Result<(StatusCode, String)> {
        let mut conn = Conn::open(0, server.addr).await?;
        let (status, body) = conn.send(&req).await?;
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }

    /// The open-loop latency run: one warm-up and the measured duration / 2.
    fn load_for_latency(&self) -> Load {
        Load {
            conns: self.load.conns,
            warmup: Duration::from_secs(2),
            duration: self.load.duration / 2,
        }
    }

    fn tenant_vars(&self) -> Vec<(String, String)> {
        vec![
            ("company".into(), self.seed.company.clone()),
            ("entity".into(), self.seed.entity.clone()),
            ("mode".into(), "live".into()),
        ]
    }

    /// Runs the service load and its baseline in alternating slices (A B A
    /// B …), so that drift on this shared machine hits both alike; each
    /// slice has its own warm-up. Returns (service, baseline).
    async fn compare(
        &mut self,
        server: &Server,
        expect: StatusCode,
        make: MakeRequest,
        baseline: Baseline,
    ) -> anyhow::Result<(Measured, Measured)> {
        let (service, mut bases) = self
            .compare_each(server, expect, make, vec![baseline])
            .await?;
        Ok((service, bases.pop().unwrap_or_else(Measured::empty)))
    }

    /// [`Ctx::compare`] with several baselines, each in every slice after
    /// the service's (A B C A B C …). Returns the service and the
    /// baselines in the order given.
    async fn compare_each(
        &mut self,
        server: &Server,
        expect: StatusCode,
        make: MakeRequest,
        baselines: Vec<Baseline>,
    ) -> anyhow::Result<(Measured, Vec<Measured>)> {
        let slices = self.slices.max(1);
        let slice = Load {
            conns: self.load.conns,
            warmup: self.load.warmup,
            duration: self.load.duration / slices,
        };
        let mut service = Measured::empty();
        let mut bases: Vec<Measured> = baselines.iter().map(|_| Measured::empty()).collect();
        for i in 0..slices {
            service.merge(measure(server, slice, expect, make.clone()).await?);
            self.settle(&format!("service slice {}", i + 1)).await?;
            for (baseline, base) in baselines.iter().zip(bases.iter_mut()) {
                match baseline {
                    Baseline::Http(other, status) => {
                        base.merge(measure(server, slice, *status, other.clone()).await?)
                    }
                    Baseline::Pgbench { name, script, vars } => {
                        let runnable = self.out_dir.join("pgbench").join(script);
                        if i == 0 {
                            prepare_script(
                                &self.database_url,
                                &self.sql_dir.join(script),
                                &runnable,
                            )
                            .await?;
                        }
                        let run = Pgbench {
                            name: format!("{name}_{i}"),
                            script: runnable,
                            vars: vars.clone(),
                            database_url: &self.database_url,
                            load: slice,
                            out_dir: &self.out_dir,
                            rate: None,
                        };
                        base.t.merge(run.run().await?);
                    }
                }
            }
        }
        Ok((service, bases))
    }

    /// A chat session to post messages into (scenarios 5 and 6).
    async fn create_session(&self, server: &Server) -> anyhow::Result<String> {
        let mut conn = Conn::open(0, server.addr).await?;
        let session = conn
            .json(
                &Req::post_json(
                    "/api/v1/chat/sessions",
                    &json!({"entityId": self.seed.entity, "visitorName": "Bench visitor"}),
                )
                .key(self.key()),
                StatusCode::CREATED,
            )
            .await?;
        Ok(session["id"].as_str().context("session id")?.to_string())
    }
}

fn hist_of(micros: &[u32]) -> hdrhistogram::Histogram<u64> {
    let mut h = stats::histogram();
    for m in micros {
        stats::record(&mut h, *m as u64);
    }
    h
}

/// The body of numbered ticket `seq` in `entity` (scenarios 1 and 8): a
/// typical ticket, a subject and a few lines of description.
fn ticket_body(entity: &str, seq: u64) -> serde_json::Value {
    json!({
        "subject": format!("Bench ticket {seq}: cannot log in"),
        "description": "The login page answers with an error after the password step. \
                        Steps: open the app, enter the e-mail, enter the password.",
        "priority": "HIGH",
        "entityId": entity,
    })
}

/// The body of numbered chat message `seq` (a typical short chat line).
fn chat_body(seq: u64) -> String {
    format!(
        "{}Hello, I need help with my order: the tracking page shows no update since Monday.",
        ws::numbered_body(seq)
    )
}
