//! Scenario 10: lists and search at scale. A company with 1,000,000
//! tickets beside the benchmark company's 2,000, the same requests to both
//! in one run, each at half its own maximum rate: the first page with its
//! exact total, a page deep in the list by cursor and by offset, and two
//! searches (a ticket number, and a word in 10% of the subjects).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use hyper::StatusCode;

use super::Ctx;
use super::rows::{RowBuilder, ratio};
use crate::http::{self, Conn, Load, MakeRequest, Req};
use crate::process::Server;
use crate::report::Row;
use crate::setup::{self, Sql, Tenant};
use crate::stats::{Throughput, fmt_ms, fmt_rate};

/// How deep the deep pages are in the large company's OPEN list.
const DEEP: u64 = 50_000;
/// The page the cursor walk asks for (the API's maximum).
const WALK_PAGE: u64 = 100;

/// One measured request kind, asked of both companies.
struct Kind {
    label: &'static str,
    target: Target,
}

enum Target {
    /// Within `2×` the small company's p99 and at most 15 ms.
    NearSmall,
    /// At most this many milliseconds.
    AtMost(f64),
    /// Context only: documented, steered away from.
    None,
}

/// The paths of one company's requests, in the order of [`KINDS`].
struct Paths {
    name: &'static str,
    key: String,
    paths: Vec<String>,
}

const KINDS: [Kind; 5] = [
    Kind {
        label: "first page `GET /tickets?status=OPEN&limit=20` (exact total)",
        target: Target::NearSmall,
    },
    Kind {
        label: "deep page by cursor (`after=`)",
        target: Target::NearSmall,
    },
    Kind {
        label: "deep page by `offset=`",
        target: Target::None,
    },
    Kind {
        label: "search for a ticket number (`q=<number>`, 1 match)",
        target: Target::AtMost(50.0),
    },
    Kind {
        label: "search for a common word (`q=refund`, 10% of tickets)",
        target: Target::AtMost(50.0),
    },
];

impl Ctx {
    pub async fn scale(&mut self, tickets: u64) -> anyhow::Result<()> {
        if self.seed.tickets.is_none() {
            for kind in &KINDS {
                self.rows.push(Row::not_run(
                    &format!("10 {}", kind.label),
                    "see the issue",
                    "no tickets table (tickets area not merged)",
                ));
            }
            return Ok(());
        }
        let big = match &self.scale_tenant {
            Some(tenant) => tenant.clone(),
            None => self.seed_large_company(tickets).await?,
        };
        self.scale_tenant = Some(big.clone());
        let server = self.start("s10-service", &self.service).await?;
        let result = self.measure_scale(&server, &big, tickets).await;
        server.stop().await;
        result
    }

