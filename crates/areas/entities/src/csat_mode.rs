//! When an entity's visitors are asked for a rating: a setting of the
//! entity, which the CSAT area reads.

crate::text_enum! {
    /// When an entity's visitors are asked for a rating: `auto` when a
    /// chat closes or a ticket is resolved, `manual` only after an agent
    /// asks (`request-rating`), `off` never (ratings are refused).
    pub enum CsatMode {
        Auto = "auto",
        Manual = "manual",
        Off = "off",
    }
}

pub fn csat_mode_schema() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(CsatMode::NAMES)
}
