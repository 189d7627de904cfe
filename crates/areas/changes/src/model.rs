//! The feed's read side: the opaque cursor that names a position in a
//! tenant's feed. The record types and ops are the write side's
//! (`events::change`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

pub use crate::events::{Op, RecordType};

/// A position in a tenant's feed: the number of the last entry read. The
/// text form is opaque to clients so the numbering may change later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor(pub i64);

const CURSOR_PREFIX: &str = "c1.";

impl Cursor {
    pub fn encode(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{}", self.0))
    }

    /// The cursor `text` names, or None for anything `encode` did not make.
    pub fn decode(text: &str) -> Option<Cursor> {
        let bytes = URL_SAFE_NO_PAD.decode(text.trim()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let number = text.strip_prefix(CURSOR_PREFIX)?;
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        number.parse::<i64>().ok().map(Cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_itself() {
        for seq in [0, 1, 42, i64::MAX] {
            assert_eq!(Cursor::decode(&Cursor(seq).encode()), Some(Cursor(seq)));
        }
    }

    #[test]
    fn garbage_is_not_a_cursor() {
        for text in ["", "abc", "42", "YzEu", "YzEuLTE", "%%%"] {
            assert_eq!(Cursor::decode(text), None, "{text:?}");
        }
    }
}
