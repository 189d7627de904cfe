//! The socket protocol (docs/websocket.md): channel names, the frames a
//! client sends and the frames the server sends. Every frame is a JSON text
//! frame with a `type`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::auth::{Mode, Tenant};
use crate::error::{ApiError, ErrorCode};

/// A channel as clients name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// `session:<id>`: one chat session's messages, status and typing.
    Session(Uuid),
    /// `entity:<id>`: all chat activity of an entity's sessions.
    Entity(Uuid),
    /// `presence`: agents going online and offline.
    Presence,
    /// `tickets:<entityId>`: the ticket events of one entity; `tickets`
    /// (None): those of the whole company and mode.
    Tickets(Option<Uuid>),
    /// `agent:<userId>`: the `assignment` frames of chats given to or taken
    /// from one user, so a console hears its own work without its entities'
    /// whole traffic.
    Agent(Uuid),
}

impl Channel {
    pub fn parse(name: &str) -> Option<Channel> {
        match name {
            "presence" => return Some(Channel::Presence),
            "tickets" => return Some(Channel::Tickets(None)),
            _ => {}
        }
        let (kind, id) = name.split_once(':')?;
        let id = Uuid::parse_str(id).ok()?;
        match kind {
            "session" => Some(Channel::Session(id)),
            "entity" => Some(Channel::Entity(id)),
            "tickets" => Some(Channel::Tickets(Some(id))),
            "agent" => Some(Channel::Agent(id)),
            _ => None,
        }
    }

    pub fn name(&self) -> String {
        match self {
            Channel::Session(id) => format!("session:{id}"),
            Channel::Entity(id) => format!("entity:{id}"),
            Channel::Presence => "presence".into(),
            Channel::Tickets(None) => "tickets".into(),
            Channel::Tickets(Some(id)) => format!("tickets:{id}"),
            Channel::Agent(id) => format!("agent:{id}"),
        }
    }
}

/// Where an event is delivered: a channel of one tenant. Presence has two
/// audiences: agents see every agent, visitors only PUBLIC ones, so visitor
/// sockets subscribe to `PublicPresence` when they ask for `presence`.
/// A session's channel has two as well: its visitor's socket subscribes to
/// `VisitorSession`, which carries the same events with an agent's name
/// but never a user id.
/// Ticket channels have two as well: keys that read internal notes
/// subscribe to `Tickets { notes: true, .. }`, which also carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Topic {
    pub tenant: Tenant,
    pub channel: HubChannel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HubChannel {
    Session(Uuid),
    VisitorSession(Uuid),
    Entity(Uuid),
    Presence,
    PublicPresence,
    Tickets { entity: Option<Uuid>, notes: bool },
    Agent(Uuid),
}

impl From<Channel> for HubChannel {
    fn from(channel: Channel) -> Self {
        match channel {
            Channel::Session(id) => HubChannel::Session(id),
            Channel::Entity(id) => HubChannel::Entity(id),
            Channel::Presence => HubChannel::Presence,
            Channel::Tickets(entity) => HubChannel::Tickets {
                entity,
                notes: false,
            },
            Channel::Agent(id) => HubChannel::Agent(id),
        }
    }
}

/// The bus spelling of the ticket channels' audience with internal notes.
const TICKETS_WITH_NOTES: &str = "tickets.notes";
/// The bus spelling of a session channel's visitor audience.
const VISITOR_SESSION: &str = "session.visitor:";

/// Bus topics of realtime events start with this.
pub const BUS_PREFIX: &str = "rt:";

impl Topic {
    pub fn new(tenant: Tenant, channel: HubChannel) -> Topic {
        Topic { tenant, channel }
    }

    /// The bus topic: `rt:<company>:<mode>:<channel>[#<messageId>]`; the
    /// message id lets a socket drop a live copy of a message it replayed.
    pub fn bus_topic(&self, message_id: Option<Uuid>) -> String {
        let channel = match self.channel {
            HubChannel::Session(id) => format!("session:{id}"),
            HubChannel::VisitorSession(id) => format!("{VISITOR_SESSION}{id}"),
            HubChannel::Entity(id) => format!("entity:{id}"),
            HubChannel::Presence => "presence".into(),
            HubChannel::PublicPresence => "presence.public".into(),
            HubChannel::Agent(id) => format!("agent:{id}"),
            HubChannel::Tickets { entity, notes } => {
                let base = if notes { TICKETS_WITH_NOTES } else { "tickets" };
                match entity {
                    Some(id) => format!("{base}:{id}"),
                    None => base.to_string(),
                }
            }
        };
        let mut topic = format!(
            "{BUS_PREFIX}{}:{}:{channel}",
            self.tenant.company_id,
            self.tenant.mode.as_str()
        );
        if let Some(id) = message_id {
            topic.push('#');
            topic.push_str(&id.to_string());
        }
        topic
    }

