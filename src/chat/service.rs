//! What REST handlers and sockets share: each function changes the store,
//! then (after the commit) pushes the change to subscribed sockets.

use crate::actor::Actor;
use crate::custom_fields::model::FieldPatch;
use uuid::Uuid;

use super::closing;
use super::deps::ChatDeps;
use super::model::{
    Message, NewMessage, NewSession, OutgoingMessage, Sender, Session, SessionStatus, SessionTags,
};
use super::store::{self, Sent};
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, StoreError};
use crate::realtime::SessionChange;
use crate::realtime::presence::{AgentPresence, Visibility};
use crate::realtime::protocol::{self, Channel, HubChannel, Topic};
use crate::realtime::token::SecretFingerprint;
use crate::sequences::contacts::Matcher;
use crate::teams::claim;
use crate::teams::routing;
use crate::users::Role;
use crate::users::store::{self as users, NewUser};
use crate::validate::{Fields, problem};
use crate::widget::access::{self, IssuedToken};

/// Creates a session and its visitor token (vouched for by the identity
/// secret `secret`, None for an anonymous visitor); tells the entity's
/// watchers. The session joins its entity's default team, if any. Made
/// by `actor`.
pub async fn create_session(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    new: NewSession,
    secret: Option<SecretFingerprint>,
) -> ApiResult<(Session, IssuedToken)> {
    create_session_in(state, actor, tenant, new, None, secret).await
}

/// `create_session`, the session joining `team` (else the entity's default
/// team); a routed team assigns it (or queues it) before this answers.
pub async fn create_session_in(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    new: NewSession,
    team: Option<Uuid>,
    secret: Option<SecretFingerprint>,
) -> ApiResult<(Session, IssuedToken)> {
    let db = state.db.acting(actor.clone());
    // The new session is its creator's to see in the answer, whichever team
    // (or none) it joined; later reads follow the caller's team limit.
    let tenant = &tenant.whole();
    let now = state.clock.now();
    let contacts = Matcher { tenant, now };
    let mut session = store::create_session(&db, tenant, &new, team, now, &contacts).await?;
    // A new session's nonce is the column's default, 0.
    let token = access::issue(&state.tokens, tenant, session.id, 0, secret).await?;
    closing::publish_session(state, actor, tenant, &session, false).await;
    if let Some(team) = session.team_id {
        // The session has committed: a failed drain is logged, and the
        // periodic drain assigns the chat instead.
        if let Err(err) =
            routing::drain_for_new_chat(&state.routing, tenant, team, session.id).await
        {
            tracing::warn!(error = %err, %team, "team queue drain failed");
        }
        // Read again even if this drain assigned nothing: another node's
        // (or the periodic) drain may have taken the chat first.
        session = store::find_session(&state.db, tenant, session.id).await?;
    }
    Ok((session, token))
}

/// A person's change of a session's team and / or assignee (`None` keeps,
/// `Some(None)` clears): `chat.assigned` with reason `manual`, the
/// `assignment` frame, and the queues it touched drained. Made by `actor`
/// (the drains that follow are the system's). With `expected` (`If-Match`)
/// on another version than the session's, nothing changes (412).
pub async fn assign_session(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    id: Uuid,
    team: Option<Option<Uuid>>,
    assignee: Option<Option<Uuid>>,
    expected: Option<i64>,
) -> ApiResult<()> {
    let before = store::find_session(&state.db, tenant, id).await?;
    let now = state.clock.now();
    if let Some(assigned) = claim::assign_manually(
        &state.db.acting(actor.clone()),
        tenant,
        id,
        team,
        assignee,
        expected,
        now,
    )
    .await?
    {
        routing::publish_assignment(&state.routing, actor, tenant, &assigned).await;
        let teams = [before.team_id, assigned.session.team_id];
        routing::drain_all(&state.routing, tenant, teams.into_iter().flatten()).await;
    }
    Ok(())
}

/// Confirms a visitor's email from its link (once); tells the watchers.
/// None when the link is unknown or was used.
pub async fn confirm_visitor_email(state: &ChatDeps, hash: &str) -> ApiResult<Option<Session>> {
    let Some((tenant, session)) =
        store::confirm_visitor_email(&state.db, hash, state.clock.now()).await?
    else {
        return Ok(None);
    };
    // The visitor who followed their link confirmed it.
    let visitor = Actor::visitor(session.id, &session.visitor_name);
    closing::publish_session(state, &visitor, &tenant, &session, true).await;
    Ok(Some(session))
}

