//! What a user is allowed to be.

crate::text_enum! {
    /// A user's role in the company.
    pub enum Role {
        Agent = "AGENT",
        Admin = "ADMIN",
    }
}
