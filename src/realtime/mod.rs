//! Realtime: the hub of this node's sockets, the bus between nodes, and
//! agent presence.

pub mod bus;

use axum::Router;
use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::config::Config;
use bus::Bus;

pub struct Realtime {
    pub bus: Bus,
}

impl Realtime {
    pub async fn new(
        config: &Config,
        _redis: Option<redis::aio::ConnectionManager>,
    ) -> anyhow::Result<Self> {
        let bus = match &config.redis_url {
            Some(url) => Bus::redis(url, &config.redis_prefix).await?,
            None => Bus::local(),
        };
        Ok(Realtime { bus })
    }
}

/// Routes outside `/api/v1` (the public widget API).
pub fn public_routes() -> Router<AppState> {
    Router::new()
}

pub fn spawn_workers(_state: &AppState) -> Vec<JoinHandle<()>> {
    Vec::new()
}
