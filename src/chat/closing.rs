//! What a session's change owes once it has committed: the `chat.session`
//! push every change makes to its watchers; for a close also its queues
//! and its visitor's rating request, whether it came through the API or
//! from an automation's `close_chat`; and an automation's other change of
//! a session (its tags), announced to the watchers.

use super::Session;
use super::deps::ChatDeps;
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::realtime::SessionChange;
use crate::realtime::protocol::{self, Channel, Topic};
use crate::teams::routing;

/// What a session's close owes once it has committed, whoever made it:
/// `chat.session` to its watchers, the queues it frees, and the rating
/// request of its entity's CSAT setting.
pub(super) async fn announce_close(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    session: &Session,
) {
    publish_session(state, actor, tenant, session, true).await;
    status_changed(state, tenant, session).await;
    crate::csat::notify::chat_closed(&state.db, &state.realtime, tenant, session).await;
}

/// A session closed, by `actor`, in a change that started elsewhere (an
/// automation's `close_chat`) and has committed, as that change wrote it:
/// the after-commit work of a close through the API.
pub async fn closed_elsewhere(state: &ChatDeps, actor: &Actor, tenant: &Tenant, session: &Session) {
    announce_close(state, actor, tenant, session).await;
}

/// A session's status changed: a close frees its agent in every team of
/// theirs, and a queued chat closing (or reopening) moves the positions
/// of its queue.
pub(super) async fn status_changed(state: &ChatDeps, tenant: &Tenant, session: &Session) {
    routing::drain_all(&state.routing, tenant, session.team_id).await;
    if let Some(agent) = session.assignee_id {
        routing::member_freed(&state.routing, tenant, agent).await;
    }
}

/// A session's tags changed, by `actor`, in a change that started
/// elsewhere (a `chat.started` trigger) and has committed, as that change
/// wrote it: `chat.session` to its watchers, as a tag edit through the API
/// pushes.
pub async fn changed_elsewhere(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    session: &Session,
) {
    publish_session(state, actor, tenant, session, true).await;
}

/// Pushes `chat.session` to the entity's watchers (and the session's own
/// subscribers unless it was just created: nobody can be subscribed yet).
/// A session's own channel shows no tags or custom fields (its visitor
/// hears it), and its visitor no assignee id either; the entity channel
/// (agents only) carries the whole session.
pub(super) async fn publish_session(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    session: &Session,
    to_session: bool,
) {
    if to_session {
        let change = SessionChange {
            kind: "chat.session",
            message_id: None,
            actor: Some(actor),
        };
        state
            .realtime
            .publish_change_to_session(
                *tenant,
                session.id,
                change,
                &session.session_channel_view(),
                &session.visitor_view(),
            )
            .await;
    }
    let channel = Channel::Entity(session.entity_id);
    let frame = protocol::change("chat.session", &channel.name(), None, session, Some(actor));
    state
        .realtime
        .publish(Topic::new(*tenant, channel.into()), None, frame)
        .await;
}
