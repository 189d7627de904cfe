//! What a chat's visitor is shown of it: the session without the agents'
//! notes and the company's data, and no agent's user id anywhere (an
//! agent's name only).

use crate::attachments::AttachmentRef;
use serde::Serialize;
use uuid::Uuid;

use crate::model::{Message, SenderType, Session, sender_type};
use crate::time::Timestamp;

impl Session {
    /// The session as its visitor may see it: without `tags`, which are the
    /// agents' own notes about the conversation ("angry", "refund-risk"),
    /// nor `customFields`, which are the company's data about the visitor
    /// (even the visitor-writable ones: a visitor writes them, never reads
    /// them back, so one view fits every field), nor `assigneeId`: a
    /// visitor learns an agent's name from their messages, never their
    /// user id (`assignedAt` tells that an agent has the chat).
    pub fn visitor_view(&self) -> serde_json::Value {
        self.without(&HIDDEN_FROM_VISITORS)
    }

    /// The session as `session:<id>` shows it to agents: without what its
    /// visitor must not see there (`tags`, `customFields`); agents read
    /// those on `entity:` channels.
    pub fn session_channel_view(&self) -> serde_json::Value {
        self.without(&HIDDEN_ON_SESSION_CHANNELS)
    }

    fn without(&self, hidden: &[&str]) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(fields) = value.as_object_mut() {
            for field in hidden {
                fields.remove(*field);
            }
        }
        value
    }
}

/// The fields of a session agents do not read on its own channel.
const HIDDEN_ON_SESSION_CHANNELS: [&str; 2] = ["tags", "customFields"];

/// The fields of a session its visitor is not shown (see `visitor_view`).
const HIDDEN_FROM_VISITORS: [&str; 3] = ["tags", "customFields", "assigneeId"];

/// The schema of `Session::visitor_view`: the session's own schema less the
/// fields the view removes, so the two cannot drift apart.
pub struct VisitorSession;

impl utoipa::PartialSchema for VisitorSession {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::RefOr;
        use utoipa::openapi::schema::Schema;
        let mut schema = <Session as utoipa::PartialSchema>::schema();
        if let RefOr::T(Schema::Object(object)) = &mut schema {
            for hidden in HIDDEN_FROM_VISITORS {
                object.properties.shift_remove(hidden);
                object.required.retain(|name| name != hidden);
            }
            object.description = Some(
                "A chat session as its visitor sees it (no tags, no custom fields, no assignee id)"
                    .into(),
            );
        }
        schema
    }
}

impl utoipa::ToSchema for VisitorSession {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        <Session as utoipa::ToSchema>::schemas(schemas);
    }
}

impl Message {
    /// The message as its session's visitor sees it: an agent's name,
    /// never their user id.
    pub fn visitor_view(&self) -> VisitorMessage {
        VisitorMessage {
            id: self.id,
            session_id: self.session_id,
            body: self.body.clone(),
            sender_type: self.sender_type,
            sender_name: self.sender_name.clone(),
            client_message_id: self.client_message_id.clone(),
            attachments: self.attachments.clone(),
            created_at: self.created_at,
        }
    }
}

/// A chat message as its visitor sees it: `Message` without `senderId`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VisitorMessage {
    pub id: Uuid,
    pub session_id: Uuid,
    pub body: String,
    #[schema(schema_with = sender_type)]
    pub sender_type: SenderType,
    /// The agent's name, on agent messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    /// The sender's own id for the message, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_message_id: Option<String>,
    /// Files attached to the message.
    pub attachments: Vec<AttachmentRef>,
    pub created_at: Timestamp,
}