/// Changes a session's status, tags and / or custom field values in one
/// transaction; pushes
/// `chat.session` if it changed. Made by `actor`. With `expected`
/// (`If-Match`) on another version than the session's, nothing changes
/// (412).
#[allow(clippy::too_many_arguments)] // the change's parts, and the version it is based on
pub async fn update_session(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    id: Uuid,
    expected: Option<i64>,
    status: Option<SessionStatus>,
    tags: SessionTags,
    custom_fields: FieldPatch,
) -> ApiResult<Session> {
    let (session, changed) = store::update_session(
        &state.db.acting(actor.clone()),
        tenant,
        id,
        expected,
        status,
        &tags,
        &custom_fields,
        state.clock.now(),
    )
    .await?;
    match (changed, status) {
        (true, Some(SessionStatus::Closed)) => {
            closing::announce_close(state, actor, tenant, &session).await
        }
        (true, Some(_)) => {
            closing::publish_session(state, actor, tenant, &session, true).await;
            closing::status_changed(state, tenant, &session).await;
        }
        (true, None) => closing::publish_session(state, actor, tenant, &session, true).await,
        (false, _) => {}
    }
    Ok(session)
}

/// What `send_message` answers: the message, and whether this send stored
/// it (false: a repeat of its `clientMessageId`, nothing stored or pushed).
pub struct SendOutcome {
    pub message: Message,
    pub created: bool,
}

/// Sends a message: committed, then pushed to `session:<id>` and
/// `entity:<entityId>`; an agent's message is emailed to the visitor. A
/// repeat of a `clientMessageId` answers with the first message only. Made
/// by `actor`.
pub async fn send_message(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    session_id: Uuid,
    outgoing: OutgoingMessage,
) -> ApiResult<SendOutcome> {
    super::reply::speaks_for_itself(actor, outgoing.sender)?;
    let link = match outgoing.sender {
        Sender::Agent(_) => {
            let link = access::link_token(&state.tokens, tenant, session_id).await?;
            Some(visitor_link(state, session_id, &link))
        }
        Sender::Visitor(_) | Sender::System(_) => None,
    };
    let new = NewMessage {
        body: outgoing.body,
        sender_type: outgoing.sender.sender_type(),
        sender_id: outgoing.sender.id(),
        client_message_id: outgoing.client_message_id,
        attachment_ids: outgoing.attachment_ids,
        visitor_uploads_only: outgoing.visitor_uploads_only,
        expected_version: outgoing.expected_version,
    };
    let signer = state.link_signer();
    let db = state.db.acting(actor.clone());
    let sent = crate::sequences::chat_message::create_message(
        &db,
        tenant,
        session_id,
        new,
        link.as_deref(),
        state.clock.now(),
        &signer,
    );
    let (session, message) = match sent.await? {
        Sent::New { session, message } => (session, message),
        Sent::Repeat(message) => {
            return Ok(SendOutcome {
                message,
                created: false,
            });
        }
    };
    if let Sender::Agent(agent) = outgoing.sender {
        super::reply::assign_on_reply(state, actor, tenant, &session, agent).await;
    }
    let change = SessionChange {
        kind: "chat.message",
        message_id: Some(message.id),
        actor: Some(actor),
    };
    state
        .realtime
        .publish_change_to_session(
            *tenant,
            session.id,
            change,
            &message,
            &message.visitor_view(),
        )
        .await;
    let channel = Channel::Entity(session.entity_id);
    let frame = protocol::change("chat.message", &channel.name(), None, &message, Some(actor));
    state
        .realtime
        .publish(Topic::new(*tenant, channel.into()), Some(message.id), frame)
        .await;
    Ok(SendOutcome {
        message,
        created: true,
    })
}

/// The page that continues a chat, served by the service itself (the
/// widget's own chat page, so the link works on every deployment):
/// `{public_url}/widget/frame.html#session=…&link=…`. The page trades the
/// link token for a visitor token (`/widget/v1/tokens/exchange`).
pub fn visitor_link(state: &ChatDeps, session_id: Uuid, link: &str) -> String {
    format!(
        "{}/widget/frame.html#session={session_id}&link={link}",
        state.public_url
    )
}

