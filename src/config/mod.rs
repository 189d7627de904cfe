//! Configuration from environment variables, each also a `serve` flag.
//! Timings that tests shorten are settings whose defaults are the documented values (docs/operations.md).

use std::path::PathBuf;
use std::time::Duration;

mod args;
pub mod defaults;

pub use args::ServeArgs;

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
    /// How often each node drains waiting chat queues and requeues the
    /// unanswered chats of agents who went away (`teams::routing`). Not a
    /// flag: a test that must see a queue move by an event alone (a closed
    /// chat, an agent coming online) sets it long, so the tick cannot.
    pub routing_tick: Duration,
    /// How long after a merge it can be undone.
    pub merge_undo: Duration,
    /// How long an agent's public reply is held (the undo window) before
    /// it is delivered: `tickets::delivery::delivery_at`.
    pub undo_send: Duration,
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
    /// How long an agent session lasts idle (`SUPPORTDESK_SESSION_IDLE_MINUTES`).
    pub session_idle: Duration,
    /// How long an agent session lasts at most (`SUPPORTDESK_SESSION_MAX_HOURS`).
    pub session_max: Duration,
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
            routing_tick: Duration::from_secs(defaults::ROUTING_TICK_SECS),
            merge_undo: Duration::from_secs(args.merge_undo_secs),
            undo_send: Duration::from_secs(args.undo_send_secs),
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
            session_idle: minutes(args.session_idle_minutes.max(1)),
            session_max: minutes(args.session_max_hours.max(1).saturating_mul(60)),
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
            routing_tick: secs(defaults::ROUTING_TICK_SECS),
            merge_undo: secs(defaults::MERGE_UNDO_SECS),
            undo_send: secs(defaults::UNDO_SEND_SECS),
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
            session_idle: minutes(defaults::SESSION_IDLE_MINUTES),
            session_max: minutes(defaults::SESSION_MAX_HOURS * 60),
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
