//! The sequences that span areas, above them: each runs one piece of work
//! whose steps belong to different areas, in one transaction where they
//! must commit together, calling each area's store for its own rows. An
//! area never calls another area's store for such a step; it is written
//! here instead.
//!
//! - [`automations`]: the triggers read from the change feed, and the
//!   timed automations, changing tickets through the tickets' store.
//! - [`sla_pass`]: a due SLA warning or breach, claimed by the SLA and
//!   recorded on its ticket.
//! - [`chat_message`]: a chat message stored, and the SLA targets an agent's
//!   answer meets recorded on the session's tickets.
//! - [`contacts`]: the contact of a new ticket or chat found or created in
//!   its transaction, and a merge of two contacts moving their tickets and
//!   chats.
//! - [`erasure`]: a person erased, each area erasing its own rows, a batch
//!   per transaction.
//! - [`export`]: everything stored about a person, read from each area,
//!   as one zip.
//! - [`email_inbound`]: an incoming email stored as a ticket or a comment,
//!   its message, thread, files and events in one transaction.
//! - [`email_outbound`]: an agent's public reply on an email ticket, and
//!   the email that carries it, queued in the reply's transaction.
//! - [`ratings`]: a rating received, its event the change feed's entry of
//!   the rated chat or ticket.
//! - [`email_sending`]: the channel's DKIM key a queued reply is signed
//!   with, and its SMTP server the reply leaves by, when it is sent.
//! - [`ticket_suggestions`]: the knowledge base's job that keeps a new
//!   ticket's suggestions, queued in the ticket's create.

pub mod automations;
pub mod chat_message;
pub mod contacts;
pub mod email_inbound;
pub mod email_outbound;
pub mod email_sending;
pub mod erasure;
pub mod export;
pub mod ratings;
pub mod sla_pass;
pub mod ticket_suggestions;
