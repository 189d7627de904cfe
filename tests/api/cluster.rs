//! The service on a Redis Cluster (`TEST_REDIS_CLUSTER_URL`, e.g. the one
//! `.ci/redis-cluster.sh start` prints): the multi-node tests of the other
//! modules run again with every node on the cluster, on both backends, and
//! the company channels are checked to be sharded channels of the master
//! owning their slot. Without the variable these tests are reported as
//! skipped, unless `CI=true`, where they fail.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use supportdesk::realtime::credentials;
use supportdesk::redis_conn::RedisConn;
use uuid::Uuid;

use crate::chat::client::Client;
use crate::support::{Backend, TestApp, eventually};

/// Each `name: test` pair becomes `name::sqlite` and `name::postgres`,
/// running `test` with its nodes on the cluster.
macro_rules! cluster_tests {
    ($($name:ident: $test:path),+ $(,)?) => {
        $(
            mod $name {
                use crate::support::Backend;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    if let Some(url) = super::cluster_url(concat!(module_path!(), "::sqlite")) {
                        crate::support::with_redis(url, $test(Backend::Sqlite)).await
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    let test = concat!(module_path!(), "::postgres");
                    if let Some(url) = super::cluster_url(test) {
                        if let Some(backend) = Backend::postgres(test) {
                            crate::support::with_redis(url, $test(backend)).await
                        }
                    }
                }
            }
        )+
    };
}

cluster_tests!(
    rate_limits_are_shared_between_nodes: crate::access::rate_limits::nodes_sharing_redis_share_one_budget,
    presence_expiry_is_pushed: crate::chat::socket_presence::presence_expiry_is_pushed,
    messages_and_presence_cross_nodes: crate::chat::scale::two_nodes_share_messages_and_presence,
    control_messages_reach_every_node: crate::bus::a_message_published_on_one_node_reaches_every_node,
    nodes_subscribe_only_to_their_companies: crate::bus::a_node_subscribes_only_to_the_companies_of_its_sockets,
    a_second_node_joining_gets_the_next_message: crate::bus::a_socket_subscribing_on_another_node_gets_the_next_message,
    the_last_socket_leaving_unsubscribes: crate::bus::the_last_socket_leaving_unsubscribes_its_node,
    a_message_right_after_a_join_is_received: crate::bus::a_message_published_right_after_a_join_is_received,
    revoking_closes_sockets_before_later_messages: crate::chat::credentials::revoking_a_key_closes_its_sockets_on_every_node,
    cutting_chat_read_closes_sockets_before_later_messages: crate::chat::credentials::cutting_chat_read_closes_a_keys_sockets_on_every_node,
    suspending_closes_sockets_before_later_messages: crate::chat::credentials::suspending_a_company_closes_agent_and_visitor_sockets,
    company_channels_are_sharded_on_their_owning_master: crate::cluster::company_channels_are_sharded_on_their_owning_master,
    a_credential_notice_travels_on_its_companys_channel: crate::cluster::a_credential_notice_travels_on_its_companys_channel,
    a_node_of_the_company_gets_a_notice_once: crate::cluster::a_node_of_the_company_gets_a_notice_once,
    agents_online_are_counted_across_slots: crate::cluster::agents_online_are_counted_across_slots,
);

/// How many cluster tests this run has skipped so far.
static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// The cluster's URL; without one, None after reporting `test` as skipped
/// (past libtest's output capture, as the Postgres skips are).
fn cluster_url(test: &str) -> Option<String> {
    if let Some(url) = std::env::var("TEST_REDIS_CLUSTER_URL")
        .ok()
        .filter(|u| !u.is_empty())
    {
        return Some(url);
    }
    assert!(
        !std::env::var("CI").is_ok_and(|v| v == "true"),
        "CI=true needs TEST_REDIS_CLUSTER_URL: the Redis Cluster tests must run in CI"
    );
    use std::io::Write;
    let skipped = SKIPPED.fetch_add(1, Ordering::Relaxed) + 1;
    let name = test.split_once("::").map_or(test, |(_, name)| name);
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED (no TEST_REDIS_CLUSTER_URL): {name} [cluster tests skipped so far: {skipped}]"
    );
    None
}

/// Runs `command` on the master owning `key`'s slot.
pub(crate) async fn on_owner<T: redis::FromRedisValue>(
    cluster: &mut ClusterConnection,
    command: redis::Cmd,
    key: &str,
) -> T {
    let owner = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
        key,
        SlotAddr::Master,
    )));
    let value = cluster
        .route_command(command, owner)
        .await
        .expect("a command on the owning master");
    redis::from_redis_value(value).expect("its reply")
}

