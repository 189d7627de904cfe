//! Configuration from environment variables, each also a `serve` flag.
//! Timings that tests shorten are settings whose defaults are the documented values (docs/operations.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

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

/// Every default, written once: the flags show them and `Config::new`
/// (tests, embedding programs) starts from them.
pub mod defaults {
    pub const BIND: &str = "127.0.0.1:8080";
    pub const SMTP_FROM: &str = "Support Desk <support@localhost>";
    pub const DATA_DIR: &str = "data";
    pub const PRESENCE_TTL_SECS: u64 = 30;
    pub const REASSIGN_AFTER_SECS: u64 = 120;
    pub const WEBHOOK_RETRY_DELAYS: &str = "60,300,1800,7200";
    pub const WEBHOOK_TIMEOUT_SECS: u64 = 10;
    pub const RATE_WINDOW_SECS: u64 = 3600;
    pub const RULES_INTERVAL_SECS: u64 = 30;
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
    /// Long enough to rate a chat after its close.
    pub const VISITOR_CLOSED_WRITE_MINUTES: u64 = 60;
    /// Five files at the visitor's size limit.
    pub const VISITOR_SESSION_UPLOAD_QUOTA_BYTES: u64 = 50 * 1024 * 1024;
    pub const VISITOR_COMPANY_UPLOAD_QUOTA_BYTES: u64 = 1024 * 1024 * 1024;
    /// A visitor attaches a file while writing the message it goes with.
    pub const VISITOR_UPLOAD_LIFE_MINUTES: u64 = 60;
}

/// `ms` milliseconds, or `None` for 0 (the setting turned off).
fn millis_or_off(ms: u64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms))
}

fn minutes(count: u64) -> Duration {
    Duration::from_secs(count.saturating_mul(60))
}

fn days(count: u64) -> Duration {
    Duration::from_secs(count.saturating_mul(24 * 3600))
}

#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: String,
    pub redis_url: Option<String>,
    pub redis_prefix: String,
    pub bind: String,
    pub public_url: Option<String>,
    pub smtp_url: Option<String>,
    pub smtp_from: String,
    pub data_dir: PathBuf,
    pub webhook_allow_private: bool,
    pub presence_ttl: Duration,
    pub reassign_after: Duration,
    pub webhook_retry_delays: Vec<Duration>,
    pub webhook_timeout: Duration,
    pub rate_window: Duration,
    pub rules_interval: Duration,
    /// Look at the database on start: create the demo company and key on an
    /// empty one when allowed (see `demo`), or print how to create a company.
    pub bootstrap_demo: bool,
    /// Whether the demo is enabled: that start may create the demo on
    /// Postgres (SQLite always may), and the demo shop runs on
    /// `demo_shop_bind` with its identity-token route.
    pub demo: bool,
    pub demo_shop_bind: String,
    /// Run background workers (outbox, presence sweeper, rules). Tests that
    /// drive a worker step by step turn this off.
    pub run_workers: bool,
    /// How long a client may take to send a request's headers before the
    /// connection is closed (slowloris guard).
    pub header_read_timeout: Duration,
    /// How long a request body may stall, and take in all, before the
    /// request is answered 408 (slow-body guard).
    pub body_read_timeout: Duration,
    pub body_read_deadline: Duration,
    /// How long one Postgres statement may run before the server cancels
    /// it; `None`: no limit. SQLite has no such setting.
    pub statement_timeout: Option<Duration>,
    /// The limit on socket `message` frames per visitor session.
    pub visitor_message_rate: MessageRate,
    /// The limit on client frames of any kind per socket.
    pub socket_frame_rate: MessageRate,
    /// The window of the per-client failed-authentication limit (a minute;
    /// tests lengthen it so a refusal lasts long enough to look at).
    pub auth_failure_window: Duration,
    /// Added to this node's wall clock (`time::Clock`); zero except in
    /// tests that play a node whose clock is off.
    pub clock_offset: chrono::TimeDelta,
    /// How long finished webhook deliveries, their attempts and events are
    /// kept (tests set seconds).
    pub retention: Duration,
    /// How long finished jobs are kept.
    pub job_retention: Duration,
    /// How long a closed chat is kept after it closed; `None`: for good.
    pub chat_retention: Option<Duration>,
    /// Time between two retention passes on a node.
    pub retention_interval: Duration,
    /// How long an idempotency key's record is kept; after it the key may
    /// be used again.
    pub idempotency_ttl: Duration,
    /// Largest attachment an API key may upload, in bytes.
    pub max_attachment_bytes: u64,
    /// Largest attachment a visitor may upload, in bytes.
    pub max_visitor_attachment_bytes: u64,
    /// How long an upload may stay unattached (tests set seconds).
    pub attachment_orphan_age: Duration,
    /// How long a visitor's upload may stay unattached (tests set seconds).
    pub visitor_orphan_age: Duration,
    /// Bytes one chat session's unattached uploads may hold.
    pub visitor_session_upload_quota: u64,
    /// Bytes the unattached visitor uploads of one company may hold.
    pub visitor_company_upload_quota: u64,
    /// Uploads one visitor session may make per window.
    pub visitor_upload_rate: MessageRate,
    /// Chats the widget may start from one client IP per window.
    pub widget_session_rate: MessageRate,
    /// Widget API requests of any kind from one client IP per window.
    pub widget_request_rate: MessageRate,
    /// An S3-compatible store for attachments instead of the data dir.
    pub s3: Option<S3Config>,
    /// Where `GET /metrics` listens; metrics are off without it.
    pub metrics_bind: Option<String>,
    /// How long a visitor token lives (`SUPPORTDESK_VISITOR_TOKEN_TTL_MINUTES`).
    pub visitor_token_ttl: Duration,
    /// How long after its chat closed a visitor token may still write.
    pub visitor_closed_write: Duration,
    /// The proxies whose forwarding headers name the client.
    pub trusted_proxies: TrustedProxies,
}

