//! `db_query_duration_seconds{store}`: every statement run through
//! `db::Query` is timed and labelled with the store module that built it
//! (`tickets/store/create`, `outbox/store`, `kb/store/search`, …), taken from the
//! caller's source file when the query is created (`#[track_caller]` on
//! `Query::new`). A module label, not a function one: as cheap as a
//! lookup, bounded by the number of store files, and it still tells which
//! slice's queries are slow. Statements run outside `Query` (migrations,
//! the few `on_db!` pool calls) are not timed.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use dashmap::DashMap;
use metrics::Histogram;
use rustc_hash::FxBuildHasher;

/// The histogram's name.
pub const DB_QUERY_DURATION: &str = "db_query_duration_seconds";

/// Whether statements are timed: set once, when the service installs its
/// metrics recorder (the store sits below the metrics module and cannot ask
/// it). Off in tests and tools that record nothing.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns statement timing on (the metrics recorder is installed).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// One histogram per store module, made on its first query. Keyed by
/// source file names, a closed set, so a fast hash is safe (as for routes).
static BY_STORE: LazyLock<DashMap<&'static str, Histogram, FxBuildHasher>> =
    LazyLock::new(|| DashMap::with_hasher(FxBuildHasher));

/// The store label of a source file: `src/tickets/store/create.rs` →
/// `tickets/store/create`.
pub fn store_label(file: &'static str) -> &'static str {
    let file = file.strip_prefix("src/").unwrap_or(file);
    file.strip_suffix(".rs").unwrap_or(file)
}

/// Times one statement; recorded when dropped (errors included).
pub struct QueryTimer {
    running: Option<(&'static str, Instant)>,
}

impl QueryTimer {
    /// Starts timing a statement of `store` (a label from `store_label`);
    /// does nothing while recording is off.
    pub fn start(store: &'static str) -> QueryTimer {
        QueryTimer {
            running: ENABLED
                .load(Ordering::Relaxed)
                .then(|| (store, Instant::now())),
        }
    }
}

impl Drop for QueryTimer {
    fn drop(&mut self) {
        let Some((store, started)) = self.running else {
            return;
        };
        let seconds = started.elapsed().as_secs_f64();
        if let Some(histogram) = BY_STORE.get(store) {
            histogram.record(seconds);
            return;
        }
        BY_STORE
            .entry(store)
            .or_insert_with(|| metrics::histogram!(DB_QUERY_DURATION, "store" => store))
            .record(seconds);
    }
}
