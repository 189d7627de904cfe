//! Chat records as the API shows them, and the email an agent's reply sends.

use crate::attachments::AttachmentRef;
use serde::Serialize;
use uuid::Uuid;

use crate::custom_fields::model::{FieldFilter, FieldPatch, FieldValues};
use crate::error::ApiError;
use crate::error::FieldError;
use crate::mail::Email;
use crate::search::TextQuery;
use crate::tags::model::{TagEdit, TagFilter};
use crate::time::Timestamp;
use crate::validate::{Fields, optional_id, problem, required_enum, required_id, required_text};

crate::text_enum! {
    pub enum SessionStatus {
        Active = "ACTIVE",
        Closed = "CLOSED",
    }
}

crate::text_enum! {
    pub enum SenderType {
        Visitor = "visitor",
        Agent = "agent",
        System = "system",
    }
}

/// Longest message body, in characters (docs/api.md, "Chat").
pub const BODY_MAX: usize = 10_000;

/// Longest `clientMessageId`, in characters.
pub const CLIENT_MESSAGE_ID_MAX: usize = 100;

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub id: Uuid,
    pub entity_id: Uuid,
    #[schema(schema_with = session_status)]
    pub status: SessionStatus,
    pub visitor_name: String,
    pub visitor_email: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub closed_at: Option<Timestamp>,
    /// The team the chat belongs to; with no `assigneeId` while ACTIVE, the
    /// chat waits in that team's queue.
    pub team_id: Option<Uuid>,
    /// The agent handling the chat.
    pub assignee_id: Option<Uuid>,
    pub assigned_at: Option<Timestamp>,
    /// The contact the chat is from, matched from its visitor's verified
    /// identity or email when it was created (null: none).
    pub contact_id: Option<Uuid>,
    /// Who the visitor is, and whether the widget proved it.
    #[sqlx(flatten)]
    pub visitor: Visitor,
    /// False while an email the visitor typed (unproven) awaits its
    /// confirmation link: agent replies are not mailed to it until then.
    pub email_verified: bool,
    /// Sorted.
    #[sqlx(skip)]
    pub tags: Vec<String>,
    /// Values of the company's custom fields, by key (absent when unset).
    #[sqlx(json)]
    #[schema(value_type = Object)]
    pub custom_fields: FieldValues,
    /// Grows by one with every change of the session (a message
    /// included); the session's answers carry it as `ETag: "<version>"`.
    pub version: i64,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: Uuid,
    pub session_id: Uuid,
    pub body: String,
    #[schema(schema_with = sender_type)]
    pub sender_type: SenderType,
    pub sender_id: Option<Uuid>,
    /// The agent's name, on agent messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    /// The sender's own id for the message, when it gave one: a resend
    /// with the same id in the same session is this message again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_message_id: Option<String>,
    /// Files attached to the message (read apart from its row).
    #[sqlx(skip)]
    pub attachments: Vec<AttachmentRef>,
    pub created_at: Timestamp,
}

pub use crate::views::{VisitorMessage, VisitorSession};
pub use vocab::visitor::Visitor;

/// How a new session's visitor is known. The default is a session an API
/// key opened: the integrator vouches for the email it gives.
#[derive(Debug, Clone)]
pub struct SessionIdentity {
    pub external_id: Option<String>,
    pub verified: bool,
    pub email_verified: bool,
    /// An unproven email: the link's token hash, and the email that sends it.
    pub confirmation: Option<(String, Email)>,
}

impl Default for SessionIdentity {
    fn default() -> Self {
        SessionIdentity {
            external_id: None,
            verified: false,
            email_verified: true,
            confirmation: None,
        }
    }
}

pub fn session_status() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(SessionStatus::NAMES)
}

pub fn sender_type() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(SenderType::NAMES)
}

pub struct NewSession {
    /// Chosen before the write: a visitor who starts a chat is named by it
    /// as the actor of the session's creation.
    pub id: Uuid,
    pub entity_id: Uuid,
    pub visitor_name: String,
    pub visitor_email: Option<String>,
    /// A sorted set.
    pub tags: Vec<String>,
    /// Checked against the definitions; required ones present.
    pub custom_fields: FieldPatch,
    pub identity: SessionIdentity,
}

#[derive(Debug, Default)]
pub struct SessionFilter {
    pub entity_id: Option<Uuid>,
    pub team_id: Option<Uuid>,
    pub status: Option<SessionStatus>,
    pub tags: TagFilter,
    /// `?q=`: ranked full-text search (`None` when absent or blank).
    pub search: Option<TextQuery>,
    pub custom_fields: FieldFilter,
}

/// What a PATCH or `POST …/tags` does to a session's tags.
#[derive(Debug, Clone, Default)]
pub enum SessionTags {
    #[default]
    Keep,
    /// Make this sorted set the tags.
    Replace(Vec<String>),
    Edit(TagEdit),
}