pub use ::attachments::S3Config;
pub use infra::client_address::TrustedProxies;

/// `limit` messages per `window`, all of them at once if need be (GCRA,
/// like an API key's limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageRate {
    pub limit: u64,
    pub window: Duration,
}

impl MessageRate {
    /// Parses `20/20s` (or `20/20`): 20 messages per 20 seconds.
    pub fn parse(text: &str) -> anyhow::Result<MessageRate> {
        let invalid = || {
            anyhow::anyhow!(
                "invalid message rate {text:?}: expected <count>/<seconds>s, e.g. 20/20s"
            )
        };
        let (count, seconds) = text.trim().split_once('/').ok_or_else(invalid)?;
        let seconds = seconds.trim().trim_end_matches('s');
        let limit: u64 = count.trim().parse().map_err(|_| invalid())?;
        let seconds: f64 = seconds.parse().map_err(|_| invalid())?;
        if limit == 0 || !seconds.is_finite() || seconds <= 0.0 {
            return Err(invalid());
        }
        Ok(MessageRate {
            limit,
            window: Duration::from_secs_f64(seconds),
        })
    }
}

impl Config {
    pub fn from_args(args: ServeArgs) -> anyhow::Result<Self> {
        let database_url = args.database_url.unwrap_or_else(|| {
            format!(
                "sqlite://{}/supportdesk.db?mode=rwc",
                args.data_dir.display()
            )
        });
        Ok(Config {
            database_url,
            redis_url: args.redis_url.filter(|u| !u.is_empty()),
            redis_prefix: args.redis_prefix,
            bind: args.bind,
            public_url: args.public_url,
            smtp_url: args.smtp_url.filter(|u| !u.is_empty()),
            smtp_from: args.smtp_from,
            data_dir: args.data_dir,
            webhook_allow_private: args.webhook_allow_private,
            presence_ttl: Duration::from_secs(args.presence_ttl_secs),
            reassign_after: Duration::from_secs(args.reassign_after_secs),
            webhook_retry_delays: parse_delays(&args.webhook_retry_delays)?,
            webhook_timeout: Duration::from_secs(args.webhook_timeout_secs),
            rate_window: Duration::from_secs(args.rate_window_secs),
            rules_interval: Duration::from_secs(args.rules_interval_secs),
            bootstrap_demo: true,
            demo: args.demo,
            demo_shop_bind: args.demo_shop_bind,
            run_workers: true,
            header_read_timeout: Duration::from_secs(args.header_read_timeout_secs.max(1)),
            body_read_timeout: Duration::from_secs(args.body_read_timeout_secs.max(1)),
            body_read_deadline: Duration::from_secs(args.body_read_deadline_secs.max(1)),
            statement_timeout: millis_or_off(args.statement_timeout_ms),
            visitor_message_rate: MessageRate::parse(&args.visitor_message_rate)?,
            socket_frame_rate: MessageRate::parse(&args.socket_frame_rate)?,
            auth_failure_window: Duration::from_secs(defaults::AUTH_FAILURE_WINDOW_SECS),
            clock_offset: chrono::TimeDelta::zero(),
            retention: days(args.retention_days),
            job_retention: days(defaults::JOB_RETENTION_DAYS),
            chat_retention: (args.chat_retention_days > 0).then(|| days(args.chat_retention_days)),
            retention_interval: Duration::from_secs(args.retention_interval_secs.max(1)),
            idempotency_ttl: Duration::from_secs(args.idempotency_ttl_hours.max(1) * 3600),
            max_attachment_bytes: args.max_attachment_bytes,
            max_visitor_attachment_bytes: args.max_visitor_attachment_bytes,
            attachment_orphan_age: Duration::from_secs(defaults::ATTACHMENT_ORPHAN_HOURS * 3600),
            visitor_orphan_age: Duration::from_secs(
                args.visitor_upload_life_minutes.max(1).saturating_mul(60),
            ),
            visitor_session_upload_quota: args.visitor_session_upload_quota_bytes,
            visitor_company_upload_quota: args.visitor_company_upload_quota_bytes,
            visitor_upload_rate: MessageRate::parse(&args.visitor_upload_rate)?,
            widget_session_rate: MessageRate::parse(&args.widget_session_rate)?,
            widget_request_rate: MessageRate::parse(&args.widget_request_rate)?,
            s3: args
                .s3_bucket
                .filter(|bucket| !bucket.is_empty())
                .map(|bucket| S3Config {
                    bucket,
                    ..S3Config::default()
                }),
            metrics_bind: args.metrics_bind.filter(|bind| !bind.is_empty()),
            visitor_token_ttl: minutes(args.visitor_token_ttl_minutes.max(1)),
            visitor_closed_write: minutes(args.visitor_closed_write_minutes),
            trusted_proxies: TrustedProxies::parse(&args.trusted_proxies)?,
        })
    }

