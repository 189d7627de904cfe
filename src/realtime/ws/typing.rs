//! The `typing` frame: passed on to the session's channel (its visitor
//! without the agent's user id) and its entity's, at most once per session
//! every `TYPING_INTERVAL` per socket.

use std::time::Instant;

use serde::Serialize;
use uuid::Uuid;

use super::{Fail, Socket, TYPING_INTERVAL};
use crate::chat::model::SenderType;
use crate::realtime::protocol::{self, Channel, Topic};
use crate::validate::{Fields, optional_id};

impl Socket {
    /// An agent's `senderId` is checked before the session's write right;
    /// a visitor's is ignored.
    pub(super) async fn typing(
        &mut self,
        session_id: Option<&str>,
        sender_id: Option<&str>,
    ) -> Result<(), Fail> {
        let sender_id = if self.credential.is_visitor() {
            None
        } else {
            let (sender,) = (optional_id("senderId", sender_id),).all_valid()?;
            sender
        };
        let (session_id, entity_id) = self.writable_session(session_id).await?;
        if let Some((last_session, at)) = self.last_typing
            && last_session == session_id
            && at.elapsed() < TYPING_INTERVAL
        {
            return Ok(());
        }
        self.last_typing = Some((session_id, Instant::now()));
        let data = Typing {
            session_id,
            sender_type: self.sender_type(),
            sender_id,
        };
        // The visitor hears that someone types, never the agent's user id.
        let visitor = VisitorTyping {
            session_id,
            sender_type: data.sender_type,
        };
        let tenant = self.credential.tenant();
        let realtime = &self.state.realtime;
        realtime
            .publish_to_session(tenant, session_id, "typing", None, &data, &visitor)
            .await;
        let channel = Channel::Entity(entity_id);
        let frame = protocol::event("typing", &channel.name(), None, &data);
        realtime
            .publish(Topic::new(tenant, channel.into()), None, frame)
            .await;
        Ok(())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Typing {
    session_id: Uuid,
    sender_type: SenderType,
    sender_id: Option<Uuid>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VisitorTyping {
    session_id: Uuid,
    sender_type: SenderType,
}