/// Who sends a message: an agent is always a known user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    Visitor(Option<Uuid>),
    Agent(Uuid),
    System(Option<Uuid>),
}

impl Sender {
    pub fn sender_type(self) -> SenderType {
        match self {
            Sender::Visitor(_) => SenderType::Visitor,
            Sender::Agent(_) => SenderType::Agent,
            Sender::System(_) => SenderType::System,
        }
    }

    pub fn id(self) -> Option<Uuid> {
        match self {
            Sender::Agent(id) => Some(id),
            Sender::Visitor(id) | Sender::System(id) => id,
        }
    }
}

/// Where a message's sender type comes from: the REST body names it, a
/// socket's credential fixes it.
#[derive(Debug, Clone, Copy)]
pub enum SenderTypeInput<'a> {
    Named(Option<&'a str>),
    Fixed(SenderType),
}

/// A message to send, parsed from a REST body or a socket frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMessage {
    pub body: String,
    pub sender: Sender,
    pub client_message_id: Option<String>,
    /// Unattached uploads to attach (a visitor's only its session's).
    pub attachment_ids: Vec<Uuid>,
    /// Sent with a visitor token: only the session's own visitor uploads
    /// may be attached (set by the socket after parsing).
    pub visitor_uploads_only: bool,
    /// The session's version the message is based on (`If-Match` on the
    /// REST send; set by the route after parsing).
    pub expected_version: Option<i64>,
}

/// The fields of a message as a REST body or a socket frame gives them.
#[derive(Debug, Clone, Copy)]
pub struct MessageInput<'a> {
    pub body: Option<&'a str>,
    pub sender_type: SenderTypeInput<'a>,
    pub sender_id: Option<&'a str>,
    pub client_message_id: Option<&'a str>,
    pub attachment_ids: Option<&'a serde_json::Value>,
}

/// `clientMessageId`: optional, taken as given (an opaque key, so not
/// trimmed), 1..=100 characters, no NUL (Postgres text cannot hold it).
pub fn optional_client_message_id(value: Option<&str>) -> Result<Option<String>, FieldError> {
    match value {
        None => Ok(None),
        Some(id) if id.contains('\0') => Err(problem(
            "clientMessageId",
            "must not contain NUL characters",
        )),
        Some(id) if (1..=CLIENT_MESSAGE_ID_MAX).contains(&id.chars().count()) => {
            Ok(Some(id.to_string()))
        }
        Some(_) => Err(problem(
            "clientMessageId",
            format!("must be 1 to {CLIENT_MESSAGE_ID_MAX} characters"),
        )),
    }
}

impl OutgoingMessage {
    /// The body (required, trimmed, 1..=10 000 characters), the sender type
    /// and `senderId`: optional when the type is named (but required for
    /// `agent`), required for a fixed agent, ignored for a fixed visitor;
    /// and the optional `clientMessageId`.
    pub fn parse(input: MessageInput) -> Result<OutgoingMessage, ApiError> {
        let MessageInput {
            body,
            sender_type,
            sender_id,
            client_message_id,
            attachment_ids,
        } = input;
        let (sender_type, sender_id) = match sender_type {
            SenderTypeInput::Named(raw) => (
                required_enum("senderType", raw),
                optional_id("senderId", sender_id),
            ),
            SenderTypeInput::Fixed(SenderType::Agent) => (
                Ok(SenderType::Agent),
                required_id("senderId", sender_id).map(Some),
            ),
            SenderTypeInput::Fixed(fixed) => (Ok(fixed), Ok(None)),
        };
        let (body, sender_type, sender_id, client_message_id, attachment_ids) = (
            required_text("body", body, BODY_MAX),
            sender_type,
            sender_id,
            optional_client_message_id(client_message_id),
            crate::attachments::model::attachment_ids("attachmentIds", attachment_ids),
        )
            .all_valid()?;
        let sender = match (sender_type, sender_id) {
            (SenderType::Agent, Some(id)) => Sender::Agent(id),
            (SenderType::Agent, None) => {
                return Err(ApiError::invalid_field(
                    "senderId",
                    "is required for agent messages",
                ));
            }
            (SenderType::Visitor, id) => Sender::Visitor(id),
            (SenderType::System, id) => Sender::System(id),
        };
        Ok(OutgoingMessage {
            body,
            sender,
            client_message_id,
            attachment_ids,
            visitor_uploads_only: false,
            expected_version: None,
        })
    }
}

/// A message to send; for `agent`, `sender_id` must be a user of the
/// company (the store checks it and reads the name in its transaction).
pub struct NewMessage {
    pub body: String,
    pub sender_type: SenderType,
    pub sender_id: Option<Uuid>,
    pub client_message_id: Option<String>,
    pub attachment_ids: Vec<Uuid>,
    /// Only the session's own visitor uploads may be attached.
    pub visitor_uploads_only: bool,
    /// The session's version the message is based on (`If-Match`): at
    /// another version, nothing is stored (412 `version_conflict`).
    pub expected_version: Option<i64>,
}