    /// The inverse of `bus_topic`; `None` for other bus traffic.
    pub fn parse_bus_topic(topic: &str) -> Option<(Topic, Option<Uuid>)> {
        let rest = topic.strip_prefix(BUS_PREFIX)?;
        let (rest, message_id) = match rest.split_once('#') {
            Some((rest, id)) => (rest, Some(Uuid::parse_str(id).ok()?)),
            None => (rest, None),
        };
        let (company, rest) = rest.split_once(':')?;
        let (mode, channel) = rest.split_once(':')?;
        let tenant = Tenant {
            company_id: Uuid::parse_str(company).ok()?,
            mode: Mode::parse(mode)?,
        };
        if let Some(id) = channel.strip_prefix(VISITOR_SESSION) {
            let channel = HubChannel::VisitorSession(Uuid::parse_str(id).ok()?);
            return Some((Topic { tenant, channel }, message_id));
        }
        let channel = match channel {
            "presence.public" => HubChannel::PublicPresence,
            TICKETS_WITH_NOTES => HubChannel::Tickets {
                entity: None,
                notes: true,
            },
            other => match other.strip_prefix(TICKETS_WITH_NOTES) {
                Some(rest) => HubChannel::Tickets {
                    entity: Some(Uuid::parse_str(rest.strip_prefix(':')?).ok()?),
                    notes: true,
                },
                None => Channel::parse(other)?.into(),
            },
        };
        Some((Topic { tenant, channel }, message_id))
    }
}

crate::text_enum! {
    /// The kinds of frame a client may send (a frame's `type`).
    pub enum ClientFrameKind {
        Subscribe = "subscribe",
        Unsubscribe = "unsubscribe",
        Message = "message",
        Typing = "typing",
        Ping = "ping",
    }
}

/// A frame from a client, by its `type`: each variant carries that type's
/// fields only. The fields are the client's text, not yet checked: a
/// handler checks them in an order the protocol fixes against the
/// socket's own checks (a `message` frame spends the rate limit before its
/// fields are read, `chat:write` is checked before `sessionId`), and a bad
/// field gets an `error` frame rather than a dropped socket.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientFrame {
    Subscribe {
        channel: Option<String>,
        since: Option<String>,
    },
    Unsubscribe {
        channel: Option<String>,
    },
    Message(MessageFrame),
    Typing {
        session_id: Option<String>,
        sender_id: Option<String>,
    },
    Ping,
}

/// The fields of a `message` frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageFrame {
    pub session_id: Option<String>,
    pub body: Option<String>,
    pub sender_id: Option<String>,
    pub client_message_id: Option<String>,
    pub attachment_ids: Option<Value>,
}

/// A client frame and the `id` its reply echoes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedFrame {
    pub id: Option<Value>,
    pub frame: ClientFrame,
}

/// Why a client's text is no frame; either way the socket stays open.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameRejection {
    /// Not JSON, not shaped as a frame, or a field of the wrong JSON type
    /// (any field a frame may have, whatever this frame's `type`).
    NotJson,
    /// `type` missing or none of the kinds; the reply still echoes `id`.
    UnknownType { id: Option<Value> },
}

impl FrameRejection {
    /// The `error` frame that answers it.
    pub fn error_frame(&self) -> String {
        match self {
            FrameRejection::NotJson => {
                error(None, ErrorCode::InvalidJson, "Frame is not valid JSON")
            }
            FrameRejection::UnknownType { id } => {
                let rejected = ApiError::invalid_field(
                    "type",
                    format!("must be one of: {}", ClientFrameKind::NAMES.join(", ")),
                );
                error(id.as_ref(), rejected.code, &rejected.message)
            }
        }
    }
}

