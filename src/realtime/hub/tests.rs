//! The hub's tests: dispatch to subscribers, the socket's queue and kick,
//! release, shutdown and closing by credentials.

use super::*;
use crate::auth::{Mode, Tenant};
use crate::realtime::protocol::HubChannel;

fn topic(mode: Mode) -> Topic {
    Topic::new(Tenant::new(Uuid::nil(), mode), HubChannel::Presence)
}

fn visitor() -> Holder {
    visitor_of(Uuid::nil())
}

fn visitor_of(company_id: Uuid) -> Holder {
    Holder::Visitor {
        company_id,
        entity_id: Uuid::nil(),
        session_id: Uuid::nil(),
        nonce: 0,
        secret: None,
    }
}

fn frame_of(next: Next) -> Option<Arc<Frame>> {
    match next {
        Next::Frame(frame) => Some(frame),
        Next::Kicked(_) | Next::Released => None,
    }
}

fn frame(topic: Topic, text: &str) -> Arc<Frame> {
    Arc::new(Frame {
        topic,
        message_id: None,
        needs: TicketReads::Nothing,
        text: text.into(),
    })
}

#[tokio::test]
async fn frames_go_to_subscribers_of_their_topic_only() {
    let hub = Arc::new(Hub::new(4));
    let mut test_socket = hub.connect(visitor(), false, TicketReads::Nothing);
    let mut live_socket = hub.connect(visitor(), false, TicketReads::Nothing);
    assert!(test_socket.subscribe(topic(Mode::Test)));
    assert!(!test_socket.subscribe(topic(Mode::Test)));
    live_socket.subscribe(topic(Mode::Live));
    assert_eq!(hub.dispatch(frame(topic(Mode::Test), "t")), 1);
    let got = frame_of(test_socket.recv().await).expect("frame");
    assert_eq!(got.text.as_str(), "t");
    assert!(live_socket.try_recv().is_none());
    assert!(test_socket.unsubscribe(&topic(Mode::Test)));
    assert_eq!(hub.subscribers(&topic(Mode::Test)), 0);
    assert_eq!(hub.connections(), 2);
    drop(live_socket);
    assert_eq!(hub.connections(), 1);
    assert_eq!(hub.subscribers(&topic(Mode::Live)), 0);
}

#[tokio::test]
async fn a_socket_waiting_on_an_empty_queue_wakes_for_the_next_frame() {
    let hub = Arc::new(Hub::new(4));
    let mut socket = hub.connect(visitor(), false, TicketReads::Nothing);
    socket.subscribe(topic(Mode::Test));
    let waiting =
        tokio::spawn(async move { frame_of(socket.recv().await).map(|f| f.text.clone()) });
    tokio::task::yield_now().await;
    assert_eq!(hub.dispatch(frame(topic(Mode::Test), "late")), 1);
    let got = tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
        .await
        .expect("woken")
        .expect("task");
    assert_eq!(got.as_ref().map(|t| t.as_str()), Some("late"));
}

#[tokio::test]
async fn a_released_connection_drops_its_queued_frames() {
    let hub = Arc::new(Hub::new(4));
    let mut socket = hub.connect(visitor(), false, TicketReads::Nothing);
    socket.subscribe(topic(Mode::Test));
    hub.dispatch(frame(topic(Mode::Test), "queued"));
    socket.release();
    assert!(matches!(socket.recv().await, Next::Released));
}

#[tokio::test]
async fn a_kick_wakes_a_socket_waiting_on_its_queue() {
    let hub = Arc::new(Hub::new(4));
    let socket = hub.connect(visitor(), false, TicketReads::Nothing);
    let waiting = tokio::spawn(async move { socket.recv().await });
    tokio::task::yield_now().await;
    hub.shut_down();
    let next = tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
        .await
        .expect("woken")
        .expect("task");
    assert!(matches!(next, Next::Kicked(Close::SHUTDOWN)), "{next:?}");
}

#[tokio::test]
async fn a_kick_comes_before_the_frames_still_queued() {
    let hub = Arc::new(Hub::new(4));
    let mut socket = hub.connect(visitor(), false, TicketReads::Nothing);
    socket.subscribe(topic(Mode::Test));
    hub.dispatch(frame(topic(Mode::Test), "queued"));
    socket.close(Close::SHUTDOWN);
    assert!(matches!(socket.recv().await, Next::Kicked(Close::SHUTDOWN)));
}

