//! The one Redis connection type every caller shares, over a single Redis
//! (`redis://…`) or a Redis Cluster (`redis+cluster://…`), so limiter,
//! presence, socket slots and bus work the same on both.
//!
//! `redis+cluster://[user[:password]@]host:port[,host:port…][?query]` names
//! seed nodes (one reachable is enough: the client reads the topology from
//! it and follows slot moves); the user, password and query apply to each.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, ProtocolVersion, PushInfo, RedisFuture, RedisResult, Value};
use tokio::sync::mpsc::UnboundedSender;

const CLUSTER_SCHEME: &str = "redis+cluster://";

/// A connection that reconnects by itself: to one Redis, or to every master
/// of a cluster (commands go to the master owning their key's slot).
#[derive(Clone)]
pub enum RedisConn {
    Node(ConnectionManager),
    Cluster(ClusterConnection),
}

impl RedisConn {
    /// A command connection with `config`'s timeouts and retries (on a
    /// cluster, its timeouts).
    pub async fn connect(url: &str, config: ConnectionManagerConfig) -> anyhow::Result<RedisConn> {
        match cluster_nodes(url)? {
            None => {
                let client = redis::Client::open(url)?;
                Ok(RedisConn::Node(
                    ConnectionManager::new_with_config(client, config).await?,
                ))
            }
            Some(nodes) => {
                let client = cluster_builder(nodes, &config).build()?;
                Ok(RedisConn::Cluster(client.get_async_connection().await?))
            }
        }
    }

    /// A RESP3 connection that hands pub/sub messages to `pushes` and
    /// subscribes again to its channels after a reconnect (on a cluster,
    /// also after a slot moved to another master).
    pub async fn subscriber(
        url: &str,
        pushes: UnboundedSender<PushInfo>,
        timeout: Duration,
    ) -> anyhow::Result<RedisConn> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout));
        match cluster_nodes(url)? {
            None => {
                let client = redis::Client::open(url)?;
                let config = config
                    .set_push_sender(pushes)
                    .set_automatic_resubscription();
                Ok(RedisConn::Node(
                    ConnectionManager::new_with_config(client, config).await?,
                ))
            }
            Some(nodes) => {
                // The cluster client tracks subscriptions whenever it has a
                // push sender, and resubscribes them on reconnects itself.
                let client = cluster_builder(nodes, &config)
                    .use_protocol(ProtocolVersion::RESP3)
                    .push_sender(pushes)
                    .build()?;
                Ok(RedisConn::Cluster(client.get_async_connection().await?))
            }
        }
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, RedisConn::Cluster(_))
    }

    /// Subscribes to `channel`. A `sharded` channel is a sharded one on a
    /// cluster (SSUBSCRIBE, served by the master owning its slot alone), a
    /// plain one on a single Redis.
    pub async fn subscribe(&mut self, channel: &str, sharded: bool) -> RedisResult<()> {
        match self {
            RedisConn::Node(conn) => conn.subscribe(channel).await,
            RedisConn::Cluster(conn) if sharded => conn.ssubscribe(channel).await,
            RedisConn::Cluster(conn) => conn.subscribe(channel).await,
        }
    }

    /// Undoes [`RedisConn::subscribe`] with the same `sharded`.
    pub async fn unsubscribe(&mut self, channel: &str, sharded: bool) -> RedisResult<()> {
        match self {
            RedisConn::Node(conn) => conn.unsubscribe(channel).await,
            RedisConn::Cluster(conn) if sharded => conn.sunsubscribe(channel).await,
            RedisConn::Cluster(conn) => conn.unsubscribe(channel).await,
        }
    }

    /// The command that publishes on a channel subscribed with `sharded`.
    pub fn publish_command(&self, sharded: bool) -> &'static str {
        if sharded && self.is_cluster() {
            "SPUBLISH"
        } else {
            "PUBLISH"
        }
    }
}

impl ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConn::Node(conn) => conn.req_packed_command(cmd),
            RedisConn::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            RedisConn::Node(conn) => conn.req_packed_commands(pipeline, offset, count),
            RedisConn::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConn::Node(conn) => conn.get_db(),
            RedisConn::Cluster(conn) => conn.get_db(),
        }
    }
}

fn cluster_builder(nodes: Vec<String>, config: &ConnectionManagerConfig) -> ClusterClientBuilder {
    let mut builder = ClusterClientBuilder::new(nodes);
    if let Some(timeout) = config.connection_timeout() {
        builder = builder.connection_timeout(timeout);
    }
    if let Some(timeout) = config.response_timeout() {
        builder = builder.response_timeout(timeout);
    }
    builder
}

/// The seed nodes of a `redis+cluster://` URL as `redis://` URLs, or None
/// for any other URL (a single Redis).
pub fn cluster_nodes(url: &str) -> anyhow::Result<Option<Vec<String>>> {
    let Some(rest) = url.strip_prefix(CLUSTER_SCHEME) else {
        return Ok(None);
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let (credentials, hosts) = match authority.rsplit_once('@') {
        Some((credentials, hosts)) => (format!("{credentials}@"), hosts),
        None => (String::new(), authority),
    };
    let nodes: Vec<String> = hosts
        .split(',')
        .map(str::trim)
        .filter(|host| !host.is_empty())
        .map(|host| format!("redis://{credentials}{host}{tail}"))
        .collect();
    if nodes.is_empty() {
        anyhow::bail!("a {CLUSTER_SCHEME} URL needs at least one host:port");
    }
    Ok(Some(nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_url_names_each_seed_node_with_the_shared_credentials_and_query() {
        let nodes = cluster_nodes("redis+cluster://u:p@10.0.0.1:7001,10.0.0.2:7002?protocol=resp3")
            .expect("valid");
        assert_eq!(
            nodes,
            Some(vec![
                "redis://u:p@10.0.0.1:7001?protocol=resp3".to_string(),
                "redis://u:p@10.0.0.2:7002?protocol=resp3".to_string(),
            ])
        );
    }

    #[test]
    fn a_single_node_url_is_not_a_cluster() {
        assert_eq!(
            cluster_nodes("redis://127.0.0.1:6379").expect("valid"),
            None
        );
    }

    #[test]
    fn a_cluster_url_without_hosts_is_refused() {
        assert!(cluster_nodes("redis+cluster://").is_err());
    }
}
