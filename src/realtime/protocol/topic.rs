//! Where an event is delivered: a channel of one tenant, and its name on
//! the bus.

use uuid::Uuid;

use super::Channel;
use crate::auth::{Mode, Tenant};

/// Where an event is delivered: a channel of one tenant. Presence has two
/// audiences: agents see every agent, visitors only PUBLIC ones, so visitor
/// sockets subscribe to `PublicPresence` when they ask for `presence`.
/// A session's channel has two as well: its visitor's socket subscribes to
/// `VisitorSession`, which carries the same events with an agent's name
/// but never a user id.
/// Ticket channels have two as well: keys that read internal notes
/// subscribe to `Tickets { notes: true, .. }`, which also carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Topic {
    pub tenant: Tenant,
    pub channel: HubChannel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HubChannel {
    Session(Uuid),
    VisitorSession(Uuid),
    Entity(Uuid),
    Presence,
    PublicPresence,
    Tickets { entity: Option<Uuid>, notes: bool },
    Agent(Uuid),
    Ticket(Uuid),
}

impl From<Channel> for HubChannel {
    fn from(channel: Channel) -> Self {
        match channel {
            Channel::Session(id) => HubChannel::Session(id),
            Channel::Entity(id) => HubChannel::Entity(id),
            Channel::Presence => HubChannel::Presence,
            Channel::Tickets(entity) => HubChannel::Tickets {
                entity,
                notes: false,
            },
            Channel::Agent(id) => HubChannel::Agent(id),
            Channel::Ticket(id) => HubChannel::Ticket(id),
        }
    }
}

/// The bus spelling of the ticket channels' audience with internal notes.
const TICKETS_WITH_NOTES: &str = "tickets.notes";
/// The bus spelling of a session channel's visitor audience.
const VISITOR_SESSION: &str = "session.visitor:";

/// Bus topics of realtime events start with this.
pub const BUS_PREFIX: &str = "rt:";

impl Topic {
    pub fn new(tenant: Tenant, channel: HubChannel) -> Topic {
        Topic { tenant, channel }
    }

    /// The bus topic: `rt:<company>:<mode>:<channel>[#<messageId>]`; the
    /// message id lets a socket drop a live copy of a message it replayed.
    pub fn bus_topic(&self, message_id: Option<Uuid>) -> String {
        let channel = match self.channel {
            HubChannel::Session(id) => format!("session:{id}"),
            HubChannel::VisitorSession(id) => format!("{VISITOR_SESSION}{id}"),
            HubChannel::Entity(id) => format!("entity:{id}"),
            HubChannel::Presence => "presence".into(),
            HubChannel::PublicPresence => "presence.public".into(),
            HubChannel::Agent(id) => format!("agent:{id}"),
            HubChannel::Ticket(id) => format!("ticket:{id}"),
            HubChannel::Tickets { entity, notes } => {
                let base = if notes { TICKETS_WITH_NOTES } else { "tickets" };
                match entity {
                    Some(id) => format!("{base}:{id}"),
                    None => base.to_string(),
                }
            }
        };
        let mut topic = format!(
            "{BUS_PREFIX}{}:{}:{channel}",
            self.tenant.company_id,
            self.tenant.mode.as_str()
        );
        if let Some(id) = message_id {
            topic.push('#');
            topic.push_str(&id.to_string());
        }
        topic
    }

    /// The inverse of `bus_topic`; `None` for other bus traffic.
    pub fn parse_bus_topic(topic: &str) -> Option<(Topic, Option<Uuid>)> {
        let rest = topic.strip_prefix(BUS_PREFIX)?;
        let (rest, message_id) = match rest.split_once('#') {
            Some((rest, id)) => (rest, Some(Uuid::parse_str(id).ok()?)),
            None => (rest, None),
        };
        let (company, rest) = rest.split_once(':')?;
        let (mode, channel) = rest.split_once(':')?;
        let tenant = Tenant::new(Uuid::parse_str(company).ok()?, Mode::parse(mode)?);
        if let Some(id) = channel.strip_prefix(VISITOR_SESSION) {
            let channel = HubChannel::VisitorSession(Uuid::parse_str(id).ok()?);
            return Some((Topic { tenant, channel }, message_id));
        }
        let channel = match channel {
            "presence.public" => HubChannel::PublicPresence,
            TICKETS_WITH_NOTES => HubChannel::Tickets {
                entity: None,
                notes: true,
            },
            other => match other.strip_prefix(TICKETS_WITH_NOTES) {
                Some(rest) => HubChannel::Tickets {
                    entity: Some(Uuid::parse_str(rest.strip_prefix(':')?).ok()?),
                    notes: true,
                },
                None => Channel::parse(other)?.into(),
            },
        };
        Some((Topic { tenant, channel }, message_id))
    }
}
