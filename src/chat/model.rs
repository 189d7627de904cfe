//! Chat records as the API shows them, and the email an agent's reply sends.

use serde::Serialize;
use uuid::Uuid;

use crate::mail::Email;
use crate::time::Timestamp;

pub const STATUSES: &[&str] = &["ACTIVE", "CLOSED"];
pub const SENDER_TYPES: &[&str] = &["visitor", "agent", "system"];
/// Longest message body, in characters (docs/api.md, "Chat").
pub const BODY_MAX: usize = 10_000;

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub id: Uuid,
    pub entity_id: Uuid,
    #[schema(schema_with = session_status)]
    pub status: String,
    pub visitor_name: String,
    pub visitor_email: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub closed_at: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: Uuid,
    pub session_id: Uuid,
    pub body: String,
    #[schema(schema_with = sender_type)]
    pub sender_type: String,
    pub sender_id: Option<Uuid>,
    /// The agent's name, on agent messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    pub created_at: Timestamp,
}

fn session_status() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(STATUSES)
}

fn sender_type() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(SENDER_TYPES)
}

pub struct NewSession {
    pub entity_id: Uuid,
    pub visitor_name: String,
    pub visitor_email: Option<String>,
}

#[derive(Debug, Default)]
pub struct SessionFilter {
    pub entity_id: Option<Uuid>,
    pub status: Option<&'static str>,
}

/// A message to send; for `agent`, `sender_id` must be a user of the
/// company (the store checks it and reads the name in its transaction).
pub struct NewMessage {
    pub body: String,
    pub sender_type: &'static str,
    pub sender_id: Option<Uuid>,
}

/// The visitor's email when an agent replied; the message and a link that
/// continues the chat in the widget.
pub fn agent_reply_email(session: &Session, message: &Message, link: &str) -> Option<Email> {
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
            status: "ACTIVE".into(),
            visitor_name: "Vic".into(),
            visitor_email: Some("vic@example.com".into()),
            created_at: now,
            updated_at: now,
            closed_at: None,
        };
        let message = Message {
            id: Uuid::now_v7(),
            session_id: session.id,
            body: "Try <b>this</b>".into(),
            sender_type: "agent".into(),
            sender_id: None,
            sender_name: Some("Ann".into()),
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
    }
}
