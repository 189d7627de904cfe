//! Live assignment: drains a team's queue to its available members and
//! tells the sockets. A drain runs when something may let a member take a
//! chat (a chat joins a team, an assigned chat closes, a member comes
//! online, a team's routing or members change), and every second on every
//! node as a safety net (a trigger lost to a crash between commit and
//! drain). The claim itself is the store's (`claim`), atomic across nodes.
//!
//! Who is available: a member with presence whose visibility is PUBLIC.
//! PRIVATE is how an agent works without being seen by visitors; routing
//! reads it as "busy": they keep their chats but get no new ones, and their
//! unanswered routed chats are not requeued while they stay online.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRef;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use uuid::Uuid;

use super::claim::{self, Assigned, Claim};
use super::store;
use crate::actor::Actor;
use crate::attachments::Attachments;
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::StoreError;
use crate::realtime::Realtime;
use crate::realtime::SessionChange;
use crate::realtime::protocol::{self, Channel, Topic};
use crate::state::AppState;
use crate::tickets::model::{Ticket, TicketStatus};
use crate::time::Clock;

/// The handles routing uses: the store, presence and the sockets, the
/// attachment links of an assigned ticket's event, the clock, and how long
/// an away agent keeps their unanswered chats.
#[derive(Clone)]
pub struct Routing {
    pub db: Db,
    pub realtime: Arc<Realtime>,
    pub attachments: Arc<Attachments>,
    pub clock: Clock,
    pub reassign_after: Duration,
}

impl FromRef<AppState> for Routing {
    fn from_ref(state: &AppState) -> Self {
        Routing::from(state)
    }
}

impl From<&AppState> for Routing {
    fn from(state: &AppState) -> Self {
        Routing {
            db: state.db.clone(),
            realtime: state.realtime.clone(),
            attachments: state.attachments.clone(),
            clock: state.clock.clone(),
            reassign_after: state.config.reassign_after,
        }
    }
}

/// The agents online and taking new work (PUBLIC).
async fn available(routing: &Routing, tenant: &Tenant) -> Result<Vec<Uuid>, StoreError> {
    routing.realtime.presence.available(tenant).await
}

/// Assigns `team`'s queued chats while a member can take one, then pushes
/// the assignments and the queue. Answers whether anything was assigned.
pub async fn drain(routing: &Routing, tenant: &Tenant, team: Uuid) -> Result<bool, StoreError> {
    let assigned = assign_queued(routing, tenant, team).await?;
    publish_queue(routing, tenant, team).await?;
    Ok(!assigned.is_empty())
}

/// `drain` after `chat` joined `team`'s queue. When this drain assigned
/// that chat alone and left the queue empty, the queue was empty before
/// the chat came and is again: its length did not change and nobody waits,
/// so no `queue` frame is pushed (on a busy team, one per new chat to
/// every console on the team's channels).
pub async fn drain_for_new_chat(
    routing: &Routing,
    tenant: &Tenant,
    team: Uuid,
    chat: Uuid,
) -> Result<(), StoreError> {
    let assigned = assign_queued(routing, tenant, team).await?;
    let queue = claim::queue(&routing.db, team).await?;
    if assigned == [chat] && queue.is_empty() {
        return Ok(());
    }
    push_queue(routing, tenant, team, &queue).await
}

/// The claims of a drain, pushing each assignment; the queue is the
/// caller's to push. Answers the sessions assigned, in order.
async fn assign_queued(
    routing: &Routing,
    tenant: &Tenant,
    team: Uuid,
) -> Result<Vec<Uuid>, StoreError> {
    let online = available(routing, tenant).await?;
    let mut assigned = Vec::new();
    loop {
        match claim::claim_next(&routing.db, tenant, team, &online, routing.clock.now()).await? {
            Claim::Assigned(done) => {
                publish_assignment(routing, &Actor::system(), tenant, &done).await;
                assigned.push(done.session.id);
            }
            Claim::Raced => continue,
            Claim::Nothing => break,
        }
    }
    Ok(assigned)
}