    /// The defaults for `database_url`, as a test or embedding program
    /// wants them: bound to a free port, no demo bootstrap.
    pub fn new(database_url: impl Into<String>, data_dir: PathBuf) -> Self {
        let secs = Duration::from_secs;
        Config {
            database_url: database_url.into(),
            redis_url: None,
            redis_prefix: defaults::REDIS_PREFIX.into(),
            bind: "127.0.0.1:0".into(),
            public_url: None,
            smtp_url: None,
            smtp_from: defaults::SMTP_FROM.into(),
            data_dir,
            webhook_allow_private: false,
            presence_ttl: secs(defaults::PRESENCE_TTL_SECS),
            reassign_after: secs(defaults::REASSIGN_AFTER_SECS),
            webhook_retry_delays: parse_delays(defaults::WEBHOOK_RETRY_DELAYS)
                .expect("the default retry delays parse (unit test)"),
            webhook_timeout: secs(defaults::WEBHOOK_TIMEOUT_SECS),
            rate_window: secs(defaults::RATE_WINDOW_SECS),
            rules_interval: secs(defaults::RULES_INTERVAL_SECS),
            bootstrap_demo: false,
            demo: defaults::DEMO,
            demo_shop_bind: "127.0.0.1:0".into(),
            run_workers: true,
            header_read_timeout: secs(defaults::HEADER_READ_TIMEOUT_SECS),
            body_read_timeout: secs(defaults::BODY_READ_TIMEOUT_SECS),
            body_read_deadline: secs(defaults::BODY_READ_DEADLINE_SECS),
            statement_timeout: millis_or_off(defaults::STATEMENT_TIMEOUT_MS),
            visitor_message_rate: MessageRate::parse(defaults::VISITOR_MESSAGE_RATE)
                .expect("the default visitor message rate parses (unit test)"),
            socket_frame_rate: MessageRate::parse(defaults::SOCKET_FRAME_RATE)
                .expect("the default socket frame rate parses (unit test)"),
            auth_failure_window: secs(defaults::AUTH_FAILURE_WINDOW_SECS),
            clock_offset: chrono::TimeDelta::zero(),
            retention: days(defaults::RETENTION_DAYS),
            job_retention: days(defaults::JOB_RETENTION_DAYS),
            chat_retention: None,
            retention_interval: secs(defaults::RETENTION_INTERVAL_SECS),
            idempotency_ttl: secs(defaults::IDEMPOTENCY_TTL_HOURS * 3600),
            max_attachment_bytes: defaults::MAX_ATTACHMENT_BYTES,
            max_visitor_attachment_bytes: defaults::MAX_VISITOR_ATTACHMENT_BYTES,
            attachment_orphan_age: secs(defaults::ATTACHMENT_ORPHAN_HOURS * 3600),
            visitor_orphan_age: secs(defaults::VISITOR_UPLOAD_LIFE_MINUTES * 60),
            visitor_session_upload_quota: defaults::VISITOR_SESSION_UPLOAD_QUOTA_BYTES,
            visitor_company_upload_quota: defaults::VISITOR_COMPANY_UPLOAD_QUOTA_BYTES,
            visitor_upload_rate: MessageRate::parse(defaults::VISITOR_UPLOAD_RATE)
                .expect("the default upload rate parses"),
            widget_session_rate: MessageRate::parse(defaults::WIDGET_SESSION_RATE)
                .expect("the default chat start rate parses"),
            widget_request_rate: MessageRate::parse(defaults::WIDGET_REQUEST_RATE)
                .expect("the default widget request rate parses"),
            s3: None,
            metrics_bind: None,
            visitor_token_ttl: minutes(defaults::VISITOR_TOKEN_TTL_MINUTES),
            visitor_closed_write: minutes(defaults::VISITOR_CLOSED_WRITE_MINUTES),
            trusted_proxies: TrustedProxies::default(),
        }
    }

