//! The socket protocol (docs/websocket.md): channel names, the frames a
//! client sends and the frames the server sends. Every frame is a JSON text
//! frame with a `type`.

use crate::actor::Actor;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::error::{ApiError, ErrorCode};

mod topic;
pub use topic::{BUS_PREFIX, HubChannel, Topic};

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
    /// `ticket:<id>`: who is viewing or typing on one ticket.
    Ticket(Uuid),
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
            "ticket" => Some(Channel::Ticket(id)),
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
            Channel::Ticket(id) => format!("ticket:{id}"),
        }
    }
}

crate::text_enum! {
    /// The kinds of frame a client may send (a frame's `type`).
    pub enum ClientFrameKind {
        Subscribe = "subscribe",
        Unsubscribe = "unsubscribe",
        Message = "message",
        Typing = "typing",
        Viewing = "viewing",
        Leave = "leave",
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
    /// Typing in a chat (`sessionId`) or on a ticket (`ticketId`).
    Typing {
        session_id: Option<String>,
        sender_id: Option<String>,
        ticket_id: Option<String>,
    },
    /// An agent views a ticket (and keeps viewing it: a refresh).
    Viewing {
        ticket_id: Option<String>,
    },
    /// An agent no longer views a ticket.
    Leave {
        ticket_id: Option<String>,
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
    ticket_id: Option<String>,
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
                ticket_id: raw.ticket_id,
            },
            ClientFrameKind::Viewing => ClientFrame::Viewing {
                ticket_id: raw.ticket_id,
            },
            ClientFrameKind::Leave => ClientFrame::Leave {
                ticket_id: raw.ticket_id,
            },
            ClientFrameKind::Ping => ClientFrame::Ping,
        };
        Ok(ReceivedFrame { id, frame })
    }
}

/// A server frame about a channel: `{type, channel, id?, data, actor?}`.
#[derive(Serialize)]
struct EventFrame<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    channel: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    data: &'a T,
    /// Who made the change the frame tells of (agents' frames of a change).
    #[serde(skip_serializing_if = "Option::is_none")]
    actor: Option<&'a Actor>,
}

/// `{"type": kind, "channel": channel, "data": data}` (plus the echoed `id`).
pub fn event(kind: &str, channel: &str, id: Option<&Value>, data: &impl Serialize) -> String {
    change(kind, channel, id, data, None)
}

/// `event`, naming `actor` (when given) as who made the change it tells of.
pub fn change(
    kind: &str,
    channel: &str,
    id: Option<&Value>,
    data: &impl Serialize,
    actor: Option<&Actor>,
) -> String {
    to_frame(&EventFrame {
        kind,
        channel,
        id,
        data,
        actor,
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
mod tests;
