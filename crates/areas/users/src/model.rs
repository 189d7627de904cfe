//! What a user is allowed to be.

crate::text_enum! {
    /// A user's role in the company.
    pub enum Role {
        Agent = "AGENT",
        Admin = "ADMIN",
    }
}

/// The role names, as an enum schema for the OpenAPI document.
pub fn role_schema() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(Role::NAMES)
}
