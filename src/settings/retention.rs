//! A company's data retention (`dataRetention` in `/settings`): how many
//! days it keeps closed tickets, closed chats, and contacts with nothing
//! left (no ticket, no chat). The retention pass deletes what is older
//! (`retention::policies`); `GET /settings/retention` counts what its
//! next run would delete.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::FieldError;
use crate::validate::{Patch, problem};

/// The settings key the policy is kept under.
pub const DATA_RETENTION: &str = "dataRetention";

/// The longest retention: a hundred years.
pub const RETENTION_DAYS_MAX: u64 = 36_500;

/// Days a company keeps each kind of record; `None` keeps it for ever
/// (the default).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataRetention {
    /// A CLOSED ticket is deleted (with its comments and files) this many
    /// days after its last change.
    #[schema(minimum = 1, maximum = 36500)]
    pub closed_tickets_days: Option<u32>,
    /// A closed chat is deleted (with its messages and files) this many
    /// days after it closed.
    #[schema(minimum = 1, maximum = 36500)]
    pub closed_chats_days: Option<u32>,
    /// A contact with no ticket and no chat left is deleted this many days
    /// after its last change.
    #[schema(minimum = 1, maximum = 36500)]
    pub contacts_days: Option<u32>,
}

impl DataRetention {
    /// Whether it deletes nothing.
    pub fn keeps_everything(&self) -> bool {
        self.closed_tickets_days.is_none()
            && self.closed_chats_days.is_none()
            && self.contacts_days.is_none()
    }

    /// The policy kept in a company's `settings` object; the default when
    /// none is (or it cannot be read).
    pub fn of_settings(settings: &Map<String, Value>) -> DataRetention {
        settings
            .get(DATA_RETENTION)
            .and_then(|value| serde_json::from_value(value.clone()).ok())
            .unwrap_or_default()
    }

    /// This policy with `patch` applied.
    pub fn patched(self, patch: &RetentionPatch) -> DataRetention {
        DataRetention {
            closed_tickets_days: patch
                .closed_tickets_days
                .unwrap_or(self.closed_tickets_days),
            closed_chats_days: patch.closed_chats_days.unwrap_or(self.closed_chats_days),
            contacts_days: patch.contacts_days.unwrap_or(self.contacts_days),
        }
    }
}

/// A PATCH of the policy: `None` keeps a value, `Some(None)` keeps that
/// kind of record for ever.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetentionPatch {
    pub closed_tickets_days: Option<Option<u32>>,
    pub closed_chats_days: Option<Option<u32>>,
    pub contacts_days: Option<Option<u32>>,
}

/// The keys of `dataRetention`, as the request names them.
const KEYS: [&str; 3] = ["closedTicketsDays", "closedChatsDays", "contactsDays"];

/// `dataRetention` of a PATCH: absent (kept), or an object whose keys
/// (each optional) are a whole number of days from 1 to
/// `RETENTION_DAYS_MAX` or null. Null for the whole object is refused:
/// it would read as "keep everything" or as "change nothing".
pub fn parse_patch(value: &Patch<Value>) -> Result<Option<RetentionPatch>, FieldError> {
    let object = match value {
        Patch::Missing => return Ok(None),
        Patch::Null => {
            return Err(problem(
                DATA_RETENTION,
                "must be an object; set a key to null to keep those records",
            ));
        }
        Patch::Value(Value::Object(object)) => object,
        Patch::Value(_) => return Err(problem(DATA_RETENTION, "must be an object")),
    };
    if let Some(unknown) = object.keys().find(|key| !KEYS.contains(&key.as_str())) {
        return Err(problem(
            &format!("{DATA_RETENTION}.{unknown}"),
            format!("is not a retention; use {}", KEYS.join(", ")),
        ));
    }
    let days = |key: &str| -> Result<Option<Option<u32>>, FieldError> {
        match object.get(key) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(raw) => match raw.as_u64() {
                Some(days @ 1..=RETENTION_DAYS_MAX) => Ok(Some(u32::try_from(days).ok())),
                _ => Err(problem(
                    &format!("{DATA_RETENTION}.{key}"),
                    format!(
                        "must be a whole number of days from 1 to {RETENTION_DAYS_MAX}, or null"
                    ),
                )),
            },
        }
    };
    Ok(Some(RetentionPatch {
        closed_tickets_days: days(KEYS[0])?,
        closed_chats_days: days(KEYS[1])?,
        contacts_days: days(KEYS[2])?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(value: Value) -> Result<Option<RetentionPatch>, FieldError> {
        parse_patch(&Patch::Value(value))
    }

    #[test]
    fn a_key_left_out_is_kept_and_a_null_key_keeps_for_ever() {
        let patch = parsed(json!({"closedTicketsDays": 30, "contactsDays": null}))
            .expect("valid")
            .expect("given");
        let before = DataRetention {
            closed_tickets_days: None,
            closed_chats_days: Some(7),
            contacts_days: Some(400),
        };
        let after = before.patched(&patch);
        assert_eq!(
            after,
            DataRetention {
                closed_tickets_days: Some(30),
                closed_chats_days: Some(7),
                contacts_days: None,
            }
        );
    }

    #[test]
    fn zero_days_is_refused() {
        assert!(parsed(json!({"closedChatsDays": 0})).is_err());
    }

    #[test]
    fn an_unknown_key_is_refused() {
        assert!(parsed(json!({"ticketsDays": 3})).is_err());
    }
}
