//! Schemas of the shared types (timestamps, PATCH fields, scopes, the error
//! body, list envelopes, the small answers handlers write as JSON literals)
//! and helpers that turn the validators' constants into enum schemas, so the
//! document and the validation share one source.

use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::schema::{KnownFormat, SchemaFormat};
use utoipa::openapi::{ObjectBuilder, Type};
use uuid::Uuid;

pub use crate::error::FieldError;

/// Every error, from every layer: `{error, code, status, details?}`.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// A human-readable message.
    #[schema(example = "subject: is required")]
    pub error: String,
    /// A stable machine-readable code: `missing_api_key`, `invalid_api_key`,
    /// `expired_api_key`, `insufficient_scope`, `account_suspended`,
    /// `not_found`, `method_not_allowed`, `conflict`, `session_closed`,
    /// `ticket_merged`, `open_children`, `undo_expired`,
    /// `payload_too_large`, `quota_exceeded`, `unsupported_media_type`, `rate_limited`,
    /// `invalid_json`, `validation_failed`, `internal`, `unavailable`,
    /// `timeout`.
    #[schema(example = "validation_failed")]
    pub code: String,
    /// The HTTP status, repeated.
    #[schema(example = 400)]
    pub status: u16,
    /// Validation errors: one entry per field.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub details: Option<Vec<FieldError>>,
    /// `ticket_merged`: the ticket the merged one now lives on.
    #[serde(rename = "mergedInto", skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub merged_into: Option<Uuid>,
}

/// `{"data": [...]}`: a list that is not paginated.
#[derive(Serialize, ToSchema)]
pub struct DataList<T: ToSchema> {
    pub data: Vec<T>,
}

/// The answer to a DELETE.
#[derive(Serialize, ToSchema)]
pub struct Deleted {
    pub id: Uuid,
    /// Always true.
    pub deleted: bool,
}

/// The answer to a presence removal.
#[derive(Serialize, ToSchema)]
pub struct Removed {
    /// Whether the agent was online.
    pub removed: bool,
}

/// The answer to a vote.
#[derive(Serialize, ToSchema)]
pub struct VoteRecorded {
    /// Always true.
    pub recorded: bool,
}

/// A string schema limited to `values` (the validators' own constants).
pub fn enum_of(values: &[&str]) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
}

/// No NUL anywhere: the JSON and query extractors refuse a NUL character
/// in any string (no column can store it). ECMA syntax, which Python's
/// `re` (schemathesis generates from it) and Rust's `regex` read alike.
pub const NO_NUL: &str = r"^[^\u0000]*$";

/// Something besides whitespace, and no NUL: a required text is trimmed
/// (`str::trim`, Unicode `White_Space`) and refused when nothing is left.
/// The whitespace is spelled out rather than `\s`, whose set differs
/// between ECMA, Python and Rust (U+0085 and U+FEFF, the `\x1c`-`\x1f`
/// separators): `\S` would let a blank U+0085 through in a browser's
/// validator and a valid U+FEFF be refused in another.
pub const NON_BLANK: &str = concat!(
    r"^[^\u0000]*",
    r"[^\u0000\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]",
    r"[^\u0000]*$",
);

fn string(min: Option<usize>, max: usize) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(min)
        .max_length(Some(max))
}

/// A required string field of 1..=255 characters (names, titles, subjects):
/// trimmed, it must not be empty.
pub fn name() -> ObjectBuilder {
    required_text(crate::validate::NAME_MAX)
}

/// A required text of at most `max` characters: trimmed, it must not be
/// empty.
pub fn required_text(max: usize) -> ObjectBuilder {
    string(Some(1), max).pattern(Some(NON_BLANK))
}

/// An id given in a body or query: a UUID string.
pub fn uuid() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
}

/// An email address.
pub fn email() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Email)))
        .max_length(Some(crate::validate::NAME_MAX))
}

/// A text of at most `max` characters (trimmed; blank counts as absent).
pub fn text(max: usize) -> ObjectBuilder {
    string(None, max).pattern(Some(NO_NUL))
}

/// The scope names, as an enum schema.
pub fn scope_name() -> ObjectBuilder {
    vocab::scope::scope_name_schema()
}

pub fn ticket_status() -> ObjectBuilder {
    enum_of(vocab::ticket::TicketStatus::NAMES)
}

pub fn author_type() -> ObjectBuilder {
    enum_of(vocab::ticket::AuthorType::NAMES)
}

pub fn ticket_priority() -> ObjectBuilder {
    enum_of(vocab::ticket::Priority::NAMES)
}
