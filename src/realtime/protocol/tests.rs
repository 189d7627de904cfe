use super::*;
use crate::auth::{Mode, Tenant};

#[test]
fn channels_and_bus_topics_round_trip() {
    let id = Uuid::now_v7();
    assert_eq!(
        Channel::parse(&format!("session:{id}")),
        Some(Channel::Session(id))
    );
    assert_eq!(Channel::parse("presence"), Some(Channel::Presence));
    assert_eq!(
        Channel::parse(&format!("agent:{id}")),
        Some(Channel::Agent(id))
    );
    assert_eq!(Channel::parse("agent"), None);
    assert_eq!(Channel::parse("session:nope"), None);
    assert_eq!(Channel::parse("tickets:1"), None);
    assert_eq!(Channel::parse("tickets"), Some(Channel::Tickets(None)));
    assert_eq!(
        Channel::parse(&format!("tickets:{id}")),
        Some(Channel::Tickets(Some(id)))
    );
    let tenant = Tenant::new(Uuid::now_v7(), Mode::Test);
    for channel in [
        HubChannel::Session(id),
        HubChannel::VisitorSession(id),
        HubChannel::Entity(id),
        HubChannel::Presence,
        HubChannel::PublicPresence,
        HubChannel::Tickets {
            entity: None,
            notes: false,
        },
        HubChannel::Tickets {
            entity: Some(id),
            notes: true,
        },
        HubChannel::Tickets {
            entity: None,
            notes: true,
        },
        HubChannel::Agent(id),
    ] {
        let topic = Topic::new(tenant, channel);
        let message = Some(Uuid::now_v7());
        assert_eq!(
            Topic::parse_bus_topic(&topic.bus_topic(message)),
            Some((topic, message))
        );
        assert_eq!(
            Topic::parse_bus_topic(&topic.bus_topic(None)),
            Some((topic, None))
        );
    }
    assert_eq!(Topic::parse_bus_topic("auth"), None);
}

