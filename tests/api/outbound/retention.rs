//! The retention pass: old finished deliveries with their attempts, old
//! finished jobs and old events go; pending, leased and recent rows stay;
//! deletes come in batches of at most 1,000 rows; the worker runs on its
//! interval; idempotency records go once they expire.

use std::time::Duration;

use serde_json::json;
use supportdesk::db::{Backend as DbBackend, Query};
use supportdesk::retention::{self, BATCH, Policy};
use supportdesk::time::Timestamp;
use uuid::Uuid;

use super::support::create_webhook;
use crate::backend_tests;
use crate::idempotency::post_keyed;
use crate::support::{Backend, TestApp, eventually, retention_pass_with};

backend_tests!(
    a_pass_deletes_old_finished_rows_and_keeps_pending_leased_and_recent_ones,
    a_pass_over_100_000_old_rows_deletes_them_in_batches_of_at_most_1000,
    two_nodes_passing_at_once_delete_each_row_once,
    the_worker_runs_a_pass_every_interval,
    expired_idempotency_records_go_and_kept_ones_stay,
);

/// Rows older than this minute are past retention in these tests.
const RETENTION: Duration = Duration::from_secs(60);

fn policy() -> Policy {
    Policy {
        retention: RETENTION,
        job_retention: RETENTION,
        chat_retention: None,
    }
}

fn hours_ago(hours: u64) -> Timestamp {
    let now = Timestamp::now();
    Timestamp::from_datetime(now.0 - chrono::Duration::hours(i64::try_from(hours).expect("hours")))
}

async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

/// Rows written straight to the tables, with the times a test needs.
struct Rows<'a> {
    app: &'a TestApp,
    company: Uuid,
    webhook: Uuid,
}

impl Rows<'_> {
    async fn delivery(&self, status: &str, created_at: Timestamp) -> Uuid {
        let id = Uuid::now_v7();
        Query::new(
            "INSERT INTO webhook_deliveries (id, webhook_id, company_id, mode, event_id, event, \
             body, status, attempts, created_at, updated_at) \
             VALUES ($1, $2, $3, 'test', $4, 'ticket.created', '{}', $5, 1, $6, $6)",
        )
        .bind(id)
        .bind(self.webhook)
        .bind(self.company)
        .bind(Uuid::now_v7())
        .bind(status)
        .bind(created_at)
        .execute(&self.app.state.db)
        .await
        .expect("delivery");
        id
    }

    async fn attempt(&self, delivery: Uuid, attempt: i64) -> Uuid {
        let id = Uuid::now_v7();
        Query::new(
            "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, \
             duration_ms, success) VALUES ($1, $2, $3, $4, 5, FALSE)",
        )
        .bind(id)
        .bind(delivery)
        .bind(attempt)
        .bind(Timestamp::now())
        .execute(&self.app.state.db)
        .await
        .expect("attempt");
        id
    }

    /// A job; `leased_until` set means a worker holds it.
    async fn job(
        &self,
        id: Uuid,
        status: &str,
        updated_at: Timestamp,
        leased_until: Option<Timestamp>,
    ) -> Uuid {
        Query::new(
            "INSERT INTO outbox_jobs (id, kind, company_id, mode, payload, status, attempts, \
             run_at, locked_until, created_at, updated_at) \
             VALUES ($1, 'email', $2, 'test', $3, $4, 0, $5, $6, $5, $5)",
        )
        .bind(id)
        .bind(self.company)
        .bind(json!({}))
        .bind(status)
        .bind(updated_at)
        .bind(leased_until)
        .execute(&self.app.state.db)
        .await
        .expect("job");
        id
    }

    async fn event(&self, created_at: Timestamp) -> Uuid {
        let id = Uuid::now_v7();
        Query::new(
            "INSERT INTO events (id, company_id, mode, name, data, created_at) \
             VALUES ($1, $2, 'test', 'ticket.created', $3, $4)",
        )
        .bind(id)
        .bind(self.company)
        .bind(json!({}))
        .bind(created_at)
        .execute(&self.app.state.db)
        .await
        .expect("event");
        id
    }

    async fn exists(&self, table: &str, id: Uuid) -> bool {
        let count: i64 = Query::new(format!("SELECT COUNT(*) FROM {table} WHERE id = $1"))
            .bind(id)
            .fetch_scalar(&self.app.state.db)
            .await
            .expect("count");
        count == 1
    }
}

