//! Assigning a chat to the agent who answers it, when the company asks for
//! it (`assignOnReply` in `/settings`): after an agent's message to a chat
//! with no assignee; and who an agent's reply may name as its sender.

use uuid::Uuid;

use super::Session;
use super::deps::ChatDeps;
use super::model::Sender;
use crate::actor::{Actor, ActorType};
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::teams::claim;
use crate::teams::routing;

/// After `agent`'s message to `session` (as the message left it): if the
/// message's maker is that agent signed in (a key naming an agent is not
/// the agent replying), the chat has no assignee and the company assigns
/// on reply, the chat becomes theirs, announced as a person's assignment.
/// The message has committed: a failure here is logged, not answered.
pub async fn assign_on_reply(
    state: &ChatDeps,
    actor: &Actor,
    tenant: &Tenant,
    session: &Session,
    agent: Uuid,
) {
    let by_the_agent = actor.kind == ActorType::Agent && actor.id == Some(agent);
    if !by_the_agent || session.assignee_id.is_some() {
        return;
    }
    let assigned = async {
        if !crate::settings::store::assigns_on_reply(&state.db, tenant.company_id).await? {
            return Ok(None);
        }
        let db = state.db.acting(actor.clone());
        claim::assign_on_reply(&db, tenant, session.id, agent, state.clock.now()).await
    };
    match assigned.await {
        Ok(Some(assigned)) => {
            routing::publish_assignment(&state.routing, actor, tenant, &assigned).await;
        }
        Ok(None) => {}
        Err(err) => {
            tracing::warn!(error = %err, session = %session.id, "assign on reply failed");
        }
    }
}

/// An agent (signed in, or by their personal key) sends as themselves: an
/// agent message naming another agent is refused, on REST and sockets
/// alike, so no agent puts words in a colleague's name. A company key may
/// name any agent of the company (it is not tied to one).
pub(super) fn speaks_for_itself(actor: &Actor, sender: Sender) -> ApiResult<()> {
    match (actor.kind, actor.id, sender) {
        (ActorType::Agent, Some(agent), Sender::Agent(named)) if named != agent => {
            Err(ApiError::invalid_field(
                "senderId",
                "an agent sends as themselves: leave senderId out or give your own id",
            ))
        }
        _ => Ok(()),
    }
}
