//! The email channel: a desk address with its inbound source (an IMAP
//! mailbox or a provider's webhook) and its outbound SMTP identity
//! (`model`, `store::channels`); every Message-ID received or sent, which
//! threads replies and drops duplicates (`store::messages`); reading an
//! incoming message (`parse`), its HTML made safe to show (`sanitize`), its
//! quoted history and signature cut from the new comment (`trim`), and
//! whether it is an automatic message no one may answer (`loops`). An
//! incoming message becoming a ticket or a comment spans areas: it is the
//! service's `sequences::email_inbound`. An area crate: it depends on the
//! floors below and the audit log (a channel's create, change and delete
//! each write their entry).

pub mod compose;
pub mod loops;
pub mod model;
pub mod parse;
pub mod sanitize;
pub mod store;
pub mod trim;

pub use model::{Channel, InboundKind};

// The floors below, at the paths the service names them by.
infra::area_floors!();
pub(crate) use ::audit;
