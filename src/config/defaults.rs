//! Every default, written once: the flags show them and `Config::new`
//! (tests, embedding programs) starts from them.

pub const BIND: &str = "127.0.0.1:8080";
pub const SMTP_FROM: &str = "Support Desk <support@localhost>";
pub const DATA_DIR: &str = "data";
pub const PRESENCE_TTL_SECS: u64 = 30;
pub const REASSIGN_AFTER_SECS: u64 = 120;
pub const WEBHOOK_RETRY_DELAYS: &str = "60,300,1800,7200";
pub const WEBHOOK_TIMEOUT_SECS: u64 = 10;
pub const RATE_WINDOW_SECS: u64 = 3600;
pub const RULES_INTERVAL_SECS: u64 = 30;
/// Seconds between two passes of the chat routing worker.
pub const ROUTING_TICK_SECS: u64 = 1;
/// A merged ticket can be put back for an hour.
pub const MERGE_UNDO_SECS: u64 = 3600;
/// A public reply can be taken back for ten seconds.
pub const UNDO_SEND_SECS: u64 = 10;
pub const REDIS_PREFIX: &str = "sd:";
pub const HEADER_READ_TIMEOUT_SECS: u64 = 10;
pub const BODY_READ_TIMEOUT_SECS: u64 = 10;
/// A 25 MiB upload at 100 KB/s takes about 260 s.
pub const BODY_READ_DEADLINE_SECS: u64 = 300;
/// Far above any statement of a normal request (milliseconds), short
/// enough that a runaway one frees its database core soon.
pub const STATEMENT_TIMEOUT_MS: u64 = 5_000;
pub const DEMO: bool = false;
pub const DEMO_SHOP_BIND: &str = "127.0.0.1:8081";
pub const VISITOR_MESSAGE_RATE: &str = "20/20s";
/// A console subscribing to its 100 channels at once, then ten frames a
/// second.
pub const SOCKET_FRAME_RATE: &str = "200/20s";
pub const VISITOR_UPLOAD_RATE: &str = "20/600s";
/// A burst of 10 chats per IP, then one every 2 minutes (30 an hour).
pub const WIDGET_SESSION_RATE: &str = "10/1200s";
/// A visitor typing a search, presence polls and a chat starting: 120
/// requests at once, then two a second.
pub const WIDGET_REQUEST_RATE: &str = "120/60s";
pub const AUTH_FAILURE_WINDOW_SECS: u64 = 60;
pub const RETENTION_DAYS: u64 = 30;
/// Chats are a company's records: kept unless it chooses otherwise.
pub const CHAT_RETENTION_DAYS: u64 = 0;
pub const RETENTION_INTERVAL_SECS: u64 = 3600;
/// Finished jobs are kept a week.
pub const JOB_RETENTION_DAYS: u64 = 7;
pub const IDEMPOTENCY_TTL_HOURS: u64 = 24;
pub const MAX_ATTACHMENT_BYTES: u64 = 25 * 1024 * 1024;
pub const MAX_VISITOR_ATTACHMENT_BYTES: u64 = 10 * 1024 * 1024;
/// Uploads never attached to a record are deleted after a day.
pub const ATTACHMENT_ORPHAN_HOURS: u64 = 24;
/// Half an hour: the widget refreshes at half-life, so a page left
/// open keeps its chat, and a leaked token is worth little for long.
pub const VISITOR_TOKEN_TTL_MINUTES: u64 = 30;
/// An agent session ends after eight idle hours (a working day) …
pub const SESSION_IDLE_MINUTES: u64 = 480;
/// … and after two weeks at most.
pub const SESSION_MAX_HOURS: u64 = 336;
/// Long enough to rate a chat after its close.
pub const VISITOR_CLOSED_WRITE_MINUTES: u64 = 60;
/// Five files at the visitor's size limit.
pub const VISITOR_SESSION_UPLOAD_QUOTA_BYTES: u64 = 50 * 1024 * 1024;
pub const VISITOR_COMPANY_UPLOAD_QUOTA_BYTES: u64 = 1024 * 1024 * 1024;
/// A visitor attaches a file while writing the message it goes with.
pub const VISITOR_UPLOAD_LIFE_MINUTES: u64 = 60;
