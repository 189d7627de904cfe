//! The change feed (`GET /changes`): every create, update and delete of
//! tickets, comments, chat sessions, chat messages and knowledge-base
//! articles, in commit order, read with a cursor. Writes record their
//! entries in the `events` table in their own transaction (through
//! `events::emit_change` or `events::record_change`), so the feed and the
//! webhooks come from one place. `store::read` takes a tenant, a cursor,
//! types and a limit, so other readers (socket replay) can use it too.

pub use ::changes::{model, store};
pub mod numbering;
pub mod routes;
