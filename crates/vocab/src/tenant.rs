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

/// The data partition a request may touch: one company, one mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tenant {
    pub company_id: Uuid,
    pub mode: Mode,
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
