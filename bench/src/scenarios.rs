//! The seven scenarios, each with its baseline beside it in the same run.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::StreamExt;
use hyper::StatusCode;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use crate::http::{self, Conn, Load, MakeRequest, Req};
use crate::pgbench::Pgbench;
use crate::process::{self, Server, ServiceConfig};
use crate::report::{Row, Verdict, verdict};
use crate::setup::Seed;
use crate::stats::{self, Throughput, fmt_kib, fmt_ms, fmt_rate, quantile_ms};
use crate::ws::{self, Fleet, Tally, WsTarget};

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
    /// Another request to the same server.
    Http(MakeRequest),
}

fn latency_pair(service: &Throughput, baseline: Option<&Throughput>) -> String {
    let mut s = format!(
        "{} / {}",
        fmt_ms(service.p50_ms()),
        fmt_ms(service.p99_ms())
    );
    if let Some(b) = baseline {
        s.push_str(&format!(
            " ({} / {})",
            fmt_ms(b.p50_ms()),
            fmt_ms(b.p99_ms())
        ));
    }
    s
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

fn pct(r: f64) -> String {
    if r.is_nan() {
        "–".into()
    } else {
        format!("{:.0}%", r * 100.0)
    }
}

fn times(r: f64) -> String {
    if r.is_nan() {
        "–".into()
    } else {
        format!("{r:.2}×")
    }
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
        &self,
        server: &Server,
        expect: StatusCode,
        make: MakeRequest,
        baseline: Baseline,
    ) -> anyhow::Result<(Measured, Measured)> {
        let slices = self.slices.max(1);
        let slice = Load {
            conns: self.load.conns,
            warmup: self.load.warmup,
            duration: self.load.duration / slices,
        };
        let (mut service, mut base) = (Measured::empty(), Measured::empty());
        for i in 0..slices {
            service.merge(measure(server, slice, expect, make.clone()).await?);
            match &baseline {
                Baseline::Http(other) => {
                    base.merge(measure(server, slice, StatusCode::OK, other.clone()).await?)
                }
                Baseline::Pgbench { name, script, vars } => {
                    let runnable = self.out_dir.join("pgbench").join(script);
                    if i == 0 {
                        prepare_script(&self.database_url, &self.sql_dir.join(script), &runnable)
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
        Ok((service, base))
    }

    // ---------------------------------------------------------------- 1 & 2

    pub async fn list_tickets(&mut self) -> anyhow::Result<()> {
        let (scenario, target) = ("2 `GET /tickets?status=OPEN&limit=20`", "≥ 35% of pgbench");
        let (scenario_p99, target_p99) = ("2 `GET /tickets` p99", "p99 ≤ 15 ms");
        if self.seed.tickets.is_none() {
            self.rows.push(Row::not_run(
                scenario,
                target,
                "no tickets table (tickets area not merged)",
            ));
            self.rows
                .push(Row::not_run(scenario_p99, target_p99, "as above"));
            return Ok(());
        }
        let server = self.start("s2-service", &self.service).await?;
        let path = "/api/v1/tickets?status=OPEN&limit=20";
        let (status, body) = self.probe(&server, Req::get(path).key(self.key())).await?;
        if status != StatusCode::OK {
            server.stop().await;
            let reason = format!("GET /tickets answered {status}");
            self.rows.push(Row::not_run(scenario, target, &reason));
            self.rows
                .push(Row::not_run(scenario_p99, target_p99, &reason));
            return Ok(());
        }
        let page: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        self.note(format!(
            "scenario 2: the benchmark company has {} OPEN tickets (the page's total); page of {}",
            page["total"],
            page["data"].as_array().map_or(0, |a| a.len())
        ));
        let key = self.key().to_string();
        let make: MakeRequest = Arc::new(move |_| Req::get(path).key(&key));
        let mut vars = self.tenant_vars();
        vars.push(("status".into(), "OPEN".into()));
        let baseline = Baseline::Pgbench {
            name: "tickets_list",
            script: "pgbench_tickets_list.sql",
            vars,
        };
        let (m, pg) = self
            .compare(&server, StatusCode::OK, make.clone(), baseline)
            .await?;
        let pg = pg.t;
        // The latency target is read at half the measured maximum rate (an
        // open-loop load): at saturation, latency is just connections / throughput.
        let half = (m.t.rate() / 2.0).max(1.0);
        let at_half = http::run_rate(
            server.addr,
            self.load_for_latency(),
            half,
            StatusCode::OK,
            make,
        )
        .await?;
        server.stop().await;
        self.throughput_note("scenario 2 service", &m);
        self.note(format!(
            "scenario 2 at half load ({half:.0} req/s, open loop over {} connections): {} ok, {} errors, p50 {} / p99 {}",
            self.load.conns,
            at_half.ok,
            at_half.errors,
            fmt_ms(at_half.p50_ms()),
            fmt_ms(at_half.p99_ms())
        ));
        self.pg_note("scenario 2 pgbench", &pg);
        let r = ratio(m.t.rate(), pg.rate());
        self.rows.push(Row {
            scenario: scenario.into(),
            service: fmt_rate(m.t.rate(), "req/s"),
            baseline: format!("{} (pgbench, same 2 queries)", fmt_rate(pg.rate(), "tx/s")),
            ratio: pct(r),
            target: target.into(),
            verdict: verdict(r >= 0.35),
            latency: latency_pair(&m.t, Some(&pg)),
            rss: fmt_kib(m.peak_rss_kib as f64),
        });
        self.rows.push(Row {
            scenario: format!("{scenario_p99} at half the max rate ({half:.0} req/s, open loop)"),
            service: fmt_ms(at_half.p99_ms()),
            baseline: "–".into(),
            ratio: "–".into(),
            target: target_p99.into(),
            verdict: verdict(at_half.p99_ms() <= 15.0 && at_half.errors == 0),
            latency: format!(
                "{} / {}; at saturation ({} connections): {} / {}",
                fmt_ms(at_half.p50_ms()),
                fmt_ms(at_half.p99_ms()),
                self.load.conns,
                fmt_ms(m.t.p50_ms()),
                fmt_ms(m.t.p99_ms())
            ),
            rss: fmt_kib(m.peak_rss_kib as f64),
        });
        Ok(())
    }

    pub async fn create_tickets(&mut self) -> anyhow::Result<()> {
        let (scenario, target) = ("1 `POST /tickets`", "≥ 50% of pgbench");
        let (scenario_p99, target_p99) = ("1 `POST /tickets` p99", "≤ 8× pgbench's p99");
        let server = self.start("s1-service", &self.service).await?;
        let entity = self.seed.entity.clone();
        let body = move |seq: u64| {
            json!({
                "subject": format!("Bench ticket {seq}: cannot log in"),
                "description": "The login page answers with an error after the password step. \
                                Steps: open the app, enter the e-mail, enter the password.",
                "priority": "HIGH",
                "entityId": entity,
            })
        };
        let (status, text) = self
            .probe(
                &server,
                Req::post_json("/api/v1/tickets", &body(0)).key(self.key()),
            )
            .await?;
        if status != StatusCode::CREATED {
            server.stop().await;
            let reason = format!(
                "POST /tickets answered {status}: {}",
                text.chars().take(120).collect::<String>()
            );
            self.rows.push(Row::not_run(scenario, target, &reason));
            self.rows
                .push(Row::not_run(scenario_p99, target_p99, "as above"));
            return Ok(());
        }
        let key = self.key().to_string();
        let make: MakeRequest =
            Arc::new(move |seq| Req::post_json("/api/v1/tickets", &body(seq + 1)).key(&key));
        let baseline = Baseline::Pgbench {
            name: "tickets_create",
            script: "pgbench_tickets_create.sql",
            vars: self.tenant_vars(),
        };
        let (m, pg) = self
            .compare(&server, StatusCode::CREATED, make, baseline)
            .await?;
        let pg = pg.t;
        server.stop().await;
        self.throughput_note("scenario 1 service", &m);
        self.pg_note("scenario 1 pgbench", &pg);
        let r = ratio(m.t.rate(), pg.rate());
        let r99 = ratio(m.t.p99_ms(), pg.p99_ms());
        self.rows.push(Row {
            scenario: scenario.into(),
            service: fmt_rate(m.t.rate(), "req/s"),
            baseline: format!(
                "{} (pgbench, same statements, one tx)",
                fmt_rate(pg.rate(), "tx/s")
            ),
            ratio: pct(r),
            target: target.into(),
            verdict: verdict(r >= 0.5),
            latency: latency_pair(&m.t, Some(&pg)),
            rss: fmt_kib(m.peak_rss_kib as f64),
        });
        self.rows.push(Row {
            scenario: scenario_p99.into(),
            service: fmt_ms(m.t.p99_ms()),
            baseline: fmt_ms(pg.p99_ms()),
            ratio: times(r99),
            target: target_p99.into(),
            verdict: verdict(r99 <= 8.0),
            latency: latency_pair(&m.t, Some(&pg)),
            rss: fmt_kib(m.peak_rss_kib as f64),
        });
        Ok(())
    }

    // ---------------------------------------------------------------- 3

    pub async fn cheap_get(&mut self) -> anyhow::Result<()> {
        let variants = [
            (
                "in-process limiter (no REDIS_URL)",
                None,
                0.8,
                "≥ 80% of /healthz",
            ),
            (
                "Redis limiter",
                self.service.redis_url.clone(),
                0.5,
                "≥ 50% of /healthz",
            ),
        ];
        for (label, redis_url, goal, target) in variants {
            let config = ServiceConfig {
                redis_url: redis_url.clone(),
                ..self.service.clone()
            };
            let server = self.start("s3-service", &config).await?;
            let path = format!("/api/v1/entities/{}", self.seed.entity);
            let (status, _) = self.probe(&server, Req::get(&path).key(self.key())).await?;
            let health: MakeRequest = Arc::new(|_| Req::get("/healthz"));
            let key = self.key().to_string();
            // (a) a cheap endpoint: auth, limiter, tracing, one indexed SELECT.
            let scenario = format!("3 `GET /api/v1/entities/{{id}}` vs `/healthz`, {label}");
            if status == StatusCode::OK {
                let auth: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
                let (m, h) = self
                    .compare(
                        &server,
                        StatusCode::OK,
                        auth,
                        Baseline::Http(health.clone()),
                    )
                    .await?;
                self.throughput_note(&format!("scenario 3 ({label}) GET /entities/{{id}}"), &m);
                self.throughput_note(&format!("scenario 3 ({label}) /healthz"), &h);
                let r = ratio(m.t.rate(), h.t.rate());
                self.rows.push(Row {
                    scenario,
                    service: fmt_rate(m.t.rate(), "req/s"),
                    baseline: format!("{} (/healthz)", fmt_rate(h.t.rate(), "req/s")),
                    ratio: pct(r),
                    target: target.into(),
                    verdict: verdict(r >= goal),
                    latency: latency_pair(&m.t, Some(&h.t)),
                    rss: fmt_kib(m.peak_rss_kib.max(h.peak_rss_kib) as f64),
                });
            } else {
                self.rows.push(Row::not_run(
                    &scenario,
                    target,
                    &format!("{path} answered {status}"),
                ));
            }
            // (b) auth, limiter and tracing alone: a valid key on a path no
            // route serves (answered 404 JSON after the rate limit).
            let scenario = format!(
                "3 auth + rate limit + tracing alone (`GET /api/v1/bench-unrouted` with a key, 404) vs `/healthz`, {label}"
            );
            let key = self.key().to_string();
            let unrouted: MakeRequest =
                Arc::new(move |_| Req::get("/api/v1/bench-unrouted").key(&key));
            let (m, h) = self
                .compare(
                    &server,
                    StatusCode::NOT_FOUND,
                    unrouted,
                    Baseline::Http(health),
                )
                .await?;
            server.stop().await;
            self.throughput_note(&format!("scenario 3 ({label}) unrouted 404 with a key"), &m);
            let r = ratio(m.t.rate(), h.t.rate());
            self.rows.push(Row {
                scenario,
                service: fmt_rate(m.t.rate(), "req/s"),
                baseline: format!("{} (/healthz)", fmt_rate(h.t.rate(), "req/s")),
                ratio: pct(r),
                target: target.into(),
                verdict: verdict(r >= goal),
                latency: latency_pair(&m.t, Some(&h.t)),
                rss: fmt_kib(m.peak_rss_kib.max(h.peak_rss_kib) as f64),
            });
        }
        // (c) the database's share of (a): pgbench on its one SELECT.
        let server = self.start("s3-service", &self.service).await?;
        let path = format!("/api/v1/entities/{}", self.seed.entity);
        let key = self.key().to_string();
        let auth: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
        let baseline = Baseline::Pgbench {
            name: "entity_get",
            script: "pgbench_entity_get.sql",
            vars: self.tenant_vars(),
        };
        let (m, pg) = self
            .compare(&server, StatusCode::OK, auth, baseline)
            .await?;
        server.stop().await;
        self.pg_note("scenario 3 pgbench (the entity SELECT)", &pg.t);
        self.rows.push(Row {
            scenario: "3 `GET /api/v1/entities/{id}` vs pgbench on its one SELECT (Redis limiter; no target, context)".into(),
            service: fmt_rate(m.t.rate(), "req/s"),
            baseline: format!("{} (pgbench)", fmt_rate(pg.t.rate(), "tx/s")),
            ratio: pct(ratio(m.t.rate(), pg.t.rate())),
            target: "–".into(),
            verdict: Verdict::Info,
            latency: latency_pair(&m.t, Some(&pg.t)),
            rss: fmt_kib(m.peak_rss_kib as f64),
        });
        Ok(())
    }

    // ---------------------------------------------------------------- 4

    pub async fn kb_search(&mut self) -> anyhow::Result<()> {
        let (scenario, target) = ("4 `GET /kb/search` (10,000 articles)", "≥ 35% of pgbench");
        if self.seed.articles.is_none() {
            self.rows.push(Row::not_run(
                scenario,
                target,
                "no articles table (knowledge base not merged)",
            ));
            return Ok(());
        }
        let server = self.start("s4-service", &self.service).await?;
        let entity = self.seed.entity.clone();
        let path = move |seq: u64| {
            let term = SEARCH_TERMS[seq as usize % SEARCH_TERMS.len()];
            format!(
                "/api/v1/kb/search?q={}&entityId={entity}&limit=10",
                term.replace(' ', "+")
            )
        };
        let (status, body) = self
            .probe(&server, Req::get(path(0)).key(self.key()))
            .await?;
        if status != StatusCode::OK {
            server.stop().await;
            self.rows.push(Row::not_run(
                scenario,
                target,
                &format!("GET /kb/search answered {status}"),
            ));
            return Ok(());
        }
        let hits = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.as_array().map(|a| a.len()))
            .unwrap_or(0);
        self.note(format!(
            "scenario 4: `{}` returned {hits} results",
            SEARCH_TERMS[0]
        ));
        let key = self.key().to_string();
        let make: MakeRequest = Arc::new(move |seq| Req::get(path(seq)).key(&key));
        let mut vars = self.tenant_vars();
        vars.push(("terms".into(), SEARCH_TERMS.len().to_string()));
        let baseline = Baseline::Pgbench {
            name: "kb_search",
            script: "pgbench_kb_search.sql",
            vars,
        };
        let (m, pg) = self
            .compare(&server, StatusCode::OK, make, baseline)
            .await?;
        let pg = pg.t;
        server.stop().await;
        self.throughput_note("scenario 4 service", &m);
        self.pg_note("scenario 4 pgbench", &pg);
        let r = ratio(m.t.rate(), pg.rate());
        self.rows.push(Row {
            scenario: scenario.into(),
            service: fmt_rate(m.t.rate(), "req/s"),
            baseline: format!("{} (pgbench, same query)", fmt_rate(pg.rate(), "tx/s")),
            ratio: pct(r),
            target: target.into(),
            verdict: verdict(r >= 0.35),
            latency: latency_pair(&m.t, Some(&pg)),
            rss: fmt_kib(m.peak_rss_kib as f64),
        });
        Ok(())
    }

    // ---------------------------------------------------------------- 5

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

    pub async fn websocket(&mut self) -> anyhow::Result<()> {
        let n = self.sockets;
        let mem_scenario = format!("5 idle memory per authenticated socket ({n} sockets)");
        let fan_scenario = format!("5 fan-out of one `chat.message` to {n} subscribers, p99");
        let burst_scenario = format!("5 burst fan-out to {n} subscribers, deliveries/s");
        let (mem_target, fan_target, burst_target) = (
            "≤ 10 KiB per socket",
            "p99 ≤ 1.5× the bare server's",
            "≥ 50% of bare",
        );

        // The service.
        let server = self.start("s5-service", &self.service).await?;
        let service = match self.create_session(&server).await {
            Err(e) => {
                server.stop().await;
                let reason = format!("chat sessions not available ({e:#})");
                let reason: String = reason.chars().take(160).collect();
                eprintln!("  {reason}");
                None::<Fanout>.ok_or(reason)
            }
            Ok(session) => {
                let target = WsTarget {
                    addr: server.addr,
                    path: "/api/v1/ws".into(),
                    api_key: Some(self.key().to_string()),
                };
                let key = self.key().to_string();
                let channel = format!("session:{session}");
                let publish = move |seq: u64, _frame: &Option<String>| {
                    Req::post_json(
                        format!("/api/v1/chat/sessions/{session}/messages"),
                        &json!({"body": chat_body(seq), "senderType": "visitor"}),
                    )
                    .key(&key)
                };
                let result = self
                    .fanout(
                        &server,
                        target,
                        Some(channel),
                        &publish,
                        StatusCode::CREATED,
                        None,
                    )
                    .await;
                server.stop().await;
                result.map_err(|e| format!("{e:#}"))
            }
        };
        // The bare broadcast server, with frames of the same size.
        let template = service.as_ref().ok().and_then(|f| f.sample_frame.clone());
        let bare = Server::bare(&self.out_dir.join("logs")).await?;
        let target = WsTarget {
            addr: bare.addr,
            path: "/ws".into(),
            api_key: None,
        };
        let bare_publish = |seq: u64, frame: &Option<String>| {
            let frame = frame_for(seq, frame.as_deref());
            Req {
                method: hyper::Method::POST,
                path: "/publish".into(),
                headers: vec![("content-type", "text/plain".into())],
                body: Some(bytes::Bytes::from(frame)),
            }
        };
        let bare_result = self
            .fanout(
                &bare,
                target,
                Some("bench".into()),
                &bare_publish,
                StatusCode::OK,
                template.clone(),
            )
            .await;
        bare.stop().await;
        let bare_result = bare_result?;
        self.note(format!(
            "scenario 5 bare server: {} sockets, {} per socket, frame of {} bytes, single-message rounds: time until all received p50 {}",
            bare_result.connected,
            fmt_kib(bare_result.kib_per_socket),
            bare_result.frame_len,
            fmt_ms(bare_result.all_received_ms),
        ));

        match service {
            Err(reason) => {
                self.rows.push(Row {
                    baseline: format!("bare: {}", fmt_kib(bare_result.kib_per_socket)),
                    ..Row::not_run(&mem_scenario, mem_target, &reason)
                });
                self.rows.push(Row {
                    baseline: format!("bare: {}", fmt_ms(bare_result.p99_ms)),
                    ..Row::not_run(&fan_scenario, fan_target, "as above")
                });
                self.rows.push(Row {
                    baseline: format!("bare: {}", fmt_rate(bare_result.burst_rate, "/s")),
                    ..Row::not_run(&burst_scenario, burst_target, "as above")
                });
            }
            Ok(s) => {
                self.note(format!(
                    "scenario 5 service: {} of {n} sockets connected ({} failed{}), {} closed by the server during the run{}; frame of {} bytes; single-message rounds: time until all received p50 {}; burst: {} of {} deliveries",
                    s.connected,
                    s.failed,
                    s.first_failure.as_deref().map(|f| format!(", first: `{f}`")).unwrap_or_default(),
                    s.closed,
                    s.close_reason.as_deref().map(|r| format!(" (first reason: {r})")).unwrap_or_default(),
                    s.frame_len,
                    fmt_ms(s.all_received_ms),
                    s.burst_received,
                    s.burst_expected,
                ));
                self.rows.push(Row {
                    scenario: mem_scenario,
                    service: fmt_kib(s.kib_per_socket),
                    baseline: format!("{} (bare axum)", fmt_kib(bare_result.kib_per_socket)),
                    ratio: times(ratio(s.kib_per_socket, bare_result.kib_per_socket)),
                    target: mem_target.into(),
                    verdict: verdict(s.kib_per_socket <= 10.0),
                    latency: "–".into(),
                    rss: fmt_kib(s.peak_rss_kib as f64),
                });
                let r99 = ratio(s.p99_ms, bare_result.p99_ms);
                self.rows.push(Row {
                    scenario: fan_scenario,
                    service: fmt_ms(s.p99_ms),
                    baseline: format!("{} (bare)", fmt_ms(bare_result.p99_ms)),
                    ratio: times(r99),
                    target: fan_target.into(),
                    verdict: verdict(r99 <= 1.5),
                    latency: format!(
                        "{} / {} ({} / {}); all received after {} ({})",
                        fmt_ms(s.p50_ms),
                        fmt_ms(s.p99_ms),
                        fmt_ms(bare_result.p50_ms),
                        fmt_ms(bare_result.p99_ms),
                        fmt_ms(s.all_received_ms),
                        fmt_ms(bare_result.all_received_ms)
                    ),
                    rss: fmt_kib(s.peak_rss_kib as f64),
                });
                let rb = ratio(s.burst_rate, bare_result.burst_rate);
                self.rows.push(Row {
                    scenario: burst_scenario,
                    service: fmt_rate(s.burst_rate, "/s"),
                    baseline: format!("{} (bare)", fmt_rate(bare_result.burst_rate, "/s")),
                    ratio: pct(rb),
                    target: burst_target.into(),
                    verdict: verdict(rb >= 0.5 && s.burst_received == s.burst_expected),
                    latency: format!(
                        "{} / {} ({} / {})",
                        fmt_ms(s.burst_p50_ms),
                        fmt_ms(s.burst_p99_ms),
                        fmt_ms(bare_result.burst_p50_ms),
                        fmt_ms(bare_result.burst_p99_ms)
                    ),
                    rss: fmt_kib(s.peak_rss_kib as f64),
                });
            }
        }
        Ok(())
    }

    /// Connects `self.sockets` subscribers, measures memory, then sends
    /// single numbered messages and a burst.
    async fn fanout(
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

struct Fanout {
    connected: usize,
    failed: usize,
    first_failure: Option<String>,
    kib_per_socket: f64,
    p50_ms: f64,
    p99_ms: f64,
    all_received_ms: f64,
    burst_rate: f64,
    burst_p50_ms: f64,
    burst_p99_ms: f64,
    burst_received: u64,
    burst_expected: u64,
    closed: u64,
    close_reason: Option<String>,
    frame_len: usize,
    sample_frame: Option<String>,
    peak_rss_kib: u64,
}

impl Ctx {
    // ---------------------------------------------------------------- 6

    pub async fn message_to_socket(&mut self) -> anyhow::Result<()> {
        let idle = self.idle_sockets;
        let scenario = format!("6 REST message → socket delivery, {idle} idle sockets, p99");
        let target = "p99 ≤ 10 ms";
        let server = self.start("s6-service", &self.service).await?;
        let session = match self.create_session(&server).await {
            Ok(session) => session,
            Err(e) => {
                server.stop().await;
                let reason: String = format!("chat sessions not available ({e:#})")
                    .chars()
                    .take(160)
                    .collect();
                self.rows.push(Row::not_run(&scenario, target, &reason));
                return Ok(());
            }
        };
        let sampler = server.sampler();
        let ws_target = WsTarget {
            addr: server.addr,
            path: "/api/v1/ws".into(),
            api_key: Some(self.key().to_string()),
        };
        let idle_tally = Tally::new(1);
        let idle_fleet = Fleet::open(&ws_target, idle, None, 64, idle_tally).await;
        let tally = Tally::new(10_000);
        let listener = Fleet::open(
            &ws_target,
            1,
            Some(format!("session:{session}")),
            1,
            tally.clone(),
        )
        .await;
        anyhow::ensure!(
            listener.connected == 1,
            "listener socket failed: {:?}",
            listener.failures.first()
        );
        let mut conn = Conn::open(251, server.addr).await?;
        let mut post_hist = stats::histogram();
        let mut post_latency = Vec::new();
        let rate = 20.0;
        let count = (self.load.duration.as_secs_f64() * rate) as u64;
        let started = tokio::time::Instant::now();
        let mut lost = 0;
        for seq in 0..count {
            tokio::time::sleep_until(started + Duration::from_secs_f64(seq as f64 / rate)).await;
            let req = Req::post_json(
                format!("/api/v1/chat/sessions/{session}/messages"),
                &json!({"body": chat_body(seq), "senderType": "visitor"}),
            )
            .key(self.key());
            let sent = Instant::now();
            tally.mark_sent(seq);
            let (status, body) = conn.send(&req).await?;
            let post_us = sent.elapsed().as_micros() as u64;
            stats::record(&mut post_hist, post_us);
            post_latency.push(post_us);
            anyhow::ensure!(
                status == StatusCode::CREATED,
                "message answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
            if !tally
                .wait_all(seq..seq + 1, 1, Duration::from_secs(5))
                .await
            {
                lost += 1;
            }
        }
        let hist = hist_of(&tally.latencies(0..count));
        let peak = sampler.peak_kib();
        // The push's own share: socket delivery minus the POST's round trip
        // (negative when the frame arrived before the HTTP response).
        let mut before_response = 0;
        let mut after_response = stats::histogram();
        for seq in 0..count {
            if let Some(socket_us) = tally.latencies(seq..seq + 1).first() {
                let diff = *socket_us as i64 - post_latency[seq as usize] as i64;
                if diff < 0 {
                    before_response += 1;
                } else {
                    stats::record(&mut after_response, diff as u64);
                }
            }
        }
        self.note(format!(
            "scenario 6: {before_response} of {count} frames arrived before the POST's own response; the others trailed it by p50 {} / p99 {}",
            fmt_ms(quantile_ms(&after_response, 0.5)),
            fmt_ms(quantile_ms(&after_response, 0.99)),
        ));
        self.note(format!(
            "scenario 6: {count} messages at {rate:.0}/s, {} idle sockets connected ({} failed), {lost} not delivered within 5 s; the POST itself answered in p50 {} / p99 {}",
            idle_fleet.connected,
            idle_fleet.failures.len(),
            fmt_ms(quantile_ms(&post_hist, 0.5)),
            fmt_ms(quantile_ms(&post_hist, 0.99)),
        ));
        listener.close().await;
        idle_fleet.close().await;
        server.stop().await;
        // The database's share: the same transaction at the same rate.
        let script = "pgbench_chat_message.sql";
        let runnable = self.out_dir.join("pgbench").join(script);
        prepare_script(&self.database_url, &self.sql_dir.join(script), &runnable).await?;
        let mut vars = self.tenant_vars();
        vars.push(("session".into(), session.clone()));
        let pg = Pgbench {
            name: "chat_message".into(),
            script: runnable,
            vars,
            database_url: &self.database_url,
            load: Load {
                conns: 1,
                warmup: Duration::from_secs(1),
                duration: self.load.duration,
            },
            out_dir: &self.out_dir,
            rate: Some(rate),
        }
        .run()
        .await?;
        self.pg_note(
            "scenario 6 pgbench (the message transaction at the same rate)",
            &pg,
        );
        let p99 = quantile_ms(&hist, 0.99);
        self.rows.push(Row {
            scenario,
            service: fmt_ms(p99),
            baseline: format!(
                "{} (pgbench: the same transaction at {rate:.0}/s, p99; p50 {})",
                fmt_ms(pg.p99_ms()),
                fmt_ms(pg.p50_ms())
            ),
            ratio: times(ratio(p99, pg.p99_ms())),
            target: target.into(),
            verdict: verdict(p99 <= 10.0 && lost == 0),
            latency: format!("{} / {}", fmt_ms(quantile_ms(&hist, 0.5)), fmt_ms(p99)),
            rss: fmt_kib(peak as f64),
        });
        Ok(())
    }

    // ---------------------------------------------------------------- 7

    pub async fn presence(&mut self) -> anyhow::Result<()> {
        let agents = self.seed.agents.clone();
        let n = agents.len();
        let ttl = self.presence_ttl;
        let interval = self.heartbeat;
        let scenario = format!(
            "7 presence: {n} agents heartbeating every {} s (TTL {ttl} s), offline push after expiry, p99",
            interval.as_secs()
        );
        let target = "p99 ≤ 1 s";
        let config = ServiceConfig {
            presence_ttl_secs: Some(ttl),
            ..self.service.clone()
        };
        let server = self.start("s7-service", &config).await?;
        let probe_body = heartbeat_body(0, &agents[0]);
        let (status, text) = self
            .probe(
                &server,
                Req::post_json("/api/v1/chat/agent-presence", &probe_body).key(self.key()),
            )
            .await?;
        if status != StatusCode::OK {
            server.stop().await;
            let reason = format!(
                "POST /chat/agent-presence answered {status}: {}",
                text.chars().take(100).collect::<String>()
            );
            self.rows.push(Row::not_run(&scenario, target, &reason));
            return Ok(());
        }
        let sampler = server.sampler();
        // The listener: a console subscribed to presence.
        let ws_target = WsTarget {
            addr: server.addr,
            path: "/api/v1/ws".into(),
            api_key: Some(self.key().to_string()),
        };
        let mut socket = ws::open(0, &ws_target).await?;
        ws::subscribe(&mut socket, "presence").await?;
        let (events_tx, mut events_rx) =
            tokio::sync::mpsc::unbounded_channel::<(String, bool, chrono::DateTime<chrono::Utc>)>();
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = socket.next().await {
                if let Message::Text(text) = message {
                    let now = chrono::Utc::now();
                    let v: serde_json::Value =
                        serde_json::from_str(text.as_str()).unwrap_or_default();
                    if v["type"] == "presence" {
                        let user = v["data"]["userId"].as_str().unwrap_or("").to_string();
                        let online = v["data"]["online"].as_bool().unwrap_or(false);
                        let _ = events_tx.send((user, online, now));
                    }
                }
            }
        });

        // Heartbeats: agent i at i/n of the interval, then every interval.
        let conns = self.load.conns;
        let rounds = self.heartbeat_rounds;
        let started = tokio::time::Instant::now() + Duration::from_millis(200);
        let agents = Arc::new(agents);
        let key = self.key().to_string();
        let mut tasks = Vec::new();
        for c in 0..conns {
            let (agents, key) = (agents.clone(), key.clone());
            let addr = server.addr;
            tasks.push(tokio::spawn(async move {
                let mut conn = Conn::open(300 + c, addr).await?;
                let mut hist = stats::histogram();
                let mut last_seen: Vec<(usize, chrono::DateTime<chrono::Utc>)> = Vec::new();
                let mut errors = 0u64;
                let mut slots: Vec<(Duration, usize)> = Vec::new();
                for round in 0..rounds {
                    for i in (c..agents.len()).step_by(conns) {
                        let at =
                            interval.mul_f64(i as f64 / agents.len() as f64) + interval * round;
                        slots.push((at, i));
                    }
                }
                slots.sort();
                for (at, i) in slots {
                    tokio::time::sleep_until(started + at).await;
                    let req = Req::post_json(
                        "/api/v1/chat/agent-presence",
                        &heartbeat_body(i, &agents[i]),
                    )
                    .key(&key);
                    let sent = Instant::now();
                    match conn.send(&req).await {
                        Ok((status, body)) if status == StatusCode::OK => {
                            stats::record(&mut hist, sent.elapsed().as_micros() as u64);
                            let v: serde_json::Value =
                                serde_json::from_slice(&body).unwrap_or_default();
                            if let Some(seen) = v["lastSeen"]
                                .as_str()
                                .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
                            {
                                last_seen.push((i, seen.with_timezone(&chrono::Utc)));
                            }
                        }
                        _ => errors += 1,
                    }
                }
                anyhow::Ok((hist, last_seen, errors))
            }));
        }
        let mut hb_hist = stats::histogram();
        let mut last_seen: HashMap<usize, chrono::DateTime<chrono::Utc>> = HashMap::new();
        let mut hb_errors = 0;
        for task in tasks {
            let (hist, seen, errors) = task.await??;
            hb_hist.add(&hist).ok();
            hb_errors += errors;
            for (i, at) in seen {
                last_seen.insert(i, at);
            }
        }
        let heartbeats_done = chrono::Utc::now();
        // Wait for every expiry plus a margin far beyond the target.
        let latest_expiry = last_seen.values().max().copied().unwrap_or(heartbeats_done)
            + chrono::Duration::seconds(ttl as i64);
        let wait_until = latest_expiry + chrono::Duration::seconds(5);
        let index: HashMap<&str, usize> = agents
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        let mut online_pushes = 0u64;
        let mut early = 0u64;
        let mut lags = stats::histogram();
        let mut offline_seen = std::collections::HashSet::new();
        loop {
            let remaining = (wait_until - chrono::Utc::now())
                .to_std()
                .unwrap_or(Duration::ZERO);
            if remaining.is_zero() || offline_seen.len() == last_seen.len() {
                break;
            }
            let Ok(Some((user, online, at))) =
                tokio::time::timeout(remaining, events_rx.recv()).await
            else {
                break;
            };
            let Some(&i) = index.get(user.as_str()) else {
                continue;
            };
            if online {
                online_pushes += 1;
                continue;
            }
            let Some(seen) = last_seen.get(&i) else {
                continue;
            };
            let expiry = *seen + chrono::Duration::milliseconds((ttl * 1000) as i64);
            if at < expiry {
                early += 1;
                continue;
            }
            if offline_seen.insert(i) {
                let lag_us = (at - expiry).num_microseconds().unwrap_or(0);
                stats::record(&mut lags, lag_us.max(0) as u64);
            }
        }
        reader.abort();
        let peak = sampler.peak_kib();
        server.stop().await;
        let missing = last_seen.len() - offline_seen.len();
        self.note(format!(
            "scenario 7: {} heartbeats in {} rounds over {} connections ({} errors), heartbeat p50 {} / p99 {}; {online_pushes} online pushes, {} offline pushes after expiry, {missing} agents never pushed offline within 5 s of expiry, {early} offline pushes before expiry (an agent flapping while it heartbeats)",
            hb_hist.len(),
            rounds,
            conns,
            hb_errors,
            fmt_ms(quantile_ms(&hb_hist, 0.5)),
            fmt_ms(quantile_ms(&hb_hist, 0.99)),
            offline_seen.len(),
        ));
        let p99 = quantile_ms(&lags, 0.99);
        self.rows.push(Row {
            scenario,
            service: if lags.is_empty() {
                "no offline push".into()
            } else {
                fmt_ms(p99)
            },
            baseline: "–".into(),
            ratio: "–".into(),
            target: target.into(),
            verdict: if lags.is_empty() {
                Verdict::Missed
            } else {
                verdict(p99 <= 1000.0 && missing == 0)
            },
            latency: format!(
                "{} / {} (max {})",
                fmt_ms(quantile_ms(&lags, 0.5)),
                fmt_ms(p99),
                fmt_ms(quantile_ms(&lags, 1.0))
            ),
            rss: fmt_kib(peak as f64),
        });
        Ok(())
    }
}

fn heartbeat_body(i: usize, user_id: &str) -> serde_json::Value {
    json!({
        "userId": user_id,
        "name": format!("Agent {}", i + 1),
        "email": format!("agent{}@bench.example", i + 1),
        "role": "AGENT",
    })
}

fn hist_of(micros: &[u32]) -> hdrhistogram::Histogram<u64> {
    let mut h = stats::histogram();
    for m in micros {
        stats::record(&mut h, *m as u64);
    }
    h
}

/// The body of numbered chat message `seq` (a typical short chat line).
pub fn chat_body(seq: u64) -> String {
    format!(
        "{}Hello, I need help with my order: the tracking page shows no update since Monday.",
        ws::numbered_body(seq)
    )
}

/// The frame the bare server broadcasts for `seq`: the service's frame with
/// the number replaced (same size), or a frame shaped like it.
fn frame_for(seq: u64, template: Option<&str>) -> String {
    match template {
        Some(t) => t.replacen(&ws::numbered_body(0), &ws::numbered_body(seq), 1),
        None => json!({
            "type": "chat.message",
            "channel": "session:0190b5a2-7c4e-7d2a-9f1e-3b8c6d5e4f21",
            "data": {
                "id": "0190b5a2-7c4e-7d2a-9f1e-3b8c6d5e4f22",
                "sessionId": "0190b5a2-7c4e-7d2a-9f1e-3b8c6d5e4f21",
                "body": chat_body(seq),
                "senderType": "visitor",
                "senderId": null,
                "createdAt": "2026-11-21T10:04:05.123Z"
            }
        })
        .to_string(),
    }
}

/// The queries of scenario 4, each two words from the seed's vocabulary
/// (bench/sql/seed_kb.sql): the service parses the first as a whole word
/// and the last as a prefix; the pgbench script gets the same split.
pub const SEARCH_TERMS: &[&str] = &[
    "password reset",
    "refund policy",
    "shipping tracking",
    "account locked",
    "export data",
    "two factor",
    "billing address",
    "cancel subscription",
    "mobile app",
    "invoice download",
];

/// `'a', 'b'` for an SQL array literal.
fn sql_list(items: impl Iterator<Item = String>) -> String {
    items
        .map(|i| format!("'{}'", i.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A pgbench script from bench/sql made runnable: `--@if-table T ` lines
/// kept (without the marker) when table T exists, dropped otherwise; the
/// search terms filled in.
pub async fn prepare_script(
    database_url: &str,
    source: &std::path::Path,
    dest: &std::path::Path,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(source).with_context(|| format!("reading {}", source.display()))?;
    let mut out = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--@if-table ") {
            let (table, statement) = rest.split_once(' ').unwrap_or((rest, ""));
            if crate::setup::table_exists(database_url, table).await? {
                out.push_str(statement);
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let words = sql_list(
        SEARCH_TERMS
            .iter()
            .map(|t| t.rsplit_once(' ').map_or("", |(w, _)| w).to_string()),
    );
    let prefixes = sql_list(
        SEARCH_TERMS
            .iter()
            .map(|t| format!("{}:*", t.rsplit(' ').next().unwrap_or(t))),
    );
    let out = out
        .replace("{{WORDS}}", &words)
        .replace("{{PREFIXES}}", &prefixes);
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(dest, out)?;
    Ok(())
}
