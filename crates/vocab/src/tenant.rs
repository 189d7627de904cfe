//! The data partition every request and every store statement is bound to:
//! one company, one mode.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::domain::UnknownValue;

/// TEST keys see only test data, LIVE keys only live data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Mode {
    Test,
    Live,
}

impl Mode {
    /// The value stored in `mode` columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Test => "test",
            Mode::Live => "live",
        }
    }

    /// The value shown in the API (`TEST`, `LIVE`).
    pub fn as_api(self) -> &'static str {
        match self {
            Mode::Test => "TEST",
            Mode::Live => "LIVE",
        }
    }

    pub fn parse(value: &str) -> Option<Mode> {
        match value.to_ascii_lowercase().as_str() {
            "test" => Some(Mode::Test),
            "live" => Some(Mode::Live),
            _ => None,
        }
    }

    /// The spellings of `mode` columns, in `ALL` order.
    pub const STORED: &'static [&'static str] = &["test", "live"];

    /// A `mode` column's value, spelt exactly as stored: anything else is
    /// a damaged row, never a mode to guess.
    pub fn from_stored(text: &str) -> Result<Mode, UnknownValue> {
        match text {
            "test" => Ok(Mode::Test),
            "live" => Ok(Mode::Live),
            _ => Err(UnknownValue {
                value: text.to_string(),
                allowed: Self::STORED,
            }),
        }
    }
}

// The API spells modes `TEST`/`LIVE` and the columns `test`/`live`, so Mode
// cannot use `text_enum!` (one spelling for both); its columns are decoded
// here with the stored spelling.
crate::decoded_from_text!(Mode, Mode::from_stored);

/// The data partition a request may touch: one company, one mode, and
/// within it the records its caller may see (`visibility`).
///
/// Two tenants are equal (and hash alike) when they are the same partition,
/// whatever their visibility: a cache, presence or a socket topic keyed by
/// the tenant is the partition's, and only the store statements that read
/// team-owned records narrow what they match by the visibility.
#[derive(Debug, Clone, Copy)]
pub struct Tenant {
    pub company_id: Uuid,
    pub mode: Mode,
    pub visibility: Visibility,
}

impl Tenant {
    /// The partition of `company_id` and `mode`, every record visible (the
    /// service's own work, a key, a visitor).
    pub fn new(company_id: Uuid, mode: Mode) -> Self {
        Tenant {
            company_id,
            mode,
            visibility: Visibility::All,
        }
    }

    /// Whether every record of the partition is visible to it.
    pub fn sees_all(&self) -> bool {
        self.visibility == Visibility::All
    }

    /// The same partition with every record visible: for the work a
    /// request sets off that is not the caller's reading (routing a ticket
    /// the caller moved into another team, answering with what a write
    /// left behind).
    pub fn whole(&self) -> Tenant {
        Tenant {
            visibility: Visibility::All,
            ..*self
        }
    }
}

impl PartialEq for Tenant {
    fn eq(&self, other: &Self) -> bool {
        self.company_id == other.company_id && self.mode == other.mode
    }
}

impl Eq for Tenant {}

impl std::hash::Hash for Tenant {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.company_id.hash(state);
        self.mode.hash(state);
    }
}

/// Which team-owned records (tickets, chats, and their comments, messages,
/// attachments and change-feed entries) a caller sees. Resolved once per
/// request when the caller is authenticated: an agent whose role has
/// `teamsOnly` sees only the records of the teams they are a member of; a
/// record in no team is not theirs either (see docs/api.md, "Roles").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// Every record of the partition.
    #[default]
    All,
    /// The records whose team has user `member` among its members. The
    /// membership is read by the statement itself, so a member added to or
    /// removed from a team sees the change with their next request.
    TeamsOf { member: Uuid },
}

#[cfg(test)]
mod tests {
    use super::Mode;

    #[test]
    fn stored_modes_read_back_only_in_their_column_spelling() {
        for mode in [Mode::Test, Mode::Live] {
            assert_eq!(Mode::from_stored(mode.as_str()), Ok(mode));
        }
        let err = Mode::from_stored("TEST").expect_err("the API spelling is not stored");
        assert_eq!(err.allowed, Mode::STORED);
    }
}
