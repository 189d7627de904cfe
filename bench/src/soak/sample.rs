//! The soak's samples: the service's RSS and open descriptors from /proc,
//! every table's size and rows from Postgres, Redis `used_memory`, the
//! outbox's pending jobs and the load's counters; one CSV line each.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::SoakArgs;
use super::load::Counters;
use super::receiver::Receiver;
use crate::process::{Server, rss_kib};
use crate::setup::{Sql, psql};

/// One table at one sample.
#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub bytes: u64,
    pub rows: u64,
}

#[derive(Clone, Debug)]
pub struct Sample {
    pub secs: f64,
    pub rss_kib: u64,
    pub fds: u64,
    pub redis_used_bytes: u64,
    pub outbox_pending: u64,
    pub errors: u64,
    pub requests: u64,
    pub frames_sent: u64,
    pub frames_received: u64,
    pub webhooks_received: u64,
    /// `n_dead_tup` summed over the schema's tables (the statistics'
    /// estimate): what vacuum has yet to reclaim.
    pub dead_rows: u64,
    /// The age of the oldest open transaction on the database, in seconds:
    /// one held open stops vacuum from reclaiming anything newer.
    pub oldest_transaction_secs: f64,
    pub tables: Vec<Table>,
}

impl Sample {
    pub fn db_bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.bytes).sum()
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    pub fn summary(&self) -> String {
        format!(
            "{:>5.0} s: RSS {} MiB, {} fds, db {} MiB ({} dead rows, oldest transaction {:.1} s), Redis {} MiB, outbox {} pending, {} requests, {} frames out / {} in, {} webhooks, {} errors",
            self.secs,
            self.rss_kib / 1024,
            self.fds,
            self.db_bytes() / (1 << 20),
            self.dead_rows,
            self.oldest_transaction_secs,
            self.redis_used_bytes / (1 << 20),
            self.outbox_pending,
            self.requests,
            self.frames_sent,
            self.frames_received,
            self.webhooks_received,
            self.errors
        )
    }
}

/// How the outbox ended after the load stopped.
#[derive(Clone, Debug)]
pub struct Drain {
    pub pending_at_stop: u64,
    pub pending_at_end: u64,
    pub waited: Duration,
}

impl Drain {
    pub fn drained(&self) -> bool {
        self.pending_at_end == 0
    }
}

pub struct Sampler {
    pid: u32,
    database_url: String,
    redis_url: String,
    csv: std::fs::File,
    /// The tables of the first sample: the CSV's columns.
    columns: Option<Vec<String>>,
}

impl Sampler {
    pub async fn new(server: &Server, args: &SoakArgs, csv: &Path) -> anyhow::Result<Sampler> {
        Ok(Sampler {
            pid: server.pid,
            database_url: args.database_url.clone(),
            redis_url: args.redis_url.clone(),
            csv: std::fs::File::create(csv)?,
            columns: None,
        })
    }

    pub async fn take(
        &mut self,
        elapsed: Duration,
        counters: &Counters,
        hooks: &Receiver,
    ) -> anyhow::Result<Sample> {
        let sample = Sample {
            secs: elapsed.as_secs_f64(),
            rss_kib: rss_kib(self.pid).unwrap_or(0),
            fds: open_fds(self.pid),
            redis_used_bytes: redis_used_memory(&self.redis_url).await.unwrap_or(0),
            outbox_pending: self.outbox_pending().await?,
            errors: Counters::get(&counters.errors),
            requests: Counters::get(&counters.requests),
            frames_sent: Counters::get(&counters.frames_sent),
            frames_received: Counters::get(&counters.frames_received),
            webhooks_received: hooks.counts().received,
            dead_rows: self.dead_rows().await?,
            oldest_transaction_secs: self.oldest_transaction_secs().await?,
            tables: self.tables().await?,
        };
        self.write(&sample)?;
        Ok(sample)
    }

    /// Polls the outbox every 2 s until nothing is pending or `limit` passed.
    pub async fn wait_for_drain(&self, limit: Duration) -> anyhow::Result<Drain> {
        let started = tokio::time::Instant::now();
        let pending_at_stop = self.outbox_pending().await?;
        let mut pending = pending_at_stop;
        while pending > 0 && started.elapsed() < limit {
            tokio::time::sleep(Duration::from_secs(2)).await;
            pending = self.outbox_pending().await?;
        }
        Ok(Drain {
            pending_at_stop,
            pending_at_end: pending,
            waited: started.elapsed(),
        })
    }

