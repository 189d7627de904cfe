//! The bus between nodes: a message published on one node reaches the
//! others (over Redis when configured, in process otherwise); a company's
//! realtime events reach only the nodes with sockets of that company.

use std::time::Duration;

use serde_json::json;
use supportdesk::redis_conn::RedisConn;
use uuid::Uuid;

use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::{id_of, new_session};
use crate::support::{Backend, TestApp, eventually};

backend_tests!(
    a_message_published_on_one_node_reaches_every_node,
    a_node_subscribes_only_to_the_companies_of_its_sockets,
    a_socket_subscribing_on_another_node_gets_the_next_message,
    the_last_socket_leaving_unsubscribes_its_node,
    a_message_published_right_after_a_join_is_received,
);

pub(crate) async fn a_message_published_on_one_node_reaches_every_node(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let mut on_a = node_a.state.realtime.bus.subscribe();
    let mut on_b = node_b.state.realtime.bus.subscribe();

    node_b
        .state
        .realtime
        .bus
        .publish("test:topic", "hello")
        .await;
    let got_b = tokio::time::timeout(Duration::from_secs(5), on_b.recv())
        .await
        .expect("received on the publishing node")
        .expect("message");
    assert_eq!(got_b.topic, "test:topic");
    assert_eq!(got_b.payload.as_ref(), "hello");

    if node_a.config.redis_url.is_some() {
        let got_a = tokio::time::timeout(Duration::from_secs(5), on_a.recv())
            .await
            .expect("received on the other node")
            .expect("message");
        assert_eq!(got_a.payload.as_ref(), "hello");
    } else {
        // Without Redis each node is alone: nothing crosses to node A.
        assert!(
            tokio::time::timeout(Duration::from_millis(200), on_a.recv())
                .await
                .is_err()
        );
    }
}

/// How many Redis connections are subscribed to the company channel
/// `channel` (one per node); on a cluster, to the sharded channel on the
/// master owning its slot.
async fn subscribers(app: &TestApp, channel: &str) -> i64 {
    let mut redis = app.state.redis.clone().expect("Redis");
    let counts: Vec<(String, i64)> = match &mut redis {
        RedisConn::Cluster(cluster) => {
            let mut numsub = redis::cmd("PUBSUB");
            numsub.arg("SHARDNUMSUB").arg(channel);
            crate::cluster::on_owner(cluster, numsub, channel).await
        }
        RedisConn::Node(_) => redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(channel)
            .query_async(&mut redis)
            .await
            .expect("PUBSUB NUMSUB"),
    };
    counts.first().map_or(0, |(_, count)| *count)
}

/// The bus channels of this test's deployment (its key prefix) that any
/// node is subscribed to (on a cluster, sharded ones too, on any master).
async fn bus_channels(app: &TestApp) -> Vec<String> {
    let mut redis = app.state.redis.clone().expect("Redis");
    let pattern = format!("{}bus*", app.config.redis_prefix);
    let mut channels: Vec<String> = redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .arg(&pattern)
        .query_async(&mut redis)
        .await
        .expect("PUBSUB CHANNELS");
    if redis.is_cluster() {
        let sharded: Vec<String> = redis::cmd("PUBSUB")
            .arg("SHARDCHANNELS")
            .arg(&pattern)
            .query_async(&mut redis)
            .await
            .expect("PUBSUB SHARDCHANNELS");
        channels.extend(sharded);
    }
    channels
}

fn company_channel(app: &TestApp, company_id: Uuid) -> String {
    app.state
        .realtime
        .bus
        .company_channel(company_id)
        .expect("a Redis bus")
}