/// Routes a ticket that entered a team unassigned (created in it or moved
/// into it): answers it assigned when the team's routing took it, as it
/// was otherwise. A failure is logged, not answered: the ticket's own
/// change has committed, and it stays unassigned in its team for a person.
pub async fn route_ticket(routing: &Routing, tenant: &Tenant, ticket: Ticket) -> Ticket {
    let Some(team) = ticket.team_id else {
        return ticket;
    };
    let open = matches!(ticket.status, TicketStatus::Open | TicketStatus::InProgress);
    if ticket.assigned_to_id.is_some() || !open {
        return ticket;
    }
    let routed = async {
        let online = available(routing, tenant).await?;
        let signer = routing.attachments.signer(routing.clock.now());
        claim::claim_ticket(
            &routing.db,
            tenant,
            team,
            ticket.id,
            &online,
            &signer,
            routing.clock.now(),
        )
        .await
    };
    match routed.await {
        Ok(Some(assigned)) => assigned,
        Ok(None) => ticket,
        Err(err) => {
            tracing::warn!(error = %err, ticket = %ticket.id, "ticket routing failed");
            ticket
        }
    }
}

/// `drain` for each of `teams`, logging failures: the caller's own change
/// has committed, and the periodic drain retries.
pub async fn drain_all(routing: &Routing, tenant: &Tenant, teams: impl IntoIterator<Item = Uuid>) {
    let teams: BTreeSet<Uuid> = teams.into_iter().collect();
    for team in teams {
        if let Err(err) = drain(routing, tenant, team).await {
            tracing::warn!(error = %err, %team, "team queue drain failed; the next tick retries");
        }
    }
}

/// Drains every team `user` is a member of (the agent came online or
/// closed a chat).
pub async fn member_freed(routing: &Routing, tenant: &Tenant, user: Uuid) {
    match store::teams_of_member(&routing.db, tenant, user).await {
        Ok(teams) => drain_all(routing, tenant, teams).await,
        Err(err) => tracing::warn!(error = %err, "teams of a member could not be read"),
    }
}

/// Pushes an assignment: `assignment` to the session (its visitor learns an
/// agent took the chat), to its entity channel and to the entity channels
/// of its team (the team's channels: a team console watches its entities,
/// and the chat's may be none of them), and to the agent channels of the
/// new and the previous assignee (each console hears its own work without
/// the entities' whole traffic: on a busy team that is every assignment
/// to every console).
/// `actor` made the assignment: a person's through the API, else the
/// routing's (`system`).
pub async fn publish_assignment(
    routing: &Routing,
    actor: &Actor,
    tenant: &Tenant,
    assigned: &Assigned,
) {
    let session = &assigned.session;
    let data = json!({
        "sessionId": session.id,
        "assigneeId": assigned.assignment.assignee_id,
        "assignment": assigned.assignment,
    });
    let data = &data;
    let publish = move |channel: Channel| {
        let frame = protocol::change("assignment", &channel.name(), None, data, Some(actor));
        routing
            .realtime
            .publish(Topic::new(*tenant, channel.into()), None, frame)
    };
    // The session's and the agents' own channels first: the team's
    // entities are one more read.
    let visitor = visitor_assignment(routing, tenant, assigned).await;
    let change = SessionChange {
        kind: "assignment",
        message_id: None,
        actor: Some(actor),
    };
    routing
        .realtime
        .publish_change_to_session(*tenant, session.id, change, data, &visitor)
        .await;
    let agents = [
        assigned.assignment.assignee_id,
        assigned.previous_assignee_id,
    ];
    for channel in agents.into_iter().flatten().map(Channel::Agent) {
        publish(channel).await;
    }
    let mut entities = BTreeSet::from([session.entity_id]);
    if let Some(team) = assigned.assignment.team_id {
        match store::entities_of(&routing.db, team).await {
            Ok(team_entities) => entities.extend(team_entities),
            Err(err) => tracing::warn!(error = %err, %team, "assignment not sent to its team"),
        }
    }
    for entity in entities {
        publish(Channel::Entity(entity)).await;
    }
}