/// Every field any client frame has, as serde reads it. The text is read
/// once, into this, and then moved by `type` into its `ClientFrame`
/// variant. A serde internally tagged enum would do it in one step but
/// buffers the whole frame to find the tag first (a second pass over every
/// frame, which the socket benchmark counts per second), and would also
/// change which frames are rejected: here a field of the wrong JSON type is
/// `invalid_json` whatever the `type`, and unknown fields are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawClientFrame {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<Value>,
    channel: Option<String>,
    since: Option<String>,
    session_id: Option<String>,
    body: Option<String>,
    sender_id: Option<String>,
    client_message_id: Option<String>,
    attachment_ids: Option<Value>,
}

impl ReceivedFrame {
    /// Parses a client's text frame.
    pub fn parse(text: &str) -> Result<ReceivedFrame, FrameRejection> {
        let raw: RawClientFrame =
            serde_json::from_str(text).map_err(|_| FrameRejection::NotJson)?;
        let id = raw.id;
        let Some(Ok(kind)) = raw.kind.as_deref().map(str::parse::<ClientFrameKind>) else {
            return Err(FrameRejection::UnknownType { id });
        };
        let frame = match kind {
            ClientFrameKind::Subscribe => ClientFrame::Subscribe {
                channel: raw.channel,
                since: raw.since,
            },
            ClientFrameKind::Unsubscribe => ClientFrame::Unsubscribe {
                channel: raw.channel,
            },
            ClientFrameKind::Message => ClientFrame::Message(MessageFrame {
                session_id: raw.session_id,
                body: raw.body,
                sender_id: raw.sender_id,
                client_message_id: raw.client_message_id,
                attachment_ids: raw.attachment_ids,
            }),
            ClientFrameKind::Typing => ClientFrame::Typing {
                session_id: raw.session_id,
                sender_id: raw.sender_id,
            },
            ClientFrameKind::Ping => ClientFrame::Ping,
        };
        Ok(ReceivedFrame { id, frame })
    }
}

/// A server frame about a channel: `{type, channel, id?, data}`.
#[derive(Serialize)]
struct EventFrame<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    channel: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    data: &'a T,
}

/// `{"type": kind, "channel": channel, "data": data}` (plus the echoed `id`).
pub fn event(kind: &str, channel: &str, id: Option<&Value>, data: &impl Serialize) -> String {
    to_frame(&EventFrame {
        kind,
        channel,
        id,
        data,
    })
}

#[derive(Serialize)]
struct ReplyFrame<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
}

/// A reply without data: `subscribed`, `unsubscribed`, `pong`.
pub fn reply(kind: &str, channel: Option<&str>, id: Option<&Value>) -> String {
    to_frame(&ReplyFrame { kind, channel, id })
}

#[derive(Serialize)]
struct ErrorFrame<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    code: ErrorCode,
    error: &'a str,
    #[serde(rename = "retryAfter", skip_serializing_if = "Option::is_none")]
    retry_after: Option<u64>,
}

/// `{"type": "error", "code": …, "error": …}` with REST's codes.
pub fn error(id: Option<&Value>, code: ErrorCode, message: &str) -> String {
    to_frame(&ErrorFrame {
        kind: "error",
        id,
        code,
        error: message,
        retry_after: None,
    })
}

/// The `rate_limited` error frame of a refused frame, with REST's message
/// and the seconds to wait as `retryAfter`.
pub fn rate_limited(id: Option<&Value>, retry_after_secs: u64) -> String {
    let seconds = retry_after_secs.max(1);
    to_frame(&ErrorFrame {
        kind: "error",
        id,
        code: ErrorCode::RateLimited,
        error: &format!("Rate limit exceeded. Try again in {seconds} seconds."),
        retry_after: Some(seconds),
    })
}

/// The text of a frame. Only a payload whose `Serialize` fails (none of ours
/// does) can end in the fallback: the client then gets an `internal` error
/// frame rather than an empty message, and the log says why.
fn to_frame(frame: &impl Serialize) -> String {
    serde_json::to_string(frame).unwrap_or_else(|error| {
        tracing::error!(%error, "a socket frame could not be serialised");
        r#"{"type":"error","code":"internal","error":"Internal server error"}"#.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let tenant = Tenant {
            company_id: Uuid::now_v7(),
            mode: Mode::Test,
        };
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
        let frame: Value =
            serde_json::from_str(&error(None, ErrorCode::NotFound, "x")).expect("json");
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
            }
        );
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
            r#"{"type":"error","id":"c1","code":"validation_failed","error":"type: must be one of: subscribe, unsubscribe, message, typing, ping"}"#
        );
    }
}