    async fn outbox_pending(&self) -> anyhow::Result<u64> {
        self.scalar(
            "SELECT count(*) FROM outbox_jobs WHERE status = 'pending'",
            "outbox count",
        )
        .await
    }

    async fn dead_rows(&self) -> anyhow::Result<u64> {
        self.scalar(
            "SELECT COALESCE(SUM(n_dead_tup), 0) FROM pg_stat_user_tables",
            "dead rows",
        )
        .await
    }

    /// Other sessions' open transactions only: this query's own is not one
    /// the service holds.
    async fn oldest_transaction_secs(&self) -> anyhow::Result<f64> {
        self.scalar(
            "SELECT GREATEST(EXTRACT(EPOCH FROM max(now() - xact_start)), 0) \
             FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() \
             AND xact_start IS NOT NULL",
            "oldest transaction",
        )
        .await
    }

    /// The one value `sql` selects.
    async fn scalar<T: std::str::FromStr>(&self, sql: &str, what: &'static str) -> anyhow::Result<T>
    where
        T::Err: std::error::Error + Send + Sync + 'static,
    {
        let text = psql(&self.database_url, Sql::Text(sql), &[]).await?;
        text.trim().parse().context(what)
    }

    /// Every table of the schema: its total size (indexes and TOAST too)
    /// and its exact row count.
    async fn tables(&self) -> anyhow::Result<Vec<Table>> {
        let text = psql(
            &self.database_url,
            Sql::Text(
                "SELECT c.relname || '|' || pg_total_relation_size(c.oid) || '|' || \
                 (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I', \
                 c.relname), false, true, '')))[1]::text \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname",
            ),
            &[],
        )
        .await?;
        text.lines()
            .map(|line| {
                let mut parts = line.split('|');
                let (Some(name), Some(bytes), Some(rows)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    anyhow::bail!("unexpected table line `{line}`");
                };
                Ok(Table {
                    name: name.to_string(),
                    bytes: bytes.parse()?,
                    rows: rows.parse()?,
                })
            })
            .collect()
    }

    fn write(&mut self, sample: &Sample) -> anyhow::Result<()> {
        if self.columns.is_none() {
            let names: Vec<String> = sample.tables.iter().map(|t| t.name.clone()).collect();
            let mut header = String::from(
                "secs,rss_kib,fds,redis_used_memory,outbox_pending,errors,requests,frames_sent,frames_received,webhooks_received,dead_rows,oldest_transaction_secs",
            );
            for name in &names {
                header.push_str(&format!(",{name}_bytes,{name}_rows"));
            }
            writeln!(self.csv, "{header}")?;
            self.columns = Some(names);
        }
        let columns = self.columns.clone().unwrap_or_default();
        let mut line = format!(
            "{:.1},{},{},{},{},{},{},{},{},{},{},{:.1}",
            sample.secs,
            sample.rss_kib,
            sample.fds,
            sample.redis_used_bytes,
            sample.outbox_pending,
            sample.errors,
            sample.requests,
            sample.frames_sent,
            sample.frames_received,
            sample.webhooks_received,
            sample.dead_rows,
            sample.oldest_transaction_secs
        );
        for name in &columns {
            match sample.table(name) {
                Some(t) => line.push_str(&format!(",{},{}", t.bytes, t.rows)),
                None => line.push_str(",,"),
            }
        }
        writeln!(self.csv, "{line}")?;
        Ok(())
    }
}

fn open_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |dir| dir.count() as u64)
}

/// The 1, 5 and 15 minute load averages, as /proc/loadavg writes them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// `used_memory` from `INFO memory` over a raw connection.
async fn redis_used_memory(url: &str) -> Option<u64> {
    let hostport = url.trim_start_matches("redis://").split('/').next()?;
    let hostport = hostport.rsplit('@').next()?;
    let mut stream = tokio::net::TcpStream::connect(hostport).await.ok()?;
    stream.write_all(b"INFO memory\r\n").await.ok()?;
    let mut text = String::new();
    let mut buf = vec![0u8; 16 * 1024];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while !text.contains("used_memory_human") {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}
