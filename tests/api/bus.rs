//! The bus between nodes: a message published on one node reaches the
//! others (over Redis when configured, in process otherwise).

use std::time::Duration;

use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(a_message_published_on_one_node_reaches_every_node);

async fn a_message_published_on_one_node_reaches_every_node(backend: Backend) {
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
