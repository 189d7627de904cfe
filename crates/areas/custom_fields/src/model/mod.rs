//! What a custom field definition is and what its values may be. Pure: the
//! callers load the definitions and hand them in.

mod filter;
mod values;

pub use filter::{FieldCondition, FieldFilter, FilterValue, Operator, field_filter, json_filter};
pub use values::{FieldChange, FieldPatch, FieldValues, check_values, merge, without_agent_only};

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::error::FieldError;
use crate::time::Timestamp;
use crate::validate::problem;

/// Most definitions a company has in one mode.
pub const DEFINITIONS_MAX: usize = 100;
/// Longest `text` value, in characters.
pub const TEXT_VALUE_MAX: usize = 1_000;
/// Most options of a select field, and the longest option.
pub const OPTIONS_MAX: usize = 100;
pub const OPTION_MAX: usize = 100;
/// Longest key.
pub const KEY_MAX: usize = 40;

crate::text_enum! {
    /// The type of a custom field's values.
    pub enum FieldType {
        Text = "text",
        Number = "number",
        Boolean = "boolean",
        Date = "date",
        Datetime = "datetime",
        Select = "select",
        Multiselect = "multiselect",
    }
}

impl FieldType {
    /// Whether values are picked from the definition's options.
    pub fn has_options(self) -> bool {
        matches!(self, FieldType::Select | FieldType::Multiselect)
    }
}

crate::text_enum! {
    /// The kinds of record a field applies to.
    pub enum RecordKind {
        Ticket = "ticket",
        Chat = "chat",
    }
}

/// A custom field of the company (in the key's mode).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[schema(as = CustomField)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// `[a-z][a-z0-9_]{0,39}`; names the value in `customFields`; immutable.
    pub key: String,
    pub label: String,
    /// `text`, `number`, `boolean`, `date`, `datetime`, `select` or
    /// `multiselect`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub field_type: FieldType,
    /// `ticket` and / or `chat`.
    #[schema(value_type = Vec<String>)]
    pub applies_to: Vec<RecordKind>,
    /// The allowed values of a select or multiselect field (empty otherwise).
    pub options: Vec<String>,
    /// A record must carry a value: on create, and no PATCH may clear it.
    pub required: bool,
    /// Visitors may set it when they start a chat through the widget.
    pub visitor_writable: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Definition {
    pub fn applies_to(&self, kind: RecordKind) -> bool {
        self.applies_to.contains(&kind)
    }
}

/// The definitions of `kind`'s records among `all`.
pub fn applying(all: &[Definition], kind: RecordKind) -> Vec<&Definition> {
    all.iter().filter(|d| d.applies_to(kind)).collect()
}

/// A key: `[a-z][a-z0-9_]{0,39}`.
pub fn check_key(field: &str, raw: &str) -> Result<String, FieldError> {
    let mut chars = raw.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if first_ok && rest_ok && raw.len() <= KEY_MAX {
        Ok(raw.to_string())
    } else {
        Err(problem(
            field,
            "must be a lower-case letter then up to 39 lower-case letters, digits or '_'",
        ))
    }
}

/// `appliesTo`: a non-empty array of `ticket` / `chat`, as a sorted set.
pub fn check_applies_to(value: &Value) -> Result<Vec<RecordKind>, FieldError> {
    const SHAPE: &str = "must be a non-empty array of \"ticket\" and / or \"chat\"";
    let Value::Array(items) = value else {
        return Err(problem("appliesTo", SHAPE));
    };
    let mut kinds = BTreeSet::new();
    for item in items {
        match item.as_str().map(str::parse::<RecordKind>) {
            Some(Ok(kind)) => {
                kinds.insert(kind.as_str());
            }
            _ => return Err(problem("appliesTo", SHAPE)),
        }
    }
    if kinds.is_empty() {
        return Err(problem("appliesTo", SHAPE));
    }
    Ok(kinds.into_iter().filter_map(|k| k.parse().ok()).collect())
}

/// `options` for a field of `field_type`: required (non-empty, distinct,
/// 1–100 characters each, at most 100) for select types, refused otherwise.
pub fn check_options(
    field_type: FieldType,
    value: Option<&Value>,
) -> Result<Vec<String>, FieldError> {
    let given = value.filter(|v| !v.is_null());
    if !field_type.has_options() {
        return match given {
            None => Ok(Vec::new()),
            Some(_) => Err(problem(
                "options",
                "only select and multiselect fields have options",
            )),
        };
    }
    let shape = format!(
        "must be a non-empty array of distinct strings of 1-{OPTION_MAX} characters, \
         at most {OPTIONS_MAX}"
    );
    let Some(Value::Array(items)) = given else {
        return Err(problem("options", shape));
    };
    let mut options = Vec::new();
    for item in items {
        let Some(option) = item.as_str().map(str::trim) else {
            return Err(problem("options", shape));
        };
        let length = option.chars().count();
        if length == 0 || length > OPTION_MAX || options.iter().any(|o| o == option) {
            return Err(problem("options", shape));
        }
        options.push(option.to_string());
    }
    if options.is_empty() || options.len() > OPTIONS_MAX {
        return Err(problem("options", shape));
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_lower_case_identifiers() {
        for good in ["a", "order_id", "x9", &format!("a{}", "b".repeat(39))] {
            assert!(check_key("key", good).is_ok(), "{good}");
        }
        for bad in ["", "9a", "_a", "Order", "a-b", "a b", &"a".repeat(41)] {
            assert!(check_key("key", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn options_belong_to_select_types_only() {
        assert_eq!(
            check_options(FieldType::Select, Some(&json!(["a", "b"]))).unwrap(),
            ["a", "b"]
        );
        assert!(check_options(FieldType::Select, None).is_err());
        assert!(check_options(FieldType::Select, Some(&json!([]))).is_err());
        assert!(check_options(FieldType::Multiselect, Some(&json!(["a", "a"]))).is_err());
        assert!(check_options(FieldType::Text, Some(&json!(["a"]))).is_err());
        assert!(check_options(FieldType::Number, None).unwrap().is_empty());
    }

    #[test]
    fn applies_to_is_a_set_of_kinds() {
        assert_eq!(
            check_applies_to(&json!(["chat", "ticket", "chat"])).unwrap(),
            [RecordKind::Chat, RecordKind::Ticket]
        );
        assert!(check_applies_to(&json!([])).is_err());
        assert!(check_applies_to(&json!(["email"])).is_err());
    }
}
