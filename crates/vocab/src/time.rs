//! Timestamps as the API shows them: RFC 3339 UTC with milliseconds and `Z`.
//! Values are truncated to milliseconds before they are stored so that
//! SQLite (nanoseconds as text) and Postgres (microseconds) return the same.

use chrono::{DateTime, SubsecRound, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, sqlx::Type)]
#[sqlx(transparent)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    pub fn now() -> Self {
        Timestamp(Utc::now().trunc_subsecs(3))
    }

    pub fn from_datetime(value: DateTime<Utc>) -> Self {
        Timestamp(value.trunc_subsecs(3))
    }

    pub fn plus(self, duration: std::time::Duration) -> Self {
        let delta = chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX);
        Timestamp::from_datetime(self.0 + delta)
    }

    pub fn minus(self, duration: std::time::Duration) -> Self {
        let delta = chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX);
        Timestamp::from_datetime(
            self.0
                .checked_sub_signed(delta)
                .unwrap_or(DateTime::<Utc>::MIN_UTC),
        )
    }

    pub fn to_rfc3339(&self) -> String {
        let mut buf = [0u8; RFC3339_LEN];
        match self.write_rfc3339(&mut buf) {
            Some(text) => text.to_string(),
            None => self.0.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` written digit by digit into `buf`: every
    /// entity carries a few timestamps, and chrono's general formatter
    /// (parsing the format string, a `String` per value) cost about five
    /// times as much per timestamp in a profile of a one-row read. `None`
    /// for what this fixed layout cannot show (years past 9999 or before
    /// year 0, a leap second), which `to_rfc3339` hands to chrono.
    fn write_rfc3339<'b>(&self, buf: &'b mut [u8; RFC3339_LEN]) -> Option<&'b str> {
        use chrono::{Datelike, Timelike};
        let t = self.0;
        let year = u32::try_from(t.year()).ok().filter(|y| *y <= 9999)?;
        let millis = t.nanosecond() / 1_000_000;
        if millis >= 1000 {
            return None;
        }
        let fields: [(usize, u32, usize); 7] = [
            (0, year, 4),
            (5, t.month(), 2),
            (8, t.day(), 2),
            (11, t.hour(), 2),
            (14, t.minute(), 2),
            (17, t.second(), 2),
            (20, millis, 3),
        ];
        for (at, value, width) in fields {
            let mut value = value;
            for slot in buf[at..at + width].iter_mut().rev() {
                *slot = b'0' + (value % 10) as u8;
                value /= 10;
            }
        }
        for (at, separator) in [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'.'),
            (23, b'Z'),
        ] {
            buf[at] = separator;
        }
        std::str::from_utf8(buf).ok()
    }
}

/// `2026-11-24T17:22:14.123Z`.
const RFC3339_LEN: usize = 24;

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf = [0u8; RFC3339_LEN];
        match self.write_rfc3339(&mut buf) {
            Some(text) => f.write_str(text),
            None => f.write_str(&self.to_rfc3339()),
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; RFC3339_LEN];
        match self.write_rfc3339(&mut buf) {
            Some(text) => serializer.serialize_str(text),
            None => serializer.serialize_str(&self.to_rfc3339()),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| Timestamp::from_datetime(t.with_timezone(&Utc)))
            .map_err(serde::de::Error::custom)
    }
}

/// This node's wall clock: the system clock plus an offset, zero in
/// production. Tests give a node an offset to play one whose clock is off,
/// and move it forward (`advance`) to play time passing without sleeping:
/// clones share the offset, so moving the app state's clock moves every
/// part of the node that reads it (the SLA scheduler's "now" among them).
/// Work shared between nodes (leases) is ordered by the database's clock
/// instead (`db::Backend::now_sql`).
///
/// Deadlines kept in process (a rate-limit lease, a presence TTL) are
/// measured on the monotonic clock, which `instant` reads moved forward by
/// what `advance` added, so a test moves those too; a node's configured
/// offset plays a wrong wall clock and leaves them alone.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_ms: std::sync::Arc<std::sync::atomic::AtomicI64>,
    /// What `advance` added in all (part of `offset_ms`).
    advanced_ms: std::sync::Arc<std::sync::atomic::AtomicI64>,
    /// The system time `freeze` stopped this clock at, in milliseconds
    /// since the epoch; zero while it runs (as it always does outside
    /// tests).
    frozen_at_ms: std::sync::Arc<std::sync::atomic::AtomicI64>,
}

impl Clock {
    pub fn offset_by(offset: chrono::TimeDelta) -> Self {
        Clock {
            offset_ms: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(
                offset.num_milliseconds(),
            )),
            advanced_ms: std::sync::Arc::default(),
            frozen_at_ms: std::sync::Arc::default(),
        }
    }

    /// Stops this clock (and its clones) at the present moment: `now`
    /// answers the same instant until `advance` moves it, so a test can
    /// assert a time the service computed from "now" exactly. A fake clock
    /// for tests; the monotonic `instant` runs on.
    pub fn freeze(&self) {
        let now = Utc::now().timestamp_millis();
        self.frozen_at_ms
            .store(now, std::sync::atomic::Ordering::SeqCst);
    }

    /// Moves this clock (and its clones) `by` forward; a fake clock for
    /// tests.
    pub fn advance(&self, by: chrono::TimeDelta) {
        let ms = by.num_milliseconds();
        self.offset_ms
            .fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
        self.advanced_ms
            .fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
    }

    /// How far `advance` has moved this clock: zero outside tests. Added
    /// to a shared clock this node reads (Redis's) where a node's own
    /// deadline is kept in it.
    pub fn advanced(&self) -> std::time::Duration {
        let ms = self.advanced_ms.load(std::sync::atomic::Ordering::SeqCst);
        std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0))
    }

    /// The monotonic clock, moved forward by `advanced`.
    pub fn instant(&self) -> std::time::Instant {
        let now = std::time::Instant::now();
        now.checked_add(self.advanced()).unwrap_or(now)
    }

    pub fn now(&self) -> Timestamp {
        let frozen_at = self.frozen_at_ms.load(std::sync::atomic::Ordering::SeqCst);
        let now = match frozen_at {
            0 => Utc::now(),
            ms => DateTime::from_timestamp_millis(ms).unwrap_or_else(Utc::now),
        };
        let offset = chrono::TimeDelta::milliseconds(
            self.offset_ms.load(std::sync::atomic::Ordering::SeqCst),
        );
        Timestamp::from_datetime(now.checked_add_signed(offset).unwrap_or(now))
    }
}

/// A new time-ordered id (UUIDv7).
pub fn new_id() -> uuid::Uuid {
    uuid::Uuid::now_v7()
}

/// Parses a duration written `30d`, `12h`, `15m` or `45s` (CLI flags and
/// the keys API's `expiresIn`).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text.len().saturating_sub(1);
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: use e.g. 30d, 12h, 15m, 45s"))?;
    let seconds = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => {
            return Err(format!(
                "invalid duration unit in {text:?}: use s, m, h or d"
            ));
        }
    };
    Ok(std::time::Duration::from_secs(seconds))
}

/// Runs `pass` every `period` (the first at `first`) until shutdown, one at
/// a time: a pass that outlasts the period delays the next rather than
/// overlapping it, and shutdown drops a pass midway (its open transaction
/// rolls back).
pub fn every<F, Fut>(
    mut shutdown: tokio::sync::watch::Receiver<bool>,
    first: tokio::time::Instant,
    period: std::time::Duration,
    mut pass: F,
) -> tokio::task::JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval_at(first, period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                _ = shutdown.wait_for(|stop| *stop) => break,
            }
            tokio::select! {
                () = pass() => {}
                _ = shutdown.wait_for(|stop| *stop) => break,
            }
        }
    })
}

// The OpenAPI schema of a timestamp: the type is the vocabulary's, so its
// schema is written here (the orphan rule keeps it out of the openapi module).
impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::DateTime,
            )))
            .description(Some("RFC 3339, UTC, milliseconds"))
            .examples(["2026-11-21T10:04:05.123Z"])
            .into()
    }
}

impl utoipa::ToSchema for Timestamp {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds_and_z() {
        let t = Timestamp::from_datetime(
            DateTime::parse_from_rfc3339("2026-11-21T10:04:05.123456Z")
                .expect("valid")
                .with_timezone(&Utc),
        );
        assert_eq!(t.to_rfc3339(), "2026-11-21T10:04:05.123Z");
    }

    fn utc(text: &str) -> Timestamp {
        Timestamp(
            DateTime::parse_from_rfc3339(text)
                .expect("valid")
                .with_timezone(&Utc),
        )
    }

    #[test]
    fn small_fields_are_padded_with_zeros() {
        assert_eq!(
            utc("0042-01-02T03:04:05.006Z").to_rfc3339(),
            "0042-01-02T03:04:05.006Z"
        );
    }

    #[test]
    fn serialised_as_chrono_formats_it() {
        let mut t = utc("1970-01-01T00:00:00Z").0;
        for _ in 0..2_000 {
            t += chrono::TimeDelta::milliseconds(987_654_321_987);
            let expected = t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
            let json = serde_json::to_string(&Timestamp(t)).expect("serialises");
            assert_eq!(json, format!("\"{expected}\""));
        }
    }

    #[test]
    fn a_year_past_9999_falls_back_to_chrono() {
        let t = utc("9999-12-31T23:59:59.999Z").0 + chrono::TimeDelta::days(1);
        assert_eq!(Timestamp(t).to_rfc3339(), "+10000-01-01T23:59:59.999Z");
    }

    #[test]
    fn a_leap_second_falls_back_to_chrono() {
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_milli_opt(23, 59, 59, 1_500))
            .expect("a leap second")
            .and_utc();
        assert_eq!(Timestamp(leap).to_string(), "2016-12-31T23:59:60.500Z");
    }

    #[test]
    fn an_advanced_clock_moves_its_clones() {
        let clock = Clock::default();
        let clone = clock.clone();
        clock.advance(chrono::TimeDelta::hours(2));
        assert!((clone.now().0 - Utc::now()).num_minutes() >= 119);
    }

    #[test]
    fn advancing_moves_the_monotonic_side_too() {
        let clock = Clock::default();
        let before = clock.instant();
        clock.clone().advance(chrono::TimeDelta::seconds(90));
        assert_eq!(clock.advanced(), std::time::Duration::from_secs(90));
        assert!(clock.instant().duration_since(before) >= std::time::Duration::from_secs(90));
    }

    #[test]
    fn a_frozen_clock_reads_one_instant_until_advanced() {
        let clock = Clock::default();
        clock.clone().freeze();
        let first = clock.now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(clock.now(), first);
        clock.advance(chrono::TimeDelta::minutes(3));
        assert_eq!((clock.now().0 - first.0), chrono::TimeDelta::minutes(3));
    }

    #[test]
    fn a_configured_offset_leaves_the_monotonic_side_alone() {
        let ahead = Clock::offset_by(chrono::TimeDelta::hours(1));
        assert_eq!(ahead.advanced(), std::time::Duration::ZERO);
        let now = std::time::Instant::now();
        assert!(ahead.instant().duration_since(now) < std::time::Duration::from_secs(60));
    }

    #[test]
    fn a_clock_ahead_reads_later_by_its_offset() {
        let ahead = Clock::offset_by(chrono::TimeDelta::seconds(30)).now();
        let behind = Clock::default().now();
        assert!((ahead.0 - behind.0).num_seconds() >= 29);
    }
}
