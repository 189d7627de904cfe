//! Suspending a company the way the service does (store, key caches,
//! sockets on every node), from a test.

use uuid::Uuid;

use super::TestApp;

impl TestApp {
    /// Suspends (`true`) or reactivates company `id` through this node.
    pub async fn set_suspended(&self, id: Uuid, suspended: bool) {
        supportdesk::companies::suspend::set_suspended(
            &self.state.db,
            &self.state.access,
            &self.state.realtime.bus,
            id,
            suspended,
            self.state.clock.now(),
        )
        .await
        .expect("company standing changed");
    }
}