    /// The base URL for links, e.g. `http://127.0.0.1:8080`.
    pub fn public_url(&self, bound_port: u16) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => local_url(&self.bind, bound_port),
        }
    }
}

/// `http://host:port` for a bind address (a wildcard host becomes loopback).
pub fn local_url(bind: &str, bound_port: u16) -> String {
    let host = bind.rsplit_once(':').map(|(h, _)| h).unwrap_or("127.0.0.1");
    let host = if host == "0.0.0.0" || host.is_empty() {
        "127.0.0.1"
    } else {
        host
    };
    format!("http://{host}:{bound_port}")
}

/// Parses `60,300,1800` (seconds) into durations.
pub fn parse_delays(text: &str) -> anyhow::Result<Vec<Duration>> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<f64>()
                .ok()
                .filter(|v| *v >= 0.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| anyhow::anyhow!("invalid delay {s:?} in webhook retry delays"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_retry_delays_parse() {
        let delays = parse_delays(defaults::WEBHOOK_RETRY_DELAYS).expect("parses");
        assert_eq!(delays, [60, 300, 1800, 7200].map(Duration::from_secs));
    }

    #[test]
    fn message_rates_parse_as_count_per_seconds() {
        let default = MessageRate::parse(defaults::VISITOR_MESSAGE_RATE).expect("parses");
        assert_eq!(
            (default.limit, default.window),
            (20, Duration::from_secs(20))
        );
        assert_eq!(
            MessageRate::parse("5/2").expect("parses").window,
            Duration::from_secs(2)
        );
        for bad in ["", "20", "0/20s", "20/0s", "x/20s", "20/-1s"] {
            assert!(MessageRate::parse(bad).is_err(), "{bad:?}");
        }
    }
}
