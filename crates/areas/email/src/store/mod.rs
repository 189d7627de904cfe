//! SQL for the email channel: the channels (`channels`) and the messages,
//! threads and undeliverable addresses (`messages`).

pub mod channels;
pub mod messages;