/// The `assignment` a session's visitor gets: whether an agent has the
/// chat and, if so, the agent's name; never a user id.
async fn visitor_assignment(
    routing: &Routing,
    tenant: &Tenant,
    assigned: &Assigned,
) -> serde_json::Value {
    let name = match assigned.assignment.assignee_id {
        Some(agent) => match crate::users::store::find(&routing.db, tenant.company_id, agent).await
        {
            Ok(user) => Some(user.name),
            Err(err) => {
                tracing::warn!(error = %err, %agent, "assignee's name unread for the visitor");
                None
            }
        },
        None => None,
    };
    json!({
        "sessionId": assigned.session.id,
        "assigned": assigned.assignment.assignee_id.is_some(),
        "assigneeName": name,
    })
}

/// Pushes the queue: `queue` `{teamId, position}` to each waiting session
/// (1 is next) and `queue` `{teamId, length}` to the entity channels of the
/// team's entities and of the waiting sessions.
pub async fn publish_queue(
    routing: &Routing,
    tenant: &Tenant,
    team: Uuid,
) -> Result<(), StoreError> {
    let queue = claim::queue(&routing.db, team).await?;
    push_queue(routing, tenant, team, &queue).await
}

/// `publish_queue` of the queue as read.
async fn push_queue(
    routing: &Routing,
    tenant: &Tenant,
    team: Uuid,
    queue: &[claim::Queued],
) -> Result<(), StoreError> {
    // The team's entities alone, not the whole team: its member list is
    // as long as the team is large, and this runs on every created chat.
    let mut entities: BTreeSet<Uuid> = store::entities_of(&routing.db, team)
        .await?
        .into_iter()
        .collect();
    for (i, queued) in queue.iter().enumerate() {
        entities.insert(queued.entity_id);
        let data = json!({ "teamId": team, "position": i + 1 });
        routing
            .realtime
            .publish_to_session(*tenant, queued.id, "queue", None, &data, &data)
            .await;
    }
    for entity in entities {
        let channel = Channel::Entity(entity);
        let data = json!({ "teamId": team, "length": queue.len() });
        let frame = protocol::event("queue", &channel.name(), None, &data);
        routing
            .realtime
            .publish(Topic::new(*tenant, channel.into()), None, frame)
            .await;
    }
    Ok(())
}

/// One tick: requeues the unanswered routed chats of agents away for
/// longer than the grace period, then drains every waiting queue (public
/// so a test can drive it).
pub async fn tick(routing: &Routing) -> Result<(), StoreError> {
    let before = routing.clock.now().minus(routing.reassign_after);
    for (session, agent, tenant) in claim::unanswered_away_before(&routing.db, before).await? {
        if let Some(requeued) =
            claim::requeue(&routing.db, &tenant, session, agent, routing.clock.now()).await?
        {
            publish_assignment(routing, &Actor::system(), &tenant, &requeued).await;
        }
    }
    // The queue is pushed only when it moved: visitors hear of changes,
    // not of every tick.
    for (team, tenant) in claim::teams_waiting(&routing.db).await? {
        if !assign_queued(routing, &tenant, team).await?.is_empty() {
            publish_queue(routing, &tenant, team).await?;
        }
    }
    Ok(())
}

/// An agent's presence ended (expired or removed): no new work from now
/// (routing reads presence), and the grace period starts.
pub async fn agent_away(routing: &Routing, tenant: &Tenant, user: Uuid) {
    if let Err(err) = claim::mark_away(&routing.db, tenant, user, routing.clock.now()).await {
        tracing::warn!(error = %err, "an agent's absence could not be recorded");
    }
}

/// An agent came online or became PUBLIC: the grace period ends and their
/// teams' queues may move.
pub async fn agent_available(routing: &Routing, tenant: &Tenant, user: Uuid) {
    if let Err(err) = claim::mark_back(&routing.db, tenant, user).await {
        tracing::warn!(error = %err, "an agent's return could not be recorded");
    }
    member_freed(routing, tenant, user).await;
}

/// The node's routing worker: `tick` every `every` (the configured
/// `routing_tick`) until shutdown.
pub fn spawn_worker(
    routing: Routing,
    every: Duration,
    mut shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticker.tick() => {
                    if let Err(err) = tick(&routing).await {
                        tracing::warn!(error = %err, "routing tick failed; retrying");
                    }
                }
                _ = crate::realtime::shutdown::stopping(&mut shutdown) => return,
            }
        }
    })
}
