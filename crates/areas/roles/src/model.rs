//! The built-in roles and their scopes, what a role resolves to, and the
//! rules of a custom role's name.

use uuid::Uuid;

use crate::auth::{Scope, ScopeSet};
use crate::error::FieldError;
use crate::validate::{NAME_MAX, problem};

crate::text_enum! {
    /// The roles every company has. Their scopes are fixed by this build
    /// ([`BuiltInRole::scopes`]), so they are not rows and cannot be changed.
    pub enum BuiltInRole {
        Owner = "owner",
        Admin = "admin",
        Agent = "agent",
        Viewer = "viewer",
    }
}

/// What a support agent does day to day: work tickets and chats (their
/// files too), answer from the knowledge base and macros, look up the
/// people, teams, entities, contacts and channels they meet there, read the
/// reports of their work and use the AI's answers. Not: deleting tickets,
/// writing the knowledge base, settings, keys, billing, roles, the audit log,
/// automations, channels' set-up, a contact's erasure, the AI's set-up.
const AGENT: &[Scope] = &[
    Scope::TicketsRead,
    Scope::TicketsWrite,
    Scope::ChatRead,
    Scope::ChatWrite,
    Scope::KbRead,
    Scope::UsersRead,
    Scope::TeamsRead,
    Scope::EntitiesRead,
    Scope::AttachmentsRead,
    Scope::AttachmentsWrite,
    Scope::ReportsRead,
    Scope::ContactsRead,
    Scope::ContactsWrite,
    Scope::MacrosRead,
    Scope::MacrosWrite,
    Scope::ChannelsRead,
    Scope::AiRead,
];

/// An agent's reads, and nothing else: a viewer sees what an agent sees
/// and changes nothing (internal notes aside: [`ResolvedRole::internal_notes`]).
const VIEWER: &[Scope] = &[
    Scope::TicketsRead,
    Scope::ChatRead,
    Scope::KbRead,
    Scope::UsersRead,
    Scope::TeamsRead,
    Scope::EntitiesRead,
    Scope::AttachmentsRead,
    Scope::ReportsRead,
    Scope::ContactsRead,
    Scope::MacrosRead,
    Scope::ChannelsRead,
    Scope::AiRead,
];

impl BuiltInRole {
    /// The role's scopes. An owner holds every scope; an admin every one
    /// but `billing:write` (what the company pays stays with its owners);
    /// an agent and a viewer those listed above.
    pub fn scopes(self) -> ScopeSet {
        match self {
            BuiltInRole::Owner => ScopeSet::all(),
            BuiltInRole::Admin => ScopeSet::all().without(Scope::BillingWrite),
            BuiltInRole::Agent => ScopeSet::from_scopes(AGENT.iter().copied()),
            BuiltInRole::Viewer => ScopeSet::from_scopes(VIEWER.iter().copied()),
        }
    }

    /// The built-in role named `name`, compared without regard to case: a
    /// custom role may not be called `Admin` either.
    pub fn named(name: &str) -> Option<BuiltInRole> {
        BuiltInRole::ALL
            .iter()
            .copied()
            .find(|role| role.as_str().eq_ignore_ascii_case(name.trim()))
    }

    /// What holding the role grants.
    pub fn resolved(self) -> ResolvedRole {
        ResolvedRole {
            scopes: self.scopes(),
            teams_only: false,
            internal_notes: self == BuiltInRole::Viewer,
        }
    }
}

/// What a user's role grants: the scopes a session holds, whether its
/// visibility is limited to the user's teams, and whether it may read and
/// post internal notes without `tickets:write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedRole {
    pub scopes: ScopeSet,
    pub teams_only: bool,
    /// Internal notes are otherwise tied to `tickets:write`
    /// (`tickets::model::reads_internal_notes`); a viewer writes nothing
    /// else, so it cannot be given as a scope. Only `viewer` has it: a
    /// custom role that should post notes holds `tickets:write`.
    pub internal_notes: bool,
}

/// The role a user holds: a built-in one, or a custom role of the user's
/// company (by id, so renaming the role keeps its holders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleRef {
    BuiltIn(BuiltInRole),
    Custom { id: Uuid, name: String },
}

impl RoleRef {
    /// The role's name as the API shows it (`roleName`).
    pub fn name(&self) -> &str {
        match self {
            RoleRef::BuiltIn(role) => role.as_str(),
            RoleRef::Custom { name, .. } => name,
        }
    }