/// A heartbeat, validated by the caller; `None` fields come from the user.
pub struct Heartbeat {
    pub user_id: Uuid,
    pub name: Option<String>,
    pub email: Option<String>,
    pub role: Option<Role>,
    pub visibility: Visibility,
}

/// Sets the agent online for the TTL, registering an unknown user first
/// (which emits `user.created`, made by `actor`). Transitions are pushed
/// on `presence`.
pub async fn heartbeat(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    beat: Heartbeat,
) -> ApiResult<AgentPresence> {
    let user = match users::find(&state.db, tenant.company_id, beat.user_id).await {
        Ok(user) => user,
        Err(StoreError::NotFound) => register_agent(state, actor, tenant, &beat).await?,
        Err(other) => return Err(other.into()),
    };
    let record = AgentPresence {
        user_id: user.id,
        name: beat.name.unwrap_or(user.name),
        email: beat.email.unwrap_or(user.email),
        role: beat.role.unwrap_or(user.role),
        visibility: beat.visibility,
        last_seen: state.clock.now(),
    };
    let before = state.realtime.presence.heartbeat(tenant, &record).await?;
    state
        .realtime
        .presence_changed(tenant, before.as_ref(), Some(&record))
        .await;
    let was_available = before.is_some_and(|b| b.visibility == Visibility::Public);
    if record.visibility == Visibility::Public && !was_available {
        routing::agent_available(&state.routing, tenant, record.user_id).await;
    }
    Ok(record)
}

async fn register_agent(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    beat: &Heartbeat,
) -> ApiResult<users::User> {
    const NEEDED: &str = "is required to register a new agent";
    let (name, email) = (
        beat.name.clone().ok_or_else(|| problem("name", NEEDED)),
        beat.email.clone().ok_or_else(|| problem("email", NEEDED)),
    )
        .all_valid()?;
    // An id held by another company's user gets the answer of any id that
    // cannot be registered, so the answer does not tell that it exists.
    if !can_register(beat.user_id) || users::id_taken(&state.db, beat.user_id).await? {
        return Err(ApiError::invalid_field("userId", UNREGISTRABLE));
    }
    let new = NewUser {
        id: Some(beat.user_id),
        name,
        email,
        role: beat.role.unwrap_or(Role::Agent).into(),
    };
    let db = state.db.acting(actor.clone());
    match users::create(&db, tenant, new, state.clock.now()).await {
        Ok(user) => Ok(user),
        // A concurrent first heartbeat registered the same agent, or the
        // email belongs to another user of the company.
        Err(StoreError::Conflict(_)) => {
            match users::find(&state.db, tenant.company_id, beat.user_id).await {
                Ok(user) => Ok(user),
                Err(StoreError::NotFound) => {
                    Err(ApiError::conflict("A user with this email already exists"))
                }
                Err(other) => Err(other.into()),
            }
        }
        Err(other) => Err(other.into()),
    }
}

/// Why a heartbeat's unknown `userId` is refused.
const UNREGISTRABLE: &str = "is not a user of this company and cannot be registered";

/// Ids a new agent may be given: any but the nil and the max UUID, which
/// stand for "no one" in clients.
fn can_register(id: Uuid) -> bool {
    !id.is_nil() && !id.is_max()
}

/// Takes an agent offline; true if it was online.
pub async fn remove_presence(state: &ChatDeps, tenant: &Tenant, user_id: Uuid) -> ApiResult<bool> {
    let removed = state.realtime.presence.remove(tenant, user_id).await?;
    state
        .realtime
        .presence_changed(tenant, removed.as_ref(), None)
        .await;
    if removed.is_some() {
        routing::agent_away(&state.routing, tenant, user_id).await;
    }
    Ok(removed.is_some())
}

/// The hub channel a socket joins for `channel`: visitors see presence of
/// PUBLIC agents only, and their session's events without user ids.
pub fn hub_channel(channel: Channel, visitor: bool) -> HubChannel {
    match (channel, visitor) {
        (Channel::Presence, true) => HubChannel::PublicPresence,
        (Channel::Session(id), true) => HubChannel::VisitorSession(id),
        (other, _) => other.into(),
    }
}
