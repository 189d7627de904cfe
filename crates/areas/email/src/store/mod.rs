//! SQL for the email channel: the channels (`channels`, with the audit
//! entries of their changes, `channel_audit`) and the messages, threads and
//! undeliverable addresses (`messages`).

mod channel_audit;
pub mod channels;
pub mod messages;
