//! Logging: `RUST_LOG` filters, `LOG_FORMAT=json` for JSON lines. Every line
//! inside a request carries its `request_id` (the span set in app.rs).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    // Colours only for a terminal: a log file or journal would keep the
    // escape codes, and styling each request span's fields costs every
    // request.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let result = if json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.try_init()
    };
    // A second init (tests) keeps the first subscriber.
    let _ = result;
}
