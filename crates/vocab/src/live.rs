//! Ticket events announced live on sockets: what a transaction stages
//! (`Tx::announce`) for the one publisher that sends it once the
//! transaction commits, and the bus topic that routes it to every node.
//! Everything a node needs to route the event is in its topic, taken when
//! the event is written: publishing reads no row.

use uuid::Uuid;

use crate::event_catalogue::Event;
use crate::tenant::{Mode, Tenant};

/// One event of a committed change, for the ticket channels.
#[derive(Debug, Clone)]
pub struct LiveEvent {
    pub topic: TicketTopic,
    pub event: Event,
}

/// Where a ticket event goes: the channels `tickets` of its tenant,
/// `tickets:<entity>` of the ticket's entity and of each of `team` (the
/// entities of the ticket's team, for SLA events; the ticket's own entity
/// is not repeated there). An internal note goes only to sockets that read
/// notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketTopic {
    pub tenant: Tenant,
    pub entity: Option<Uuid>,
    pub internal: bool,
    pub team: Vec<Uuid>,
}

/// Bus topics of ticket events start with this.
const PREFIX: &str = "tk:";

impl TicketTopic {
    /// The bus topic: `tk:<company>:<mode>:<entity or ->:<internal 0|1>`,
    /// then `:<team entities, comma-separated>` when there are any.
    pub fn encode(&self) -> String {
        let entity = self
            .entity
            .map_or_else(|| "-".to_string(), |id| id.to_string());
        let mut topic = format!(
            "{PREFIX}{}:{}:{entity}:{}",
            self.tenant.company_id,
            self.tenant.mode.as_str(),
            u8::from(self.internal)
        );
        if !self.team.is_empty() {
            let team: Vec<String> = self.team.iter().map(Uuid::to_string).collect();
            topic.push(':');
            topic.push_str(&team.join(","));
        }
        topic
    }

    /// The topic `encode` wrote; None for other bus traffic (or a topic no
    /// `encode` wrote).
    pub fn decode(topic: &str) -> Option<TicketTopic> {
        let rest = topic.strip_prefix(PREFIX)?;
        let mut parts = rest.split(':');
        let company_id = Uuid::parse_str(parts.next()?).ok()?;
        let mode = Mode::parse(parts.next()?)?;
        let entity = match parts.next()? {
            "-" => None,
            id => Some(Uuid::parse_str(id).ok()?),
        };
        let internal = match parts.next()? {
            "0" => false,
            "1" => true,
            _ => return None,
        };
        let team = match parts.next() {
            None => Vec::new(),
            Some(ids) => ids
                .split(',')
                .map(|id| Uuid::parse_str(id).ok())
                .collect::<Option<Vec<Uuid>>>()?,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(TicketTopic {
            tenant: Tenant::new(company_id, mode),
            entity,
            internal,
            team,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(entity: Option<Uuid>, internal: bool, team: Vec<Uuid>) -> TicketTopic {
        TicketTopic {
            tenant: Tenant::new(Uuid::now_v7(), Mode::Live),
            entity,
            internal,
            team,
        }
    }

    #[test]
    fn a_topic_decodes_to_what_was_encoded() {
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        for topic in [
            topic(None, false, Vec::new()),
            topic(Some(a), true, Vec::new()),
            topic(Some(a), false, vec![b, Uuid::now_v7()]),
        ] {
            assert_eq!(TicketTopic::decode(&topic.encode()), Some(topic));
        }
    }

    #[test]
    fn the_wire_format_is_the_one_every_node_reads() {
        let entity = Uuid::now_v7();
        let team = Uuid::now_v7();
        let topic = topic(Some(entity), true, vec![team]);
        let company = topic.tenant.company_id;
        assert_eq!(
            topic.encode(),
            format!("tk:{company}:live:{entity}:1:{team}")
        );
    }

    #[test]
    fn other_bus_traffic_is_not_a_ticket_topic() {
        let company = Uuid::now_v7();
        for other in [
            format!("rt:{company}:live:tickets"),
            format!("tk:{company}:live"),
            format!("tk:{company}:live:-:2"),
            format!("tk:{company}:live:-:0:not-a-uuid"),
        ] {
            assert_eq!(TicketTopic::decode(&other), None, "{other}");
        }
    }
}
