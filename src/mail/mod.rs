//! Email to visitors. Messages are queued as outbox jobs (same transaction
//! as the change that causes them: the `supportdesk-mail` crate, re-exported
//! here) and sent by [`EmailJob`]: over SMTP when `SMTP_URL` is set, else as
//! `.eml` files under `data/mail/`. Failed sends are retried on the outbox's
//! one schedule. A reply is DKIM-signed with its channel's key, if it has
//! one, and sent through its channel's SMTP server, if it has one (`relay`).

pub mod dkim;
mod job;
pub mod mailer;
pub mod relay;
pub mod send_error;

pub use ::mail::{Email, JOB_KIND, REPLY_JOB_KIND, Reply, ReplyFile, queue, queue_reply};
pub use job::EmailJob;
pub use mailer::Mailer;