/// The sharded channels matching `pattern` on the master owning `key`.
async fn shard_channels_on_owner(app: &TestApp, pattern: &str, key: &str) -> Vec<String> {
    let Some(RedisConn::Cluster(mut cluster)) = app.state.redis.clone() else {
        panic!("the node is on a Redis Cluster");
    };
    let mut command = redis::cmd("PUBSUB");
    command.arg("SHARDCHANNELS").arg(pattern);
    on_owner(&mut cluster, command, key).await
}

pub(crate) async fn company_channels_are_sharded_on_their_owning_master(backend: Backend) {
    let node = TestApp::spawn(backend).await;
    let acme = node.company().await;
    let channel = node
        .state
        .realtime
        .bus
        .company_channel(acme.company.id)
        .expect("a Redis bus");
    let pattern = format!("{}bus:*", node.config.redis_prefix);
    let mut socket = Client::key(&node, &acme.key).await;
    socket.subscribe("presence").await;

    assert_eq!(
        shard_channels_on_owner(&node, &pattern, &channel).await,
        vec![channel.clone()]
    );
    drop(socket);
    eventually("the node leaves the company's sharded channel", || async {
        shard_channels_on_owner(&node, &pattern, &channel)
            .await
            .is_empty()
    })
    .await;
}

/// The notice rides the company's own sharded channel, the one its events
/// take, so no later event of the company can overtake it.
pub(crate) async fn a_credential_notice_travels_on_its_companys_channel(backend: Backend) {
    let node = TestApp::spawn(backend).await;
    let company_id = Uuid::now_v7();
    let channel = node
        .state
        .realtime
        .bus
        .company_channel(company_id)
        .expect("a Redis bus");
    let (pushes, mut received) = tokio::sync::mpsc::unbounded_channel();
    let url = node.config.redis_url.clone().expect("Redis");
    let mut listener = RedisConn::subscriber(&url, pushes, Duration::from_secs(2))
        .await
        .expect("a subscriber on the cluster");
    listener
        .subscribe(&channel, true)
        .await
        .expect("SSUBSCRIBE");

    credentials::company_suspended(&node.state.realtime.bus, company_id).await;
    let payload = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let push = received.recv().await.expect("a push");
            if let Some(message) = redis::Msg::from_push_info(push) {
                return message.get_payload::<String>().expect("a text payload");
            }
        }
    })
    .await
    .expect("the notice on the company's channel");
    assert_eq!(
        payload,
        format!("{}\ncompany-suspended:{company_id}", credentials::TOPIC)
    );
}

/// A node subscribed to the company's channel takes the notice from there
/// and skips its copy on the node-wide channel (a late copy must not undo
/// a newer notice); every other node takes that copy.
pub(crate) async fn a_node_of_the_company_gets_a_notice_once(backend: Backend) {
    let node_1 = TestApp::spawn(backend).await;
    let node_2 = node_1.spawn_peer().await;
    let company_id = Uuid::now_v7();
    let bus_1 = &node_1.state.realtime.bus;
    let bus_2 = &node_2.state.realtime.bus;
    let _interest = bus_2.join(company_id).await;
    let mut on_1 = bus_1.subscribe();
    let mut on_2 = bus_2.subscribe();

    credentials::company_suspended(bus_1, company_id).await;
    // A marker behind the notice on each channel: once a node has the
    // markers of the channels it is on, it has every copy of the notice.
    bus_1.publish_to(company_id, "test:marker", "company").await;
    bus_1.publish("test:marker", "node-wide").await;

    for (node, received, channels) in [("joined", &mut on_2, 2), ("not joined", &mut on_1, 1)] {
        let mut notices = 0;
        let mut markers = 0;
        tokio::time::timeout(Duration::from_secs(5), async {
            while markers < channels {
                let message = received.recv().await.expect("a message");
                match message.topic.as_str() {
                    credentials::TOPIC => notices += 1,
                    "test:marker" => markers += 1,
                    _ => {}
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("both markers reached the {node} node"));
        assert_eq!(notices, 1, "notices on the {node} node");
    }
}

/// The metrics' count of agents online adds up companies whose presence
/// lives in different slots.
pub(crate) async fn agents_online_are_counted_across_slots(backend: Backend) {
    let node = TestApp::spawn(backend).await;
    for _ in 0..3 {
        let company = node.company().await;
        node.post(
            "/chat/agent-presence",
            &company.key,
            serde_json::json!({"userId": Uuid::now_v7(), "name": "Ann", "email": "ann@acme.test"}),
        )
        .await
        .assert_status(200);
    }
    let online = node.state.realtime.presence.online_count().await;
    assert_eq!(online.expect("a count"), 3);
}
