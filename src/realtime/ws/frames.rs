//! Client frames: subscribe (with replay and the presence snapshot),
//! unsubscribe, message (typing: `typing`); each answered per
//! docs/websocket.md.

use axum::extract::FromRef;
use axum::http::StatusCode;
use serde_json::Value;
use uuid::Uuid;

use super::{Credential, Fail, MAX_SUBSCRIPTIONS, REPLAY_BATCH, Socket};
use crate::auth::{Scope, Visibility};
use crate::chat::model::{MessageInput, OutgoingMessage, SenderType, SenderTypeInput};
use crate::chat::{service, store};
use crate::error::{ApiError, ErrorCode, StoreError};
use crate::ratelimit::Limiter;
use crate::realtime::hub::TicketReads;
use crate::realtime::protocol::{self, Channel, HubChannel, MessageFrame, Topic};
use crate::validate::{Fields, required_id};

impl Socket {
    fn parse_channel(name: Option<&str>) -> Result<(Channel, &str), ApiError> {
        let Some(name) = name else {
            return Err(ApiError::invalid_field("channel", "is required"));
        };
        let channel = Channel::parse(name).ok_or_else(|| {
            ApiError::invalid_field(
                "channel",
                "must be session:<id>, entity:<id>, agent:<userId>, tickets, tickets:<id>, ticket:<id> or presence",
            )
        })?;
        Ok((channel, name))
    }

    /// Who this socket writes as: its credential decides.
    pub(super) fn sender_type(&self) -> SenderType {
        if self.credential.is_visitor() {
            SenderType::Visitor
        } else {
            SenderType::Agent
        }
    }

    fn topic(&self, channel: Channel) -> Topic {
        let hub_channel = match channel {
            Channel::Tickets(entity) => HubChannel::Tickets {
                entity,
                notes: self.reads_notes(),
            },
            other => service::hub_channel(other, self.credential.is_visitor()),
        };
        Topic::new(self.credential.tenant(), hub_channel)
    }

    /// Whether this socket hears of internal notes: its key reads them now.
    pub(super) fn reads_notes(&self) -> bool {
        self.conn.ticket_reads() == TicketReads::Notes
    }

