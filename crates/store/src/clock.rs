//! The database's clock, as SQL. Times that order work between nodes
//! (leases, due times) are read and computed by the database, so nodes whose
//! clocks disagree still agree on which job is due and who holds it.
//!
//! Both expressions give milliseconds in the form timestamps bound from Rust
//! are stored in, so they compare with stored values and a value written by
//! one reads back equal to itself: Postgres truncates `now()` to
//! milliseconds; SQLite stores RFC 3339 text (`…T10:04:05.123+00:00`, no
//! fraction on a whole second), which `strftime` is made to match.

use super::Backend;

impl Backend {
    /// SQL for the database's current time.
    pub fn now_sql(self) -> &'static str {
        match self {
            Backend::Postgres => "date_trunc('milliseconds', now())",
            Backend::Sqlite => "replace(strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'), '.000+', '+')",
        }
    }

    /// SQL for the database's current time plus the number of milliseconds
    /// bound at `placeholder` (e.g. `$1`, an integer).
    pub fn now_plus_sql(self, placeholder: &str) -> String {
        match self {
            Backend::Postgres => format!(
                "date_trunc('milliseconds', now() + {placeholder} * interval '1 millisecond')"
            ),
            Backend::Sqlite => format!(
                "replace(strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now', \
                 ({placeholder} / 1000.0) || ' seconds'), '.000+', '+')"
            ),
        }
    }
}

/// Milliseconds of `duration` as a bind value (saturating).
pub fn millis(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
