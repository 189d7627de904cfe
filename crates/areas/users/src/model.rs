//! What a user is allowed to be.

use crate::roles::{BuiltInRole, RoleRef};

crate::text_enum! {
    /// A user's role in the company as the API has always shown it (docs/api.md, "Users"): owner and admin
    /// read as ADMIN, any other role as AGENT. `roleName` says which role.
    pub enum Role {
        Agent = "AGENT",
        Admin = "ADMIN",
    }
}

impl Role {
    /// The `role` a holder of `role` reads as.
    pub fn of(role: &RoleRef) -> Role {
        if role.is_admin() {
            Role::Admin
        } else {
            Role::Agent
        }
    }
}

/// `role` alone (AGENT or ADMIN) gives the built-in role of that name.
impl From<Role> for RoleRef {
    fn from(role: Role) -> Self {
        RoleRef::BuiltIn(match role {
            Role::Agent => BuiltInRole::Agent,
            Role::Admin => BuiltInRole::Admin,
        })
    }
}

/// The role names, as an enum schema for the OpenAPI document.
pub fn role_schema() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(Role::NAMES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_and_admin_read_as_admin_and_the_others_as_agent() {
        let read: Vec<Role> = BuiltInRole::ALL
            .iter()
            .map(|r| Role::of(&RoleRef::BuiltIn(*r)))
            .collect();
        assert_eq!(
            read,
            vec![Role::Admin, Role::Admin, Role::Agent, Role::Agent]
        );
    }

    #[test]
    fn a_custom_role_reads_as_agent() {
        let custom = RoleRef::Custom {
            id: uuid::Uuid::nil(),
            name: "Leads".into(),
        };
        assert_eq!(Role::of(&custom), Role::Agent);
    }
}