    /// Whether this socket may read `channel` (404 for sessions and
    /// entities it cannot see, like REST).
    async fn authorize_read(&mut self, channel: Channel) -> Result<(), Fail> {
        if let Credential::Agent { tenant, .. } = &self.credential
            && let Visibility::TeamsOf { member } = tenant.visibility
        {
            super::teams_only::reads(channel, member)?;
        }
        match (&self.credential, channel) {
            (_, Channel::Presence) => Ok(()),
            (_, Channel::Ticket(id)) => self.readable_ticket(id).await,
            (Credential::Visitor { session_id, .. }, Channel::Session(id)) if *session_id == id => {
                Ok(())
            }
            (Credential::Visitor { .. }, Channel::Session(_)) => Err(ApiError::not_found().into()),
            (Credential::Visitor { .. }, Channel::Entity(_)) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::InsufficientScope,
                "A visitor token gives its own session and presence only",
            )
            .into()),
            (Credential::Agent { .. }, Channel::Session(id)) => {
                self.entity_of(id).await?;
                Ok(())
            }
            (Credential::Agent { tenant, .. }, Channel::Entity(id)) => {
                crate::entities::store::find(&self.state.db, tenant.company_id, id).await?;
                Ok(())
            }
            (Credential::Visitor { .. }, Channel::Tickets(_)) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::InsufficientScope,
                "A visitor token gives its own session and presence only",
            )
            .into()),
            (Credential::Agent { .. }, Channel::Tickets(_))
                if self.conn.ticket_reads() == TicketReads::Nothing =>
            {
                Err(ApiError::forbidden_scope(Scope::TicketsRead.as_str()).into())
            }
            (Credential::Agent { .. }, Channel::Tickets(None)) => Ok(()),
            (Credential::Agent { tenant, .. }, Channel::Tickets(Some(id))) => {
                crate::entities::store::find(&self.state.db, tenant.company_id, id).await?;
                Ok(())
            }
            (Credential::Visitor { .. }, Channel::Agent(_)) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::InsufficientScope,
                "A visitor token gives its own session and presence only",
            )
            .into()),
            // Any agent socket of the company: keys are not tied to users.
            (Credential::Agent { tenant, .. }, Channel::Agent(id)) => {
                crate::users::store::find(&self.state.db, tenant.company_id, id).await?;
                Ok(())
            }
        }
    }

    /// The entity of session `id` (NotFound outside the tenant, and outside
    /// the teams an agent is limited to), cached.
    async fn entity_of(&mut self, id: Uuid) -> Result<Uuid, StoreError> {
        if let Credential::Visitor {
            session_id,
            entity_id,
            ..
        } = &self.credential
        {
            return if *session_id == id {
                Ok(*entity_id)
            } else {
                Err(StoreError::NotFound)
            };
        }
        if let Some((_, entity)) = self.sessions.iter().find(|(s, _)| *s == id) {
            return Ok(*entity);
        }
        let session = store::find_session(&self.state.db, &self.credential.tenant(), id).await?;
        if self.sessions.len() >= 32 {
            self.sessions.remove(0);
        }
        self.sessions.push((id, session.entity_id));
        Ok(session.entity_id)
    }

    pub(super) async fn subscribe(
        &mut self,
        channel: Option<&str>,
        since: Option<&str>,
        id: Option<&Value>,
    ) -> Result<(), Fail> {
        let (channel, name) = Self::parse_channel(channel)?;
        let since = match since.map(str::trim) {
            None | Some("") => None,
            Some(_)
                if matches!(
                    channel,
                    Channel::Presence | Channel::Agent(_) | Channel::Ticket(_)
                ) =>
            {
                return Err(ApiError::invalid_field(
                    "since",
                    "applies to session, entity and ticket channels only",
                )
                .into());
            }
            Some(raw) => Some(Uuid::parse_str(raw).map_err(|_| {
                let what = match channel {
                    Channel::Tickets(_) => "must be an event id",
                    _ => "must be a message id",
                };
                ApiError::invalid_field("since", what)
            })?),
        };
        self.authorize_read(channel).await?;
        let topic = self.topic(channel);
        let fresh = !self.conn.is_subscribed(&topic);
        if fresh && self.conn.subscriptions() >= MAX_SUBSCRIPTIONS {
            return Err(ApiError::invalid_field(
                "channel",
                format!("a socket may subscribe to at most {MAX_SUBSCRIPTIONS} channels"),
            )
            .into());
        }
        // Subscribe before reading the store, so nothing falls in between:
        // this node to the company's bus channel (confirmed by Redis), then
        // the socket to the hub's.
        if self.bus_interest.is_none() {
            let company_id = self.credential.tenant().company_id;
            self.bus_interest = Some(self.state.realtime.bus.join(company_id).await);
        }
        self.conn.subscribe(topic);
        if let Channel::Tickets(entity) = channel {
            let replay = match since {
                Some(since) => match self.ticket_events_after(since).await {
                    Ok(batch) => Some(batch),
                    Err(err) => {
                        if fresh {
                            self.drop_subscription(&topic);
                        }
                        return Err(match err {
                            StoreError::NotFound => ApiError::invalid_field(
                                "since",
                                "must be the id of a ticket event of this company and mode",
                            )
                            .into(),
                            other => other.into(),
                        });
                    }
                },
                None => None,
            };
            self.send_text(protocol::reply("subscribed", Some(name), id))
                .await?;
            if let Some(batch) = replay {
                self.replay_tickets(entity, topic, batch).await?;
            }
            return Ok(());
        }
        let replay = match since {
            None => None,
            Some(since) => match self.replay_batch(channel, since).await {
                Ok(batch) => Some(batch),
                Err(err) => {
                    if fresh {
                        self.drop_subscription(&topic);
                    }
                    return Err(match err {
                        StoreError::NotFound => {
                            ApiError::invalid_field("since", "must be a message of this channel")
                                .into()
                        }
                        other => other.into(),
                    });
                }
            },
        };
        self.send_text(protocol::reply("subscribed", Some(name), id))
            .await?;
        if let Some(batch) = replay {
            self.replay(channel, topic, batch).await?;
        }
        if channel == Channel::Presence {
            self.presence_snapshot().await?;
        }
        if let Channel::Ticket(ticket) = channel {
            self.viewers_snapshot(ticket).await?;
        }
        if let Channel::Session(session) = channel {
            self.queue_snapshot(session).await?;
        }
        Ok(())
    }

    /// On subscribing to a queued session: its place in line now, so a
    /// widget that (re)connects shows it before the queue next moves.
    async fn queue_snapshot(&mut self, session: Uuid) -> Result<(), Fail> {
        let tenant = self.credential.tenant();
        let place = crate::teams::claim::position(&self.state.db, &tenant, session).await?;
        if let Some((team, position)) = place {
            let name = Channel::Session(session).name();
            let data = serde_json::json!({ "teamId": team, "position": position });
            self.send_text(protocol::event("queue", &name, None, &data))
                .await?;
        }
        Ok(())
    }

    /// Up to `REPLAY_BATCH` messages of `channel` after `since`.
    fn replay_batch(
        &self,
        channel: Channel,
        since: Uuid,
    ) -> impl Future<Output = Result<Vec<crate::chat::Message>, StoreError>> + Send + 'static {
        let db = self.state.db.clone();
        let tenant = self.credential.tenant();
        let signer = self.state.link_signer();
        async move {
            let scope = match channel {
                Channel::Session(id) => store::ReplayScope::Session(id),
                Channel::Entity(id) => store::ReplayScope::Entity(id),
                Channel::Presence
                | Channel::Tickets(_)
                | Channel::Agent(_)
                | Channel::Ticket(_) => {
                    return Ok(Vec::new());
                }
            };
            store::messages_after(&db, &tenant, scope, since, REPLAY_BATCH, &signer).await
        }
    }

    /// Sends the messages after `since`, batch by batch, and remembers the
    /// last ones sent so that their live copies (maybe already queued) are
    /// dropped.
    async fn replay(
        &mut self,
        channel: Channel,
        topic: Topic,
        mut batch: Vec<crate::chat::Message>,
    ) -> Result<(), Fail> {
        let name = channel.name();
        let mut recent = Vec::new();
        while !batch.is_empty() {
            for message in &batch {
                let frame = self.message_frame(&name, None, message);
                self.send_text(frame).await?;
            }
            recent = batch.iter().map(|m| (topic.channel, m.id)).collect();
            let full = batch.len() as i64 == REPLAY_BATCH;
            batch = match batch.last() {
                Some(last) if full => self.replay_batch(channel, last.id).await?,
                _ => Vec::new(),
            };
        }
        super::note_replayed(&mut self.replayed, recent);
        Ok(())
    }

    /// On subscribing to `presence`: one frame per agent online now.
    async fn presence_snapshot(&mut self) -> Result<(), Fail> {
        let visitor = self.credential.is_visitor();
        let online = self
            .state
            .realtime
            .presence
            .online(&self.credential.tenant())
            .await?;
        for agent in online.iter().filter(|a| !visitor || a.is_public()) {
            let frame = if visitor {
                crate::realtime::visitor_presence_frame(agent, true)
            } else {
                crate::realtime::presence_frame(agent, true)
            };
            self.send_text(frame).await?;
        }
        Ok(())
    }

    pub(super) async fn unsubscribe(
        &mut self,
        channel: Option<&str>,
        id: Option<&Value>,
    ) -> Result<(), Fail> {
        let (channel, name) = Self::parse_channel(channel)?;
        let topic = self.topic(channel);
        self.drop_subscription(&topic);
        Ok(self
            .send_text(protocol::reply("unsubscribed", Some(name), id))
            .await?)
    }

    /// Ends the socket's subscription to `topic`, and this node's share in
    /// the company's bus channel with its last one.
    fn drop_subscription(&mut self, topic: &Topic) {
        self.conn.unsubscribe(topic);
        if self.conn.subscriptions() == 0 {
            self.bus_interest = None;
        }
    }

    /// The session a `message` or `typing` frame is about, and who sends:
    /// a visitor in their own session, or an agent with `chat:write`.
    pub(super) async fn writable_session(
        &mut self,
        session_id: Option<&str>,
    ) -> Result<(Uuid, Uuid), Fail> {
        let raw = session_id.map(str::trim);
        match &self.credential {
            // A revoked token or a rotated secret closes the socket (a
            // notice, then the re-check), as a revoked key does: no frame
            // reads the session's token state again.
            Credential::Visitor {
                session_id,
                entity_id,
                ..
            } => match raw {
                None | Some("") => Ok((*session_id, *entity_id)),
                Some(raw) if Uuid::parse_str(raw).ok() == Some(*session_id) => {
                    Ok((*session_id, *entity_id))
                }
                Some(_) => Err(ApiError::not_found().into()),
            },
            Credential::Agent { .. } => {
                // Live: the key may have lost `chat:write` since the handshake.
                if !self.conn.may_write() {
                    return Err(ApiError::forbidden_scope(Scope::ChatWrite.as_str()).into());
                }
                let (id,) = (required_id("sessionId", raw),).all_valid()?;
                let entity = self.entity_of(id).await?;
                Ok((id, entity))
            }
        }
    }

    /// The allowance is spent first, then the fields are read, then the
    /// session's write right checked: a frame refused for a field or a
    /// right still costs its allowance, and a malformed frame from an agent
    /// socket without `chat:write` reports the bad field.
    pub(super) async fn message(
        &mut self,
        frame: &MessageFrame,
        id: Option<&Value>,
    ) -> Result<(), Fail> {
        if let Some(retry_after) = self.spend_message_allowance().await {
            crate::metrics::rate_limited(if self.credential.is_visitor() {
                crate::metrics::Limiter::VisitorMessages
            } else {
                crate::metrics::Limiter::ApiKey
            });
            return Ok(self
                .send_text(protocol::rate_limited(id, retry_after))
                .await?);
        }
        // An agent's socket (their session, or their personal key) sends
        // as the agent: no senderId needed.
        let actor = self.credential.actor();
        let own = match (actor.kind, actor.id) {
            (crate::actor::ActorType::Agent, Some(id)) => Some(id.to_string()),
            _ => None,
        };
        let mut outgoing = OutgoingMessage::parse(MessageInput {
            body: frame.body.as_deref(),
            sender_type: SenderTypeInput::Fixed(self.sender_type()),
            sender_id: frame.sender_id.as_deref().or(own.as_deref()),
            client_message_id: frame.client_message_id.as_deref(),
            attachment_ids: frame.attachment_ids.as_ref(),
        })?;
        // A visitor names only what its own token uploaded.
        outgoing.visitor_uploads_only = matches!(self.credential, Credential::Visitor { .. });
        let (session_id, _) = self.writable_session(frame.session_id.as_deref()).await?;
        let tenant = self.credential.tenant();
        // A repeated clientMessageId is acknowledged with the first message.
        let sent = service::send_message(
            &crate::chat::ChatDeps::from_ref(&self.state),
            self.credential.actor(),
            &tenant,
            session_id,
            outgoing,
        )
        .await?;
        let channel = Channel::Session(session_id).name();
        let reply = self.message_frame(&channel, id, &sent.message);
        Ok(self.send_text(reply).await?)
    }

    /// A `chat.message` frame as this socket may read it: a visitor's
    /// without user ids.
    fn message_frame(
        &self,
        channel: &str,
        id: Option<&Value>,
        message: &crate::chat::Message,
    ) -> String {
        if self.credential.is_visitor() {
            protocol::event("chat.message", channel, id, &message.visitor_view())
        } else {
            protocol::event("chat.message", channel, id, message)
        }
    }

    /// Spends one `message` frame of this socket's allowance: an agent's
    /// from its key's rate limit (the bucket REST requests spend), a
    /// visitor's from its session's message rate. The seconds to wait when
    /// it is spent. (A future apart from `&self`: the socket is not `Sync`.)
    fn spend_message_allowance(&self) -> impl Future<Output = Option<u64>> + Send + 'static {
        let state = self.state.clone();
        let credential = self.credential.clone();
        async move {
            let access = &state.access;
            let decision = match credential {
                Credential::Agent {
                    key_id, rate_limit, ..
                } => access.check_key_rate(key_id, rate_limit).await,
                Credential::Visitor { session_id, .. } => {
                    let rate = state.config.visitor_message_rate;
                    let bucket = format!("visitor:{session_id}");
                    // Never an error: without Redis the node's own limiter decides.
                    access
                        .limiter
                        .check(&bucket, rate.limit, rate.window)
                        .await
                        .ok()?
                }
            };
            (!decision.allowed).then_some(decision.retry_after_secs)
        }
    }
}
