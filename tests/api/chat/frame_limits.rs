//! Every client frame, of any kind, spends one of its socket's allowance
//! (`SUPPORTDESK_SOCKET_FRAME_RATE`); past it a frame is answered with the
//! `rate_limited` error frame, echoing its `id`, and not carried out.

use std::time::Duration;

use serde_json::{Value, json};
use supportdesk::config::MessageRate;

use super::client::Client;
use super::{id_of, new_session};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_burst_of_subscribe_frames_is_limited,
    every_frame_kind_spends_the_socket_allowance,
);

/// A service whose sockets may send `limit` frames, with no refill while
/// the test runs.
async fn service(backend: Backend, limit: u64) -> TestApp {
    TestApp::spawn_with(backend, |c| {
        c.socket_frame_rate = MessageRate {
            limit,
            window: Duration::from_secs(3600),
        };
    })
    .await
}

/// The answer to the frame `id`, skipping events.
async fn reply_to(client: &mut Client, id: &Value) -> Value {
    loop {
        let frame = client.next().await;
        if &frame["id"] == id {
            return frame;
        }
    }
}

#[track_caller]
fn assert_rate_limited(frame: &Value) {
    assert_eq!(frame["type"], "error", "{frame}");
    assert_eq!(frame["code"], "rate_limited", "{frame}");
    assert!(frame["retryAfter"].as_u64() >= Some(1), "{frame}");
}

async fn a_burst_of_subscribe_frames_is_limited(backend: Backend) {
    let app = service(backend, 5).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    let channel = format!("session:{}", id_of(&session));
    let mut visitor = Client::token(&app, token).await;
    for n in 0..8 {
        visitor
            .send(json!({"type": "subscribe", "id": n, "channel": channel}))
            .await;
    }
    for n in 0..5 {
        let reply = reply_to(&mut visitor, &json!(n)).await;
        assert_eq!(reply["type"], "subscribed", "{reply}");
    }
    for n in 5..8 {
        assert_rate_limited(&reply_to(&mut visitor, &json!(n)).await);
    }
}

async fn every_frame_kind_spends_the_socket_allowance(backend: Backend) {
    let app = service(backend, 4).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    let channel = format!("session:{}", id_of(&session));
    let mut visitor = Client::token(&app, token).await;
    let spent = [
        json!({"type": "ping", "id": "ping"}),
        json!({"type": "typing", "id": "typing"}),
        json!({"type": "unsubscribe", "id": "unsubscribe", "channel": channel}),
        json!({"type": "nonsense", "id": "nonsense"}),
    ];
    for frame in spent {
        visitor.send(frame).await;
    }
    let refused = ["subscribe", "message", "ping"];
    for kind in refused {
        visitor
            .send(json!({"type": kind, "id": format!("over-{kind}"),
                         "channel": channel, "body": "hi"}))
            .await;
    }
    assert_eq!(reply_to(&mut visitor, &json!("ping")).await["type"], "pong");
    for kind in refused {
        assert_rate_limited(&reply_to(&mut visitor, &json!(format!("over-{kind}"))).await);
    }
    // The refused message was not stored.
    let read = app
        .get(&format!("/chat/sessions/{}", id_of(&session)), &acme.key)
        .await;
    let messages = read.assert_status(200)["messages"].clone();
    assert!(
        messages
            .as_array()
            .expect("messages")
            .iter()
            .all(|m| m["body"] != "hi"),
        "{messages}"
    );
}
