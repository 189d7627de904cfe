//! Gauges read when Prometheus scrapes (each scrape is one cheap query and
//! one Redis call, rather than a timer on every node): the store pool's
//! connections, the outbox's depth and its oldest due job, and the agents
//! online. A source that fails or is slow keeps its last values.

use std::time::Duration;

use crate::db::Db;
use crate::outbox::Jobs;
use crate::outbox::store::KindDepth;
use crate::realtime::Realtime;

use super::names;

/// How long a scrape waits for the store or Redis.
const SAMPLE_TIMEOUT: Duration = Duration::from_secs(2);

/// Sets every sampled gauge from the store, the outbox's kinds and presence.
pub async fn refresh(db: &Db, jobs: &Jobs, realtime: &Realtime) {
    pool(db);
    let depth = tokio::time::timeout(SAMPLE_TIMEOUT, crate::outbox::store::depth(db));
    match depth.await {
        Ok(Ok(depth)) => outbox(&jobs.kinds(), &depth),
        Ok(Err(error)) => tracing::warn!(%error, "metrics: outbox depth not read"),
        Err(_) => tracing::warn!("metrics: outbox depth not read within 2 s"),
    }
    let online = tokio::time::timeout(SAMPLE_TIMEOUT, realtime.presence.online_count());
    if let Ok(Ok(online)) = online.await {
        metrics::gauge!(names::PRESENCE_ONLINE_AGENTS).set(online as f64);
    }
}

fn pool(db: &Db) {
    let counts = db.connections();
    for (state, count) in [
        ("idle", counts.idle),
        ("in_use", counts.in_use),
        ("max", counts.max),
    ] {
        metrics::gauge!(names::DB_POOL_CONNECTIONS, "state" => state).set(f64::from(count));
    }
}

/// Every registered kind gets its series, at zero when it has no jobs.
fn outbox(kinds: &[&'static str], depth: &[KindDepth]) {
    for kind in kinds {
        let row = depth.iter().find(|row| row.kind == *kind);
        let count = |pick: fn(&KindDepth) -> i64| row.map_or(0.0, |row| pick(row) as f64);
        for (state, value) in [
            ("due", count(|r| r.due)),
            ("running", count(|r| r.running)),
            ("scheduled", count(|r| r.scheduled)),
        ] {
            metrics::gauge!(names::OUTBOX_JOBS, "kind" => *kind, "state" => state).set(value);
        }
        let age = row.and_then(|row| row.oldest_due_age_secs).unwrap_or(0.0);
        metrics::gauge!(names::OUTBOX_OLDEST_DUE_AGE, "kind" => *kind).set(age.max(0.0));
    }
}
