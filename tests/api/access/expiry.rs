//! A key expires when the database's clock reaches its expiry, whatever the
//! clock of the node it is presented to: nodes whose clocks disagree never
//! disagree on whether a key still works.

use supportdesk::auth::{Mode, ScopeSet};
use supportdesk::keys::NewKey;
use supportdesk::time::Timestamp;

use super::assert_message;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_node_whose_clock_runs_ahead_still_accepts_a_key_the_database_has_not_seen_expire,
    a_node_whose_clock_runs_behind_refuses_a_key_the_database_has_seen_expire,
);

/// A key of a new company expiring `from_now` after the database's clock
/// (the host's: the tests' database runs beside them).
async fn key_expiring(app: &TestApp, from_now: chrono::TimeDelta) -> String {
    let acme = app.company().await;
    let expires_at = Timestamp::from_datetime(chrono::Utc::now() + from_now);
    let (_, key) = supportdesk::keys::store::create(
        &app.state.db,
        NewKey {
            company_id: acme.company.id,
            name: "expiring".into(),
            mode: Mode::Test,
            scopes: ScopeSet::all(),
            rate_limit: 1000,
            expires_at: Some(expires_at),
        },
        app.state.clock.now(),
    )
    .await
    .expect("key");
    key
}

async fn a_node_whose_clock_runs_ahead_still_accepts_a_key_the_database_has_not_seen_expire(
    backend: Backend,
) {
    let app = TestApp::spawn_with(backend, |c| {
        c.clock_offset = chrono::TimeDelta::hours(2);
    })
    .await;
    let key = key_expiring(&app, chrono::TimeDelta::hours(1)).await;
    app.get("/entities", &key).await.assert_status(200);
}

async fn a_node_whose_clock_runs_behind_refuses_a_key_the_database_has_seen_expire(
    backend: Backend,
) {
    let app = TestApp::spawn_with(backend, |c| {
        c.clock_offset = -chrono::TimeDelta::hours(2);
    })
    .await;
    let key = key_expiring(&app, -chrono::TimeDelta::hours(1)).await;
    let r = app.get("/entities", &key).await;
    assert_message(&r, 401, "expired_api_key", "API key has expired");
}
