//! What a team is: a name, its members, the entities it serves and how new
//! work is routed to its members.

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::error::FieldError;
use crate::time::Timestamp;
use crate::validate::problem;

crate::text_enum! {
    /// How new chats (and, with `includeTickets`, tickets) of the team find
    /// an agent.
    pub enum RoutingMode {
        /// Nobody is picked: agents assign by hand.
        Manual = "manual",
        /// The next member after the last one picked, in a fixed order.
        RoundRobin = "round_robin",
        /// The member with the fewest active chats (longest idle on a tie).
        LeastBusy = "least_busy",
    }
}

/// Most chats a team may let one agent hold at once.
pub const CHAT_CAPACITY_MAX: i64 = 1000;
/// Most open tickets a team may let one agent hold at once.
pub const TICKET_CAPACITY_MAX: i64 = 100_000;
/// Most members or entities one team lists.
pub const TEAM_LIST_MAX: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Routing {
    #[schema(schema_with = routing_mode)]
    pub mode: RoutingMode,
    /// Active chat sessions an agent may hold before routing skips them.
    pub chat_capacity: i64,
    /// Open tickets (OPEN or IN_PROGRESS) an agent may hold before routing
    /// skips them.
    pub ticket_capacity: i64,
    /// Whether new unassigned tickets of the team are routed too.
    pub include_tickets: bool,
}

impl Default for Routing {
    fn default() -> Self {
        Routing {
            mode: RoutingMode::Manual,
            chat_capacity: 3,
            ticket_capacity: 20,
            include_tickets: false,
        }
    }
}

pub fn routing_mode() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(RoutingMode::NAMES)
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Team {
    pub id: Uuid,
    pub name: String,
    /// Sorted.
    pub member_ids: Vec<Uuid>,
    /// Entities the team serves. Sorted.
    pub entity_ids: Vec<Uuid>,
    pub routing: Routing,
    /// Active chat sessions of the team waiting for an agent.
    pub queue_length: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// What a PATCH of `routing` changes: each field given or kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoutingPatch {
    pub mode: Option<RoutingMode>,
    pub chat_capacity: Option<i64>,
    pub ticket_capacity: Option<i64>,
    pub include_tickets: Option<bool>,
}

impl RoutingPatch {
    pub fn apply(&self, to: Routing) -> Routing {
        Routing {
            mode: self.mode.unwrap_or(to.mode),
            chat_capacity: self.chat_capacity.unwrap_or(to.chat_capacity),
            ticket_capacity: self.ticket_capacity.unwrap_or(to.ticket_capacity),
            include_tickets: self.include_tickets.unwrap_or(to.include_tickets),
        }
    }
}

/// A new team, checked.
#[derive(Debug, Clone)]
pub struct NewTeam {
    pub name: String,
    pub member_ids: Vec<Uuid>,
    pub entity_ids: Vec<Uuid>,
    pub routing: Routing,
}

/// A PATCH of a team, checked: each part given or kept.
#[derive(Debug, Clone, Default)]
pub struct TeamPatch {
    pub name: Option<String>,
    pub member_ids: Option<Vec<Uuid>>,
    pub entity_ids: Option<Vec<Uuid>>,
    pub routing: RoutingPatch,
}

/// A JSON array of ids as the sorted set it names.
pub fn id_set(field: &str, value: &Value) -> Result<Vec<Uuid>, FieldError> {
    let Value::Array(items) = value else {
        return Err(problem(field, "must be an array of ids"));
    };
    let mut ids = Vec::with_capacity(items.len());
    for item in items {
        let id = item
            .as_str()
            .and_then(|raw| Uuid::parse_str(raw).ok())
            .ok_or_else(|| problem(field, "must be an array of ids"))?;
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    if ids.len() > TEAM_LIST_MAX {
        return Err(problem(
            field,
            format!("must list at most {TEAM_LIST_MAX} ids"),
        ));
    }
    Ok(ids)
}

const ROUTING_FIELDS: [&str; 4] = ["mode", "chatCapacity", "ticketCapacity", "includeTickets"];

/// The `routing` object of a create or PATCH body.
pub fn routing_patch(value: &Value) -> Result<RoutingPatch, Vec<FieldError>> {
    let Value::Object(fields) = value else {
        return Err(vec![problem("routing", "must be an object")]);
    };
    let mut patch = RoutingPatch::default();
    let mut problems = Vec::new();
    // Checked in the documented order, so the 400 lists them in it.
    if let Some(value) = fields.get("mode") {
        match value.as_str().and_then(|raw| raw.parse().ok()) {
            Some(mode) => patch.mode = Some(mode),
            None => problems.push(problem(
                "routing.mode",
                format!("must be one of: {}", RoutingMode::NAMES.join(", ")),
            )),
        }
    }
    if let Some(value) = fields.get("chatCapacity") {
        match capacity(value, CHAT_CAPACITY_MAX) {
            Some(n) => patch.chat_capacity = Some(n),
            None => problems.push(capacity_problem("routing.chatCapacity", CHAT_CAPACITY_MAX)),
        }
    }
    if let Some(value) = fields.get("ticketCapacity") {
        match capacity(value, TICKET_CAPACITY_MAX) {
            Some(n) => patch.ticket_capacity = Some(n),
            None => problems.push(capacity_problem(
                "routing.ticketCapacity",
                TICKET_CAPACITY_MAX,
            )),
        }
    }
    if let Some(value) = fields.get("includeTickets") {
        match value.as_bool() {
            Some(flag) => patch.include_tickets = Some(flag),
            None => problems.push(problem("routing.includeTickets", "must be a boolean")),
        }
    }
    for key in fields
        .keys()
        .filter(|k| !ROUTING_FIELDS.contains(&k.as_str()))
    {
        problems.push(problem(&format!("routing.{key}"), "is not a field"));
    }
    if problems.is_empty() {
        Ok(patch)
    } else {
        Err(problems)
    }
}

fn capacity(value: &Value, max: i64) -> Option<i64> {
    value.as_i64().filter(|n| (0..=max).contains(n))
}

fn capacity_problem(field: &str, max: i64) -> FieldError {
    problem(field, format!("must be a whole number from 0 to {max}"))
}

crate::text_enum! {
    /// Why a chat's assignee changed.
    pub enum Reason {
        Routing = "routing",
        Manual = "manual",
        Requeue = "requeue",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn routing_fields_are_checked_each() {
        let patch = routing_patch(&json!({"mode": "least_busy", "chatCapacity": 2})).unwrap();
        assert_eq!(patch.mode, Some(RoutingMode::LeastBusy));
        assert_eq!(patch.chat_capacity, Some(2));
        let problems = routing_patch(&json!({
            "mode": "random", "chatCapacity": -1, "ticketCapacity": 1.5,
            "includeTickets": "yes", "extra": 1
        }))
        .unwrap_err();
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "routing.mode",
                "routing.chatCapacity",
                "routing.ticketCapacity",
                "routing.includeTickets",
                "routing.extra"
            ]
        );
    }

    #[test]
    fn id_sets_collapse_and_refuse_non_ids() {
        let a = Uuid::now_v7();
        let ids = id_set("memberIds", &json!([a, a])).unwrap();
        assert_eq!(ids, [a]);
        assert!(id_set("memberIds", &json!(["nope"])).is_err());
        assert!(id_set("memberIds", &json!("x")).is_err());
    }
}
