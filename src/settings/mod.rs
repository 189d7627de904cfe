//! Company settings: the company profile (`GET/PATCH /settings`), shared by
//! both modes, and the escalation rules of the key's mode
//! (`/settings/escalation-rules`, rules themselves in `tickets::rules`).

pub mod retention;
pub mod routes;
pub(crate) mod rules;
pub mod store;

pub use store::CompanySettings;

/// The timezone of a company that never set one.
pub const DEFAULT_TIMEZONE: &str = "UTC";

/// The areas of IANA time zone names (`Area/Location`).
const TZ_AREAS: &[&str] = &[
    "Africa",
    "America",
    "Antarctica",
    "Arctic",
    "Asia",
    "Atlantic",
    "Australia",
    "Brazil",
    "Canada",
    "Chile",
    "Etc",
    "Europe",
    "Indian",
    "Mexico",
    "Pacific",
    "US",
];

/// Whether `name` looks like an IANA time zone name: `UTC`, a single
/// legacy name (`EST5EDT`, `Japan`), or `Area/Location[/Sub]` with a known
/// area. The service holds no tz database, so a well-formed but unknown
/// location (`Europe/Atlantis`) passes: this catches offsets, typos in
/// the area, and free text.
pub fn is_plausible_timezone(name: &str) -> bool {
    let segments: Vec<&str> = name.split('/').collect();
    let well_formed = |segment: &str| {
        segment.len() <= 30
            && segment.starts_with(|c: char| c.is_ascii_uppercase())
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'))
    };
    segments.len() <= 3
        && segments.iter().all(|s| well_formed(s))
        && (segments.len() == 1 || TZ_AREAS.contains(&segments[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timezones_are_checked_for_shape() {
        for good in [
            "UTC",
            "Europe/Paris",
            "America/Argentina/Buenos_Aires",
            "America/Port-au-Prince",
            "Etc/GMT+5",
            "EST5EDT",
        ] {
            assert!(is_plausible_timezone(good), "{good}");
        }
        for bad in [
            "",
            "utc",
            "+02:00",
            "Europe/",
            "Mars/Olympus_Mons",
            "Europe/Paris ",
            "Europe//Paris",
            "A/B/C/D",
            "Paris, France",
        ] {
            assert!(!is_plausible_timezone(bad), "{bad}");
        }
    }
}