    /// Whether the role reads as `ADMIN` in a user's `role`: owner and
    /// admin do. A custom role reads as `AGENT` whatever its scopes, so
    /// editing a role's scopes never changes its holders' `role`.
    pub fn is_admin(&self) -> bool {
        matches!(
            self,
            RoleRef::BuiltIn(BuiltInRole::Owner | BuiltInRole::Admin)
        )
    }
}

/// A custom role's name: 1–255 characters after trimming, and not a
/// built-in role's name in any case.
pub fn custom_name(field: &str, raw: Option<&str>) -> Result<String, FieldError> {
    let name = raw.map(str::trim).unwrap_or_default();
    if name.is_empty() {
        return Err(problem(field, "is required"));
    }
    if name.chars().count() > NAME_MAX {
        return Err(problem(
            field,
            format!("must be at most {NAME_MAX} characters"),
        ));
    }
    if BuiltInRole::named(name).is_some() {
        return Err(problem(
            field,
            format!(
                "is a built-in role's name ({}); choose another",
                BuiltInRole::NAMES.join(", ")
            ),
        ));
    }
    Ok(name.to_string())
}

/// Scope names for a role: at least one, each known to this build (unknown
/// names listed with the allowed ones).
pub fn scope_set(field: &str, names: &[String]) -> Result<ScopeSet, FieldError> {
    if names.is_empty() {
        return Err(problem(field, "must list at least one scope"));
    }
    let unknown: Vec<&str> = names
        .iter()
        .map(|n| n.trim())
        .filter(|n| Scope::parse(n).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(problem(
            field,
            format!(
                "unknown scopes: {}; allowed: {}",
                unknown.join(", "),
                Scope::NAMES.join(", ")
            ),
        ));
    }
    Ok(ScopeSet::from_scopes(
        names.iter().filter_map(|n| Scope::parse(n.trim())),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_holds_every_scope() {
        assert_eq!(BuiltInRole::Owner.scopes(), ScopeSet::all());
    }

    #[test]
    fn an_admin_holds_every_scope_but_billing_write() {
        let admin = BuiltInRole::Admin.scopes();
        let missing: Vec<Scope> = Scope::ALL
            .iter()
            .copied()
            .filter(|s| !admin.contains(*s))
            .collect();
        assert_eq!(missing, vec![Scope::BillingWrite]);
    }

    #[test]
    fn an_agent_holds_its_day_to_day_scopes() {
        assert_eq!(
            BuiltInRole::Agent.scopes().names(),
            vec![
                "tickets:read",
                "tickets:write",
                "kb:read",
                "chat:read",
                "chat:write",
                "users:read",
                "entities:read",
                "reports:read",
                "teams:read",
                "attachments:read",
                "attachments:write",
                "contacts:read",
                "contacts:write",
                "macros:read",
                "macros:write",
                "channels:read",
                "ai:read",
            ]
        );
    }

    #[test]
    fn a_viewer_holds_only_read_scopes() {
        let viewer = BuiltInRole::Viewer.scopes();
        assert!(viewer.iter().all(|s| s.as_str().ends_with(":read")));
    }

    #[test]
    fn a_viewer_reads_what_an_agent_reads() {
        let agent_reads = ScopeSet::from_scopes(
            BuiltInRole::Agent
                .scopes()
                .iter()
                .filter(|s| s.as_str().ends_with(":read")),
        );
        assert_eq!(BuiltInRole::Viewer.scopes(), agent_reads);
    }

    #[test]
    fn only_a_viewer_posts_internal_notes_without_tickets_write() {
        let with_notes: Vec<BuiltInRole> = BuiltInRole::ALL
            .iter()
            .copied()
            .filter(|r| r.resolved().internal_notes)
            .collect();
        assert_eq!(with_notes, vec![BuiltInRole::Viewer]);
    }

    #[test]
    fn a_built_in_name_in_any_case_is_not_a_custom_name() {
        assert!(custom_name("name", Some(" Admin ")).is_err());
    }

    #[test]
    fn a_custom_name_is_trimmed() {
        assert_eq!(
            custom_name("name", Some("  Tier 2 ")),
            Ok("Tier 2".to_string())
        );
    }
}
