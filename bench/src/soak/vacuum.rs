//! A stand-in for autovacuum when the Postgres server under test has it off.
//!
//! A production server runs autovacuum; a development server may not (this
//! machine's has it off). Without it nothing reclaims dead rows, and that is
//! the server's configuration, not the service's. A whole-database `VACUUM`
//! every minute is not what autovacuum does either: the hot small tables
//! (a change-feed counter bumped by every write, sessions touched by every
//! message, deliveries updated by every attempt) pile up tens of thousands
//! of dead versions in a minute, while the big tables are walked for
//! nothing. So this follows autovacuum's own trigger: a table is vacuumed
//! when its dead rows exceed 50 + 20% of its live rows (the defaults of
//! `autovacuum_vacuum_threshold` and `autovacuum_vacuum_scale_factor`),
//! checked at every sample, one table at a time like one autovacuum worker.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::setup::{Sql, psql};

/// Tables past autovacuum's default trigger, the most dead rows first.
const DUE_TABLES: &str = "SELECT relname FROM pg_stat_user_tables \
     WHERE n_dead_tup > 50 + 0.2 * n_live_tup ORDER BY n_dead_tup DESC";

#[derive(Default)]
pub struct Vacuum {
    running: AtomicBool,
    /// Checks that found at least one table due.
    pub passes: AtomicU64,
    /// `VACUUM` statements run, one table each.
    pub tables: AtomicU64,
    pub failures: AtomicU64,
}

impl Vacuum {
    /// Starts one pass in the background unless the last is still running
    /// (a pass over a big table can outlast a sample interval).
    pub fn tick(self: &Arc<Self>, database_url: &str) {
        if self.running.swap(true, Ordering::AcqRel) {
            return;
        }
        let vacuum = self.clone();
        let url = database_url.to_string();
        tokio::spawn(async move {
            if let Err(error) = vacuum.pass(&url).await {
                vacuum.failures.fetch_add(1, Ordering::Relaxed);
                eprintln!("== VACUUM pass failed: {error:#}");
            }
            vacuum.running.store(false, Ordering::Release);
        });
    }

    async fn pass(&self, url: &str) -> anyhow::Result<()> {
        let due = psql(url, Sql::Text(DUE_TABLES), &[]).await?;
        let tables: Vec<&str> = due.lines().filter(|l| !l.is_empty()).collect();
        if tables.is_empty() {
            return Ok(());
        }
        self.passes.fetch_add(1, Ordering::Relaxed);
        for table in tables {
            // Names come from the catalogue; quote them all the same.
            let statement = format!("VACUUM (ANALYZE) \"{}\"", table.replace('"', "\"\""));
            psql(url, Sql::Text(&statement), &[]).await?;
            self.tables.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.passes.load(Ordering::Relaxed),
            self.tables.load(Ordering::Relaxed),
            self.failures.load(Ordering::Relaxed),
        )
    }
}