pub(crate) async fn a_node_subscribes_only_to_the_companies_of_its_sockets(backend: Backend) {
    let node_1 = TestApp::spawn(backend).await;
    if node_1.config.redis_url.is_none() {
        eprintln!("bus channels need Redis: checked on the postgres backend");
        return;
    }
    let node_2 = node_1.spawn_peer().await;
    let acme = node_1.company().await;
    let globex = node_1.company().await;
    let mut acme_on_1 = Client::key(&node_1, &acme.key).await;
    acme_on_1.subscribe("presence").await;
    let mut globex_on_2 = Client::key(&node_2, &globex.key).await;
    globex_on_2.subscribe("presence").await;

    let acme_channel = company_channel(&node_1, acme.company.id);
    let globex_channel = company_channel(&node_1, globex.company.id);
    let mut channels = bus_channels(&node_1).await;
    channels.sort();
    let mut expected = vec![
        format!("{}bus", node_1.config.redis_prefix),
        acme_channel.clone(),
        globex_channel.clone(),
    ];
    expected.sort();
    assert_eq!(channels, expected);
    // One subscriber each: acme's is node 1's, globex's node 2's.
    assert_eq!(subscribers(&node_1, &acme_channel).await, 1);
    assert_eq!(subscribers(&node_1, &globex_channel).await, 1);
}

pub(crate) async fn a_socket_subscribing_on_another_node_gets_the_next_message(backend: Backend) {
    let node_1 = TestApp::spawn(backend).await;
    let node_2 = node_1.spawn_peer().await;
    let acme = node_1.company().await;
    let session = new_session(&node_1, &acme, json!({})).await;
    let channel = format!("session:{}", id_of(&session));
    let mut on_1 = Client::key(&node_1, &acme.key).await;
    on_1.subscribe(&channel).await;

    // Node 2 had no socket of acme until now.
    let mut on_2 = Client::key(&node_2, &acme.key).await;
    on_2.subscribe(&channel).await;
    if node_1.config.redis_url.is_some() {
        let acme_channel = company_channel(&node_1, acme.company.id);
        assert_eq!(subscribers(&node_1, &acme_channel).await, 2);
    }
    node_1
        .post(
            &format!("/chat/sessions/{}/messages", id_of(&session)),
            &acme.key,
            json!({"body": "right after", "senderType": "visitor"}),
        )
        .await
        .assert_status(201);
    if node_1.config.redis_url.is_none() {
        // Without Redis each node is alone: nothing crosses to node 2.
        on_2.assert_nothing_before_pong().await;
        return;
    }
    let message = on_2.next().await;
    assert_eq!(message["type"], "chat.message");
    assert_eq!(message["data"]["body"], "right after");
}

pub(crate) async fn the_last_socket_leaving_unsubscribes_its_node(backend: Backend) {
    let node_1 = TestApp::spawn(backend).await;
    if node_1.config.redis_url.is_none() {
        eprintln!("bus channels need Redis: checked on the postgres backend");
        return;
    }
    let acme = node_1.company().await;
    let acme_channel = company_channel(&node_1, acme.company.id);
    let mut first = Client::key(&node_1, &acme.key).await;
    first.subscribe("presence").await;
    let mut second = Client::key(&node_1, &acme.key).await;
    second.subscribe("presence").await;
    assert_eq!(subscribers(&node_1, &acme_channel).await, 1);

    drop(first);
    second
        .send(json!({"type": "unsubscribe", "channel": "presence"}))
        .await;
    assert_eq!(second.next().await["type"], "unsubscribed");
    eventually("node 1 leaves acme's bus channel", || async {
        subscribers(&node_1, &acme_channel).await == 0
    })
    .await;
}

/// Joins and leaves in a tight loop, each join followed at once by a
/// message from the other node: a join resolves only once Redis has
/// confirmed the subscription, and a leave racing the next join never
/// leaves the node unsubscribed.
pub(crate) async fn a_message_published_right_after_a_join_is_received(backend: Backend) {
    let node_1 = TestApp::spawn(backend).await;
    if node_1.config.redis_url.is_none() {
        eprintln!("bus channels need Redis: checked on the postgres backend");
        return;
    }
    let node_2 = node_1.spawn_peer().await;
    let company_id = Uuid::now_v7();
    let mut on_2 = node_2.state.realtime.bus.subscribe();
    for round in 0..50 {
        let interest = node_2.state.realtime.bus.join(company_id).await;
        let payload = format!("round {round}");
        node_1
            .state
            .realtime
            .bus
            .publish_to(company_id, "test:topic", payload.as_str())
            .await;
        let got = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let message = on_2.recv().await.expect("message");
                if message.topic == "test:topic" {
                    return message;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("round {round} reached node 2"));
        assert_eq!(got.payload.as_ref(), payload);
        drop(interest);
    }
}