async fn rows(app: &TestApp) -> Rows<'_> {
    let acme = app.company().await;
    let (webhook, _) = create_webhook(
        app,
        &acme.key,
        "https://hooks.example.com/in",
        &["ticket.created"],
    )
    .await;
    Rows {
        app,
        company: acme.company.id,
        webhook: Uuid::parse_str(&webhook).expect("webhook id"),
    }
}

async fn a_pass_deletes_old_finished_rows_and_keeps_pending_leased_and_recent_ones(
    backend: Backend,
) {
    let app = quiet(backend).await;
    let rows = rows(&app).await;
    let old = hours_ago(2);
    let lease = Some(Timestamp::now().plus(Duration::from_secs(600)));

    let delivered = rows.delivery("delivered", old).await;
    let failed = rows.delivery("failed", old).await;
    let old_attempts = [
        rows.attempt(delivered, 1).await,
        rows.attempt(delivered, 2).await,
        rows.attempt(failed, 1).await,
    ];
    let pending = rows.delivery("pending", old).await;
    let pending_attempt = rows.attempt(pending, 1).await;
    rows.job(pending, "pending", old, lease).await;
    // Delivered, but its job has not ended yet (the two move together; the
    // pass makes sure anyway).
    let still_running = rows.delivery("delivered", old).await;
    rows.job(still_running, "pending", old, lease).await;
    let recent = rows.delivery("delivered", Timestamp::now()).await;
    let recent_attempt = rows.attempt(recent, 1).await;

    let done = rows.job(Uuid::now_v7(), "done", old, None).await;
    let gave_up = rows.job(Uuid::now_v7(), "failed", old, None).await;
    let due = rows.job(Uuid::now_v7(), "pending", old, None).await;
    let leased = rows.job(Uuid::now_v7(), "pending", old, lease).await;
    let recent_job = rows
        .job(Uuid::now_v7(), "done", Timestamp::now(), None)
        .await;

    let old_event = rows.event(old).await;
    let recent_event = rows.event(Timestamp::now()).await;

    let report = retention_pass_with(&app, policy()).await;

    for (table, id) in [
        ("webhook_deliveries", delivered),
        ("webhook_deliveries", failed),
        ("outbox_jobs", done),
        ("outbox_jobs", gave_up),
        ("events", old_event),
    ]
    .into_iter()
    .chain(old_attempts.map(|id| ("webhook_delivery_attempts", id)))
    {
        assert!(!rows.exists(table, id).await, "{table} {id} deleted");
    }
    for (table, id) in [
        ("webhook_deliveries", pending),
        ("webhook_delivery_attempts", pending_attempt),
        ("outbox_jobs", pending),
        ("webhook_deliveries", still_running),
        ("webhook_deliveries", recent),
        ("webhook_delivery_attempts", recent_attempt),
        ("outbox_jobs", due),
        ("outbox_jobs", leased),
        ("outbox_jobs", recent_job),
        ("events", recent_event),
    ] {
        assert!(rows.exists(table, id).await, "{table} {id} kept");
    }
    let deleted = |table| report.table(table).expect(table).rows_deleted;
    assert_eq!(deleted("webhook_delivery_attempts"), 3);
    assert_eq!(deleted("webhook_deliveries"), 2);
    assert_eq!(deleted("outbox_jobs"), 2);
    assert_eq!(deleted("events"), 1);
}