    async fn seed_large_company(&mut self, tickets: u64) -> anyhow::Result<Tenant> {
        let started = Instant::now();
        let tenant =
            setup::create_tenant(&self.service.bin, &self.database_url, "Scale company").await?;
        let count = tickets.to_string();
        setup::psql(
            &self.database_url,
            Sql::File(&self.sql_dir.join("seed_scale.sql")),
            &[
                ("company", tenant.company.as_str()),
                ("entity", tenant.entity.as_str()),
                ("tickets", count.as_str()),
            ],
        )
        .await?;
        setup::psql(
            &self.database_url,
            Sql::Text("VACUUM ANALYZE tickets, ticket_search, ticket_counts"),
            &[],
        )
        .await?;
        setup::psql(&self.database_url, Sql::Text("CHECKPOINT"), &[]).await?;
        self.note(format!(
            "scenario 10: seeded {tickets} tickets of one company in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
        Ok(tenant)
    }

    async fn measure_scale(
        &mut self,
        server: &Server,
        big: &Tenant,
        tickets: u64,
    ) -> anyhow::Result<()> {
        let small_key = self.key().to_string();
        let small_open = open_total(server, &small_key).await?;
        let big_open = open_total(server, &big.key).await?;
        // The small company has no page 50,000 deep: its deep page is the
        // middle of its OPEN list.
        let small_depth = DEEP.min(small_open / 2);
        let big_depth = DEEP.min(big_open / 2);
        self.note(format!(
            "scenario 10: OPEN tickets {big_open} (large company, {tickets} tickets) and {small_open} (small, deep pages at {small_depth})"
        ));
        let companies = [
            company_paths(server, "large", &big.key, big_depth, tickets / 2).await?,
            company_paths(server, "small", &small_key, small_depth, 1000).await?,
        ];
        for (i, kind) in KINDS.iter().enumerate() {
            let mut p99 = Vec::new();
            for company in &companies {
                let path = company.paths[i].clone();
                let (max, at_half) = self.max_then_half(server, &company.key, &path).await?;
                self.note(format!(
                    "scenario 10 {} ({}): max {}, at half load p50 {} / p99 {}, {} errors",
                    kind.label,
                    company.name,
                    fmt_rate(max.rate(), "req/s"),
                    fmt_ms(at_half.p50_ms()),
                    fmt_ms(at_half.p99_ms()),
                    at_half.errors
                ));
                p99.push((at_half.p99_ms(), at_half.errors, max.rate()));
            }
            let (big_p99, big_errors, big_rate) = p99[0];
            let (small_p99, _, small_rate) = p99[1];
            let builder = RowBuilder::new(format!("10 {} at {tickets} tickets, p99", kind.label))
                .service(fmt_ms(big_p99))
                .baseline(format!("{} (the 2,000-ticket company)", fmt_ms(small_p99)))
                .ratio_times(ratio(big_p99, small_p99))
                .latency(format!(
                    "max rate {} (small {})",
                    fmt_rate(big_rate, "req/s"),
                    fmt_rate(small_rate, "req/s")
                ));
            let row = match kind.target {
                Target::NearSmall => builder.met_if(
                    "≤ 2× the small company's p99 and ≤ 15 ms",
                    big_errors == 0 && big_p99 <= 2.0 * small_p99 && big_p99 <= 15.0,
                ),
                Target::AtMost(ms) => builder.met_if(
                    &format!("p99 ≤ {ms:.0} ms"),
                    big_errors == 0 && big_p99 <= ms,
                ),
                Target::None => builder,
            };
            self.rows.push(row.build());
        }
        Ok(())
    }

    /// The closed-loop maximum rate of `path`, then an open-loop run at
    /// half that rate (the p99 the targets read).
    async fn max_then_half(
        &self,
        server: &Server,
        key: &str,
        path: &str,
    ) -> anyhow::Result<(Throughput, Throughput)> {
        let (key, path) = (key.to_string(), path.to_string());
        let make: MakeRequest = Arc::new(move |_| Req::get(&path).key(&key));
        let short = Load {
            conns: self.load.conns,
            warmup: Duration::from_secs(1),
            duration: self.load.duration / self.slices.max(1),
        };
        let max = http::run_load(server.addr, short, StatusCode::OK, make.clone()).await?;
        let half = (max.rate() / 2.0).max(1.0);
        let at_half = http::run_rate(
            server.addr,
            self.load_for_latency(),
            half,
            StatusCode::OK,
            make,
        )
        .await?;
        Ok((max, at_half))
    }
}

async fn get_json(server: &Server, key: &str, path: &str) -> anyhow::Result<serde_json::Value> {
    let mut conn = Conn::open(0, server.addr).await?;
    conn.json(&Req::get(path).key(key), StatusCode::OK).await
}

async fn open_total(server: &Server, key: &str) -> anyhow::Result<u64> {
    let page = get_json(server, key, "/api/v1/tickets?status=OPEN&limit=1").await?;
    page["total"].as_u64().context("the list's total")
}

/// The five paths of one company; the cursor is found by walking its OPEN
/// list `depth` tickets deep, 100 at a time.
async fn company_paths(
    server: &Server,
    name: &'static str,
    key: &str,
    depth: u64,
    number: u64,
) -> anyhow::Result<Paths> {
    let list = "/api/v1/tickets?status=OPEN";
    let mut cursor: Option<String> = None;
    let mut walked = 0;
    while walked < depth {
        let step = WALK_PAGE.min(depth - walked);
        let path = match &cursor {
            Some(after) => format!("{list}&limit={step}&after={after}"),
            None => format!("{list}&limit={step}"),
        };
        let page = get_json(server, key, &path).await?;
        cursor = Some(
            page["nextCursor"]
                .as_str()
                .context("the list ended before the deep page")?
                .to_string(),
        );
        walked += step;
    }
    let deep = match &cursor {
        Some(after) => format!("{list}&limit=20&after={after}"),
        None => format!("{list}&limit=20"),
    };
    Ok(Paths {
        name,
        key: key.to_string(),
        paths: vec![
            format!("{list}&limit=20"),
            deep,
            format!("{list}&limit=20&offset={depth}"),
            format!("/api/v1/tickets?q={number}&limit=20"),
            "/api/v1/tickets?q=refund&limit=20".to_string(),
        ],
    })
}
