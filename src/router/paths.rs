//! Where the API is mounted and how large a request may be: read by the
//! router and by the layers beside it (idempotency, metrics).

/// Request bodies above this are refused with 413 (an upload route's
/// keyed body excepted: `BodyLimit::Upload`).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// Where the API is mounted. Its routes are registered at their full
/// paths rather than in a router nested there: a nested router costs every
/// request a rebuilt URI, an extension and a second route lookup.
pub const API_PREFIX: &str = "/api/v1";

/// The route that answers the paths under [`API_PREFIX`] no other route
/// serves (with a 404, after authentication).
pub const API_CATCH_ALL: &str = "/api/v1/{*path}";