async fn a_pass_over_100_000_old_rows_deletes_them_in_batches_of_at_most_1000(backend: Backend) {
    // Writing 100,000 rows in one statement may outlast the service's
    // statement timeout on a loaded machine; the pass is what is tested.
    let app = TestApp::spawn_with(backend, |c| {
        c.run_workers = false;
        c.statement_timeout = None;
    })
    .await;
    let rows = rows(&app).await;
    let db = &app.state.db;
    let new_id = match db.backend() {
        DbBackend::Postgres => "gen_random_uuid()",
        DbBackend::Sqlite => "randomblob(16)",
    };
    Query::new(format!(
        "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) \
         INSERT INTO events (id, company_id, mode, name, data, created_at) \
         SELECT {new_id}, $1, 'test', 'ticket.created', $2, $3 FROM n"
    ))
    .bind(rows.company)
    .bind(json!({}))
    .bind(hours_ago(2))
    .execute(db)
    .await
    .expect("100,000 old events");

    let report = retention_pass_with(&app, policy()).await;

    let events = report.table("events").expect("events");
    assert_eq!(events.rows_deleted, 100_000);
    assert_eq!(events.largest_batch, BATCH);
    assert_eq!(events.batches, 100_000 / BATCH);
    let left: i64 = Query::new("SELECT COUNT(*) FROM events WHERE created_at < $1")
        .bind(hours_ago(1))
        .fetch_scalar(db)
        .await
        .expect("count");
    assert_eq!(left, 0);
}

async fn two_nodes_passing_at_once_delete_each_row_once(backend: Backend) {
    let app = quiet(backend).await;
    let peer = app.spawn_peer().await;
    let rows = rows(&app).await;
    for _ in 0..30 {
        rows.event(hours_ago(2)).await;
    }
    let (here, there) = tokio::join!(
        retention::run_pass(
            &app.state.db,
            &app.state.attachments,
            policy(),
            app.state.clock.now()
        ),
        retention::run_pass(
            &peer.state.db,
            &peer.state.attachments,
            policy(),
            peer.state.clock.now()
        ),
    );
    let deleted: u64 = [here, there]
        .into_iter()
        .map(|report| report.expect("pass ran").map_or(0, |r| r.rows_deleted()))
        .sum();
    assert_eq!(deleted, 30);
    peer.stop().await;
}

async fn the_worker_runs_a_pass_every_interval(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.retention = RETENTION;
        c.retention_interval = Duration::from_millis(100);
    })
    .await;
    let rows = rows(&app).await;
    let old_event = rows.event(hours_ago(2)).await;
    eventually("the worker deletes the old event", || async {
        !rows.exists("events", old_event).await
    })
    .await;
}

/// A key whose record has expired is deleted; one still kept stays.
async fn expired_idempotency_records_go_and_kept_ones_stay(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.run_workers = false;
        c.idempotency_ttl = Duration::from_secs(1);
    })
    .await;
    // A node keeping its records an hour, on the same store.
    let keeping = app
        .spawn_peer_with(|c| {
            c.run_workers = false;
            c.idempotency_ttl = Duration::from_secs(3600);
        })
        .await;
    let acme = app.company().await;
    let body = json!({"subject": "Lost parcel", "entityId": acme.entity.id});
    let expiring = post_keyed(&app, "/tickets", &acme.key, "expiring", &body).await;
    assert_eq!(expiring.status, 201, "{}", expiring.text);
    let kept = post_keyed(&keeping, "/tickets", &acme.key, "kept", &body).await;
    assert_eq!(kept.status, 201, "{}", kept.text);
    // The first key's second of life passes on this node's clock, which
    // the pass counts its cut-off from.
    app.state
        .clock
        .advance(chrono::TimeDelta::milliseconds(1500));

    let report = retention_pass_with(&app, policy()).await;

    let deleted = report.table("idempotency_keys").expect("visited");
    assert_eq!(deleted.rows_deleted, 1);
    let remaining: Vec<String> = Query::new("SELECT idempotency_key FROM idempotency_keys")
        .fetch_column(&app.state.db)
        .await
        .expect("keys");
    assert_eq!(remaining, vec!["kept".to_string()]);
}