#[test]
fn frames_have_their_documented_shape() {
    let id = Value::from("c1");
    let frame: Value = serde_json::from_str(&event(
        "typing",
        "session:x",
        Some(&id),
        &serde_json::json!({"a": 1}),
    ))
    .expect("json");
    assert_eq!(
        frame,
        serde_json::json!({"type": "typing", "channel": "session:x", "id": "c1", "data": {"a": 1}})
    );
    let frame: Value = serde_json::from_str(&error(None, ErrorCode::NotFound, "x")).expect("json");
    assert_eq!(
        frame,
        serde_json::json!({"type": "error", "code": "not_found", "error": "x"})
    );
    assert_eq!(reply("pong", None, None), r#"{"type":"pong"}"#);
}

fn parsed(text: &str) -> ReceivedFrame {
    ReceivedFrame::parse(text).expect("a frame")
}

#[test]
fn a_subscribe_frame_carries_its_channel_and_since() {
    let received = parsed(r#"{"type":"subscribe","channel":"presence","since":"x","id":7}"#);
    assert_eq!(
        received,
        ReceivedFrame {
            id: Some(Value::from(7)),
            frame: ClientFrame::Subscribe {
                channel: Some("presence".into()),
                since: Some("x".into()),
            },
        }
    );
}

#[test]
fn an_unsubscribe_frame_carries_its_channel_only() {
    let received = parsed(r#"{"type":"unsubscribe","channel":"tickets","since":"x"}"#);
    assert_eq!(
        received.frame,
        ClientFrame::Unsubscribe {
            channel: Some("tickets".into())
        }
    );
}

#[test]
fn a_message_frame_carries_its_fields() {
    let received = parsed(
        r#"{"type":"message","sessionId":"s","body":"hi","senderId":"u",
            "clientMessageId":"c","attachmentIds":["a"],"channel":"presence"}"#,
    );
    assert_eq!(
        received.frame,
        ClientFrame::Message(MessageFrame {
            session_id: Some("s".into()),
            body: Some("hi".into()),
            sender_id: Some("u".into()),
            client_message_id: Some("c".into()),
            attachment_ids: Some(serde_json::json!(["a"])),
        })
    );
}

#[test]
fn a_typing_frame_carries_its_session_and_sender() {
    let received = parsed(r#"{"type":"typing","sessionId":"s","senderId":"u","body":"b"}"#);
    assert_eq!(
        received.frame,
        ClientFrame::Typing {
            session_id: Some("s".into()),
            sender_id: Some("u".into()),
            ticket_id: None,
        }
    );
}

#[test]
fn viewing_and_leave_frames_carry_their_ticket() {
    let viewing = parsed(r#"{"type":"viewing","ticketId":"t","sessionId":"s"}"#);
    let leave = parsed(r#"{"type":"leave","ticketId":"t"}"#);
    let ticket_id = Some("t".to_string());
    assert_eq!(
        (viewing.frame, leave.frame),
        (
            ClientFrame::Viewing {
                ticket_id: ticket_id.clone()
            },
            ClientFrame::Leave { ticket_id }
        )
    );
}

#[test]
fn a_ticket_channel_round_trips_through_the_bus() {
    let id = Uuid::now_v7();
    let channel = Channel::parse(&format!("ticket:{id}")).expect("a channel");
    let topic = Topic::new(Tenant::new(Uuid::now_v7(), Mode::Live), channel.into());
    let (parsed, _) = Topic::parse_bus_topic(&topic.bus_topic(None)).expect("parsed");
    assert_eq!((channel.name(), parsed), (format!("ticket:{id}"), topic));
}

#[test]
fn a_ping_frame_carries_only_its_id() {
    let received = parsed(r#"{"type":"ping","id":"p1","channel":"presence","extra":[1]}"#);
    assert_eq!(
        received,
        ReceivedFrame {
            id: Some(Value::from("p1")),
            frame: ClientFrame::Ping,
        }
    );
}

#[test]
fn a_frame_without_a_type_is_rejected_with_its_id() {
    assert_eq!(
        ReceivedFrame::parse(r#"{"id":"c1","channel":"presence"}"#),
        Err(FrameRejection::UnknownType {
            id: Some(Value::from("c1"))
        })
    );
}

#[test]
fn a_frame_of_an_unknown_type_is_rejected_with_its_id() {
    for kind in ["Ping", "pong", " ping", ""] {
        let text = serde_json::json!({"type": kind, "id": 1}).to_string();
        assert_eq!(
            ReceivedFrame::parse(&text),
            Err(FrameRejection::UnknownType {
                id: Some(Value::from(1))
            })
        );
    }
}

#[test]
fn text_that_is_not_json_is_rejected() {
    assert_eq!(
        ReceivedFrame::parse("{\"type\":"),
        Err(FrameRejection::NotJson)
    );
}

#[test]
fn a_field_of_the_wrong_json_type_is_not_json_whatever_the_frame_type() {
    for text in [
        r#"{"type":5}"#,
        r#"{"type":"ping","body":5}"#,
        r#"{"type":"subscribe","channel":["presence"]}"#,
    ] {
        assert_eq!(ReceivedFrame::parse(text), Err(FrameRejection::NotJson));
    }
}

#[test]
fn rejections_answer_their_documented_error_frames() {
    assert_eq!(
        FrameRejection::NotJson.error_frame(),
        r#"{"type":"error","code":"invalid_json","error":"Frame is not valid JSON"}"#
    );
    let unknown = FrameRejection::UnknownType {
        id: Some(Value::from("c1")),
    };
    assert_eq!(
        unknown.error_frame(),
        r#"{"type":"error","id":"c1","code":"validation_failed","error":"type: must be one of: subscribe, unsubscribe, message, typing, viewing, leave, ping"}"#
    );
}