#[tokio::test]
async fn shutting_down_closes_open_sockets_and_those_that_register_after() {
    let hub = Arc::new(Hub::new(4));
    let open = hub.connect(visitor(), false, TicketReads::Nothing);
    hub.shut_down();
    let late = hub.connect(visitor(), false, TicketReads::Nothing);
    assert_eq!(open.kick_signal().wait().await, Close::SHUTDOWN);
    assert_eq!(late.kick_signal().wait().await, Close::SHUTDOWN);
}

#[tokio::test]
async fn a_full_queue_kicks_the_socket() {
    let hub = Arc::new(Hub::new(2));
    let mut socket = hub.connect(visitor(), false, TicketReads::Nothing);
    socket.subscribe(topic(Mode::Test));
    for _ in 0..2 {
        assert_eq!(hub.dispatch(frame(topic(Mode::Test), "x")), 1);
    }
    assert_eq!(hub.dispatch(frame(topic(Mode::Test), "x")), 0);
    let close = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        socket.kick_signal().wait(),
    )
    .await
    .expect("kicked");
    assert_eq!(close, Close::TOO_SLOW);
}

#[tokio::test]
async fn closing_a_key_closes_its_sockets_and_stops_their_frames() {
    let hub = Arc::new(Hub::new(4));
    let (company_id, key_id) = (Uuid::now_v7(), Uuid::now_v7());
    let mut agent = hub.connect(
        Holder::Key { company_id, key_id },
        true,
        TicketReads::Nothing,
    );
    let mut visitor = hub.connect(visitor_of(company_id), false, TicketReads::Nothing);
    agent.subscribe(topic(Mode::Test));
    visitor.subscribe(topic(Mode::Test));
    hub.set_key_rights(key_id, false, TicketReads::Nothing);
    assert!(!agent.may_write());
    let revoked = Close::unauthorized("key revoked");
    let closed = hub.close_where(
        |h| matches!(h, Holder::Key { key_id: k, .. } if *k == key_id),
        revoked,
        None,
    );
    assert_eq!(closed, 1);
    assert_eq!(agent.kick_signal().wait().await, revoked);
    // Only the visitor takes the next frame.
    assert_eq!(hub.dispatch(frame(topic(Mode::Test), "after")), 1);
    assert!(agent.try_recv().is_none());
    assert_eq!(hub.holders(), vec![visitor_of(company_id)]);
}

/// A ticket channel's topic of the nil company's TEST mode.
fn tickets_topic(notes: bool) -> Topic {
    Topic::new(
        Tenant::new(Uuid::nil(), Mode::Test),
        HubChannel::Tickets {
            entity: None,
            notes,
        },
    )
}

#[test]
fn a_key_that_loses_tickets_write_keeps_public_frames_and_loses_notes() {
    let hub = Arc::new(Hub::new(4));
    let key_id = Uuid::now_v7();
    let holder = Holder::Key {
        company_id: Uuid::nil(),
        key_id,
    };
    let mut socket = hub.connect(holder, true, TicketReads::Notes);
    socket.subscribe(tickets_topic(true));
    let ticket_frame = |needs, text: &str| {
        Arc::new(Frame {
            topic: tickets_topic(true),
            message_id: None,
            needs,
            text: text.into(),
        })
    };
    assert_eq!(hub.dispatch(ticket_frame(TicketReads::Notes, "note")), 1);
    assert_eq!(
        socket.try_recv().map(|f| f.text.to_string()),
        Some("note".into())
    );

    hub.set_key_rights(key_id, true, TicketReads::Public);
    assert_eq!(socket.ticket_reads(), TicketReads::Public);
    assert_eq!(hub.dispatch(ticket_frame(TicketReads::Notes, "note")), 0);
    assert_eq!(hub.dispatch(ticket_frame(TicketReads::Public, "reply")), 1);
    assert_eq!(
        socket.try_recv().map(|f| f.text.to_string()),
        Some("reply".into())
    );

    hub.set_key_rights(key_id, true, TicketReads::Nothing);
    assert_eq!(hub.dispatch(ticket_frame(TicketReads::Public, "reply")), 0);
    assert!(socket.try_recv().is_none());
}
