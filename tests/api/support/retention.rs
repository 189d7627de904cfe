//! The retention pass as its worker runs it, for the tests of what it
//! deletes.

use supportdesk::retention::{self, PassReport, Policy};

use super::TestApp;

/// The pass under the service's configured policy, at the clock's now.
pub async fn retention_pass(app: &TestApp) -> PassReport {
    retention_pass_with(app, Policy::from_config(&app.state.config)).await
}

/// The pass under `policy`, at the clock's now; fails unless it ran (no
/// other node held the pass).
pub async fn retention_pass_with(app: &TestApp, policy: Policy) -> PassReport {
    let (db, attachments) = (&app.state.db, &app.state.attachments);
    retention::run_pass(db, attachments, policy, app.state.clock.now())
        .await
        .expect("pass ran")
        .expect("no other node holds the pass")
}
