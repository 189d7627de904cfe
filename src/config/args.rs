//! The `serve` flags, each also an environment variable (docs/operations.md).

use std::path::PathBuf;

use clap::Args;

use super::defaults;

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// `postgres://…` or `sqlite:…`; default `sqlite://<data dir>/supportdesk.db`.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Redis for presence, fan-out and rate limits across nodes; in-process without it.
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,
    /// The address the API listens on.
    #[arg(long, env = "SUPPORTDESK_BIND", default_value = defaults::BIND)]
    pub bind: String,
    /// Base URL used in links sent by email; default from the bind address.
    #[arg(long, env = "SUPPORTDESK_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// SMTP server for email; without it emails are written as .eml files.
    #[arg(long, env = "SMTP_URL")]
    pub smtp_url: Option<String>,
    /// The sender address of the emails.
    #[arg(
        long,
        env = "SMTP_FROM",
        default_value = defaults::SMTP_FROM
    )]
    pub smtp_from: String,
    /// The directory of the default SQLite file, the .eml files and local
    /// attachments.
    #[arg(long, env = "SUPPORTDESK_DATA_DIR", default_value = defaults::DATA_DIR)]
    pub data_dir: PathBuf,
    /// Allow webhook URLs on private and loopback addresses (development, tests).
    #[arg(
        long,
        env = "SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE",
        default_value_t = false
    )]
    pub webhook_allow_private: bool,
    /// Enable the demo: create the demo company and its all-scope TEST key
    /// on an empty database (the embedded SQLite default always does), and
    /// serve the demo pages under /demo/ and the demo shop.
    #[arg(long, env = "SUPPORTDESK_DEMO", default_value_t = defaults::DEMO)]
    pub demo: bool,
    /// Where the demo's made-up shop listens when the demo is enabled: its
    /// own port, so the widget runs on another origin than the API.
    #[arg(long, env = "SUPPORTDESK_DEMO_SHOP_BIND", default_value = defaults::DEMO_SHOP_BIND)]
    pub demo_shop_bind: String,
    /// Seconds an agent stays online after its last heartbeat.
    #[arg(long, env = "SUPPORTDESK_PRESENCE_TTL_SECS", default_value_t = defaults::PRESENCE_TTL_SECS)]
    pub presence_ttl_secs: u64,
    /// Seconds an agent may be away (presence expired) before the chats
    /// routing gave them and they have not answered go back to the queue.
    #[arg(long, env = "SUPPORTDESK_REASSIGN_AFTER_SECS", default_value_t = defaults::REASSIGN_AFTER_SECS)]
    pub reassign_after_secs: u64,
    /// Delays before webhook attempts 2, 3, … in seconds.
    #[arg(
        long,
        env = "SUPPORTDESK_WEBHOOK_RETRY_DELAYS",
        default_value = defaults::WEBHOOK_RETRY_DELAYS
    )]
    pub webhook_retry_delays: String,
    /// Seconds a webhook receiver has to answer one delivery attempt.
    #[arg(long, env = "SUPPORTDESK_WEBHOOK_TIMEOUT_SECS", default_value_t = defaults::WEBHOOK_TIMEOUT_SECS)]
    pub webhook_timeout_secs: u64,
    /// The window of the API keys' rate limits, in seconds.
    #[arg(long, env = "SUPPORTDESK_RATE_WINDOW_SECS", default_value_t = defaults::RATE_WINDOW_SECS)]
    pub rate_window_secs: u64,
    /// Seconds between two passes of the escalation rules and of the SLA
    /// clocks.
    #[arg(long, env = "SUPPORTDESK_RULES_INTERVAL_SECS", default_value_t = defaults::RULES_INTERVAL_SECS)]
    pub rules_interval_secs: u64,
    /// Seconds after a ticket merge during which it can be undone.
    #[arg(long, env = "SUPPORTDESK_MERGE_UNDO_SECS", default_value_t = defaults::MERGE_UNDO_SECS)]
    pub merge_undo_secs: u64,
    /// Seconds an agent's public reply is held before it is delivered
    /// (its undo window); 0 delivers at once.
    #[arg(long, env = "SUPPORTDESK_UNDO_SEND_SECS", default_value_t = defaults::UNDO_SEND_SECS)]
    pub undo_send_secs: u64,
    /// Prefix of every Redis key and channel (lets nodes of two deployments,
    /// or two tests, share one Redis).
    #[arg(long, env = "SUPPORTDESK_REDIS_PREFIX", default_value = defaults::REDIS_PREFIX)]
    pub redis_prefix: String,
    /// Socket `message` frames of one visitor session: `<count>/<seconds>s`,
    /// all of them at once if need be, then one every seconds/count.
    #[arg(
        long,
        env = "SUPPORTDESK_VISITOR_MESSAGE_RATE",
        default_value = defaults::VISITOR_MESSAGE_RATE
    )]
    pub visitor_message_rate: String,
    /// Client frames of any kind one socket may send: `<count>/<seconds>s`,
    /// all of them at once if need be, then one every seconds/count.
    #[arg(
        long,
        env = "SUPPORTDESK_SOCKET_FRAME_RATE",
        default_value = defaults::SOCKET_FRAME_RATE
    )]
    pub socket_frame_rate: String,
    /// Days finished webhook deliveries (with their attempts) and events are kept.
    #[arg(long, env = "SUPPORTDESK_RETENTION_DAYS", default_value_t = defaults::RETENTION_DAYS)]
    pub retention_days: u64,
    /// Days a closed chat is kept (with its messages and files) after it
    /// closed; 0 keeps chats for good.
    #[arg(
        long,
        env = "SUPPORTDESK_CHAT_RETENTION_DAYS",
        default_value_t = defaults::CHAT_RETENTION_DAYS
    )]
    pub chat_retention_days: u64,
    /// Seconds between two retention passes.
    #[arg(
        long,
        env = "SUPPORTDESK_RETENTION_INTERVAL_SECS",
        default_value_t = defaults::RETENTION_INTERVAL_SECS
    )]
    pub retention_interval_secs: u64,
    /// Seconds a client may take to send a request's headers.
    #[arg(
        long,
        env = "SUPPORTDESK_HEADER_READ_TIMEOUT_SECS",
        default_value_t = defaults::HEADER_READ_TIMEOUT_SECS
    )]
    pub header_read_timeout_secs: u64,
    /// Seconds a request body may stall (no byte arriving) before the
    /// request is answered 408.
    #[arg(
        long,
        env = "SUPPORTDESK_BODY_READ_TIMEOUT_SECS",
        default_value_t = defaults::BODY_READ_TIMEOUT_SECS
    )]
    pub body_read_timeout_secs: u64,
    /// Seconds a request body may take in all before the request is
    /// answered 408 (a body trickled in never stalls).
    #[arg(
        long,
        env = "SUPPORTDESK_BODY_READ_DEADLINE_SECS",
        default_value_t = defaults::BODY_READ_DEADLINE_SECS
    )]
    pub body_read_deadline_secs: u64,
    /// Milliseconds one database statement may run on Postgres before the
    /// server cancels it (the request is answered 503 `timeout`); 0 turns
    /// the limit off. Migrations run without it.
    #[arg(
        long,
        env = "SUPPORTDESK_STATEMENT_TIMEOUT_MS",
        default_value_t = defaults::STATEMENT_TIMEOUT_MS
    )]
    pub statement_timeout_ms: u64,
    /// Hours an `Idempotency-Key` and its stored answer are kept.
    #[arg(
        long,
        env = "SUPPORTDESK_IDEMPOTENCY_TTL_HOURS",
        default_value_t = defaults::IDEMPOTENCY_TTL_HOURS
    )]
    pub idempotency_ttl_hours: u64,
    /// Largest attachment an API key may upload, in bytes.
    #[arg(
        long,
        env = "SUPPORTDESK_MAX_ATTACHMENT_BYTES",
        default_value_t = defaults::MAX_ATTACHMENT_BYTES
    )]
    pub max_attachment_bytes: u64,
    /// Largest attachment a visitor may upload, in bytes.
    #[arg(
        long,
        env = "SUPPORTDESK_MAX_VISITOR_ATTACHMENT_BYTES",
        default_value_t = defaults::MAX_VISITOR_ATTACHMENT_BYTES
    )]
    pub max_visitor_attachment_bytes: u64,
    /// Bucket of an S3-compatible store for attachments, shared by every
    /// node; without it files go to the data dir. Endpoint, region and
    /// credentials come from the usual `AWS_*` variables
    /// (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP`, …).
    #[arg(long, env = "SUPPORTDESK_S3_BUCKET")]
    pub s3_bucket: Option<String>,
    /// Uploads one visitor session may make: `<count>/<seconds>s`, all of
    /// them at once if need be (besides the widget's per-IP limit).
    #[arg(
        long,
        env = "SUPPORTDESK_VISITOR_UPLOAD_RATE",
        default_value = defaults::VISITOR_UPLOAD_RATE
    )]
    pub visitor_upload_rate: String,
    /// Bytes one chat session's unattached uploads (not yet sent with a
    /// message) may hold.
    #[arg(
        long,
        env = "SUPPORTDESK_VISITOR_SESSION_UPLOAD_QUOTA_BYTES",
        default_value_t = defaults::VISITOR_SESSION_UPLOAD_QUOTA_BYTES
    )]
    pub visitor_session_upload_quota_bytes: u64,
    /// Bytes the unattached visitor uploads of all one company's chats may
    /// hold.
    #[arg(
        long,
        env = "SUPPORTDESK_VISITOR_COMPANY_UPLOAD_QUOTA_BYTES",
        default_value_t = defaults::VISITOR_COMPANY_UPLOAD_QUOTA_BYTES
    )]
    pub visitor_company_upload_quota_bytes: u64,
    /// Minutes a visitor's upload may stay unattached before the sweeper
    /// deletes it (a key's may stay 24 hours).
    #[arg(
        long,
        env = "SUPPORTDESK_VISITOR_UPLOAD_LIFE_MINUTES",
        default_value_t = defaults::VISITOR_UPLOAD_LIFE_MINUTES
    )]
    pub visitor_upload_life_minutes: u64,
    /// Chats the widget may start from one client IP: `<count>/<seconds>s`,
    /// all of them at once if need be, then one every seconds/count.
    #[arg(
        long,
        env = "SUPPORTDESK_WIDGET_SESSION_RATE",
        default_value = defaults::WIDGET_SESSION_RATE
    )]
    pub widget_session_rate: String,
    /// Address of the Prometheus `GET /metrics` listener, e.g.
    /// `127.0.0.1:9090`; no metrics are recorded without it.
    #[arg(long, env = "SUPPORTDESK_METRICS_BIND")]
    pub metrics_bind: Option<String>,
    /// Requests of any kind the widget API takes from one client IP:
    /// `<count>/<seconds>s`, all of them at once if need be, then one every
    /// seconds/count.
    #[arg(
        long,
        env = "SUPPORTDESK_WIDGET_REQUEST_RATE",
        default_value = defaults::WIDGET_REQUEST_RATE
    )]
    pub widget_request_rate: String,
    /// Minutes a visitor token lives; the widget refreshes it while it is open.
    #[arg(
        long,
        env = "SUPPORTDESK_VISITOR_TOKEN_TTL_MINUTES",
        default_value_t = defaults::VISITOR_TOKEN_TTL_MINUTES
    )]
    pub visitor_token_ttl_minutes: u64,
    /// Minutes an agent's session lasts without a request (it ends then).
    #[arg(
        long,
        env = "SUPPORTDESK_SESSION_IDLE_MINUTES",
        default_value_t = defaults::SESSION_IDLE_MINUTES
    )]
    pub session_idle_minutes: u64,
    /// Hours an agent's session lasts at most, however busy.
    #[arg(
        long,
        env = "SUPPORTDESK_SESSION_MAX_HOURS",
        default_value_t = defaults::SESSION_MAX_HOURS
    )]
    pub session_max_hours: u64,
    /// Minutes a closed chat's visitor token may still write (rate the
    /// chat); reading goes on while the token lives.
    #[arg(
        long,
        env = "SUPPORTDESK_VISITOR_CLOSED_WRITE_MINUTES",
        default_value_t = defaults::VISITOR_CLOSED_WRITE_MINUTES
    )]
    pub visitor_closed_write_minutes: u64,
    /// Comma-separated CIDRs of the proxies (load balancers) whose
    /// `X-Forwarded-For` / `Forwarded` headers name the client; none by
    /// default (the TCP peer is the client).
    #[arg(long, env = "SUPPORTDESK_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: String,
}
