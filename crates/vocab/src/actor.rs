//! Who made a change: the actor every timeline entry, event (and so every
//! webhook body, change-feed entry and socket frame of a change) carries as
//! `actor: {"type", "id", "name"}`.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

crate::text_enum! {
    /// The kinds of actor.
    pub enum ActorType {
        /// A signed-in agent (a user).
        Agent = "agent",
        /// An API key, when no agent is behind it.
        Key = "key",
        /// A customer through the widget.
        Visitor = "visitor",
        /// The service itself: workers and passes (SLA, retention,
        /// escalation rules, routing, auto-close).
        System = "system",
        /// An automation rule.
        Automation = "automation",
        /// The AI answer agent.
        Ai = "ai",
    }
}

/// The name the service acts under.
pub const SYSTEM_NAME: &str = "system";

/// The name of a visitor who gave none.
pub const VISITOR_FALLBACK_NAME: &str = "Visitor";

/// One actor, as the API shows it: `{"type": "key", "id": "…", "name": "…"}`;
/// `id` is null for `system`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Actor {
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "key")]
    pub kind: ActorType,
    pub id: Option<Uuid>,
    pub name: String,
}

impl Actor {
    /// An API key: its id and name.
    pub fn key(id: Uuid, name: impl Into<String>) -> Actor {
        Actor {
            kind: ActorType::Key,
            id: Some(id),
            name: name.into(),
        }
    }

    /// An agent: the user's id and name.
    pub fn agent(id: Uuid, name: impl Into<String>) -> Actor {
        Actor {
            kind: ActorType::Agent,
            id: Some(id),
            name: name.into(),
        }
    }

    /// A visitor: `id` names them (their chat session: a visitor exists
    /// to the desk as the session they talk in), `name` as they gave it,
    /// or a fallback when they gave none.
    pub fn visitor(id: Uuid, name: &str) -> Actor {
        let name = name.trim();
        Actor {
            kind: ActorType::Visitor,
            id: Some(id),
            name: if name.is_empty() {
                VISITOR_FALLBACK_NAME.to_string()
            } else {
                name.to_string()
            },
        }
    }

    /// The service itself (a worker or a pass): no id.
    pub fn system() -> Actor {
        Actor {
            kind: ActorType::System,
            id: None,
            name: SYSTEM_NAME.to_string(),
        }
    }
}

/// Where a request came from, for the audit log's entries: its request
/// id, the client's address and its user agent. It travels with the store
/// handle beside the actor (`Db::with_request`); a handle no request named
/// (a worker, a pass, the CLI) has none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestContext {
    pub request_id: Option<String>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_key_serialises_as_its_type_id_and_name() {
        let id = Uuid::now_v7();
        assert_eq!(
            serde_json::to_value(Actor::key(id, "Zapier")).expect("json"),
            json!({"type": "key", "id": id, "name": "Zapier"})
        );
    }

    #[test]
    fn an_agent_serialises_as_the_user() {
        let id = Uuid::now_v7();
        assert_eq!(
            serde_json::to_value(Actor::agent(id, "Alice")).expect("json"),
            json!({"type": "agent", "id": id, "name": "Alice"})
        );
    }

    #[test]
    fn the_system_has_a_null_id() {
        assert_eq!(
            serde_json::to_value(Actor::system()).expect("json"),
            json!({"type": "system", "id": null, "name": "system"})
        );
    }

    #[test]
    fn a_visitor_without_a_name_gets_the_fallback() {
        let id = Uuid::now_v7();
        assert_eq!(
            serde_json::to_value(Actor::visitor(id, "  ")).expect("json"),
            json!({"type": "visitor", "id": id, "name": "Visitor"})
        );
        assert_eq!(Actor::visitor(id, "Ada").name, "Ada");
    }

    #[test]
    fn an_actor_reads_back_from_its_json() {
        for actor in [
            Actor::key(Uuid::now_v7(), "k"),
            Actor::system(),
            Actor::visitor(Uuid::now_v7(), "Ada"),
        ] {
            let text = serde_json::to_string(&actor).expect("json");
            assert_eq!(serde_json::from_str::<Actor>(&text).expect("read"), actor);
        }
    }

    #[test]
    fn an_unknown_type_is_refused() {
        let read = serde_json::from_str::<Actor>(r#"{"type":"robot","id":null,"name":"x"}"#);
        assert!(read.is_err());
    }
}