/// The visitor's email when an agent replied; the message and a link that
/// continues the chat in the widget.
/// None while the visitor's email is unconfirmed.
pub fn agent_reply_email(session: &Session, message: &Message, link: &str) -> Option<Email> {
    if !session.email_verified {
        return None;
    }
    let to = session.visitor_email.clone()?;
    let agent = message.sender_name.as_deref().unwrap_or("An agent");
    let text = format!(
        "Hello {name},\n\n{agent} replied to your chat:\n\n{body}\n\n\
         Continue the conversation: {link}\n",
        name = session.visitor_name,
        body = message.body,
    );
    let html = format!(
        "<p>Hello {name},</p><p>{agent} replied to your chat:</p>\
         <blockquote style=\"white-space: pre-wrap\">{body}</blockquote>\
         <p><a href=\"{link}\">Continue the conversation</a></p>",
        name = escape_html(&session.visitor_name),
        agent = escape_html(agent),
        body = escape_html(&message.body),
        link = escape_html(link),
    );
    Some(Email {
        to,
        subject: format!("{agent} replied to your chat"),
        text,
        html: Some(html),
    })
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_email_carries_the_message_and_the_link() {
        let now = Timestamp::now();
        let session = Session {
            id: Uuid::now_v7(),
            entity_id: Uuid::now_v7(),
            status: SessionStatus::Active,
            visitor_name: "Vic".into(),
            visitor_email: Some("vic@example.com".into()),
            created_at: now,
            updated_at: now,
            closed_at: None,
            team_id: None,
            assignee_id: None,
            assigned_at: None,
            contact_id: None,
            visitor: Visitor {
                name: "Vic".into(),
                email: Some("vic@example.com".into()),
                ..Visitor::default()
            },
            email_verified: true,
            tags: Vec::new(),
            custom_fields: Default::default(),
            version: 1,
        };
        let message = Message {
            id: Uuid::now_v7(),
            session_id: session.id,
            body: "Try <b>this</b>".into(),
            sender_type: SenderType::Agent,
            sender_id: None,
            sender_name: Some("Ann".into()),
            client_message_id: None,
            attachments: Vec::new(),
            created_at: now,
        };
        let email = agent_reply_email(&session, &message, "http://x/demo#a&b").expect("email");
        assert_eq!(email.to, "vic@example.com");
        assert!(email.text.contains("Try <b>this</b>"));
        assert!(email.text.contains("http://x/demo#a&b"));
        let html = email.html.expect("html");
        assert!(html.contains("Try &lt;b&gt;this&lt;/b&gt;"));
        assert!(html.contains("http://x/demo#a&amp;b"));
        let anonymous = Session {
            visitor_email: None,
            ..session
        };
        assert!(agent_reply_email(&anonymous, &message, "l").is_none());
        let unconfirmed = Session {
            email_verified: false,
            visitor_email: Some("vic@example.com".into()),
            ..anonymous
        };
        assert!(agent_reply_email(&unconfirmed, &message, "l").is_none());
    }

    fn input<'a>(
        body: &'a str,
        sender_type: SenderTypeInput<'a>,
        sender_id: Option<&'a str>,
    ) -> MessageInput<'a> {
        MessageInput {
            body: Some(body),
            sender_type,
            sender_id,
            client_message_id: None,
            attachment_ids: None,
        }
    }

    #[test]
    fn an_agent_message_needs_a_sender_id() {
        let named =
            OutgoingMessage::parse(input("hi", SenderTypeInput::Named(Some("agent")), None))
                .expect_err("no senderId");
        assert_eq!(named.message, "senderId: is required for agent messages");
        let fixed =
            OutgoingMessage::parse(input("hi", SenderTypeInput::Fixed(SenderType::Agent), None))
                .expect_err("no senderId");
        assert_eq!(fixed.message, "senderId: is required");
    }

    #[test]
    fn a_fixed_visitor_ignores_the_sender_id() {
        let message = OutgoingMessage::parse(input(
            " hi ",
            SenderTypeInput::Fixed(SenderType::Visitor),
            Some("not-an-id"),
        ))
        .expect("valid");
        assert_eq!(message.body, "hi");
        assert_eq!(message.sender, Sender::Visitor(None));
    }

    #[test]
    fn a_client_message_id_has_1_to_100_characters_and_no_nul() {
        assert_eq!(optional_client_message_id(None), Ok(None));
        let longest = "é".repeat(CLIENT_MESSAGE_ID_MAX);
        assert_eq!(
            optional_client_message_id(Some(&longest)),
            Ok(Some(longest.clone()))
        );
        for refused in [
            String::new(),
            "x".repeat(CLIENT_MESSAGE_ID_MAX + 1),
            "a\0b".to_string(),
        ] {
            let err = optional_client_message_id(Some(&refused)).expect_err("refused");
            assert_eq!(err.field, "clientMessageId");
        }
    }
}
