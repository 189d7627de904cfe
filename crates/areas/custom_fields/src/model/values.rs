//! Values of custom fields on a record: checked and normalised against the
//! definitions, merged into the record's values by a PATCH.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Definition, FieldType, RecordKind, TEXT_VALUE_MAX};
use crate::error::FieldError;
use crate::time::Timestamp;
use crate::validate::problem;

/// A record's values, keyed by field key (sorted).
pub type FieldValues = Map<String, Value>;

/// What a create or PATCH sets: a normalised value, or `None` to clear.
pub type FieldPatch = BTreeMap<String, Option<Value>>;

/// One value that really changed; `None` is absent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    pub from: Option<Value>,
    pub to: Option<Value>,
}

/// The `customFields` of a request on a record of `kind`, checked against
/// the company's `definitions`: every key must name a field applying to
/// `kind` (and, for a `visitor`, one marked visitor-writable), every value
/// must fit its type; `null` clears a value, which a required field refuses.
/// On `create`, each required field must be given (for a visitor, each
/// required visitor-writable one: the others are the agents' to fill in).
/// Problems are on `customFields.<key>`.
pub fn check_values(
    definitions: &[Definition],
    kind: RecordKind,
    input: Option<&Value>,
    create: bool,
    visitor: bool,
) -> Result<FieldPatch, Vec<FieldError>> {
    let empty = Map::new();
    let given = match input {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => return Err(vec![problem("customFields", "must be an object")]),
    };
    let mut patch = FieldPatch::new();
    let mut problems = Vec::new();
    for (key, value) in given {
        let field = format!("customFields.{key}");
        let definition = definitions
            .iter()
            .find(|d| &d.key == key && d.applies_to(kind));
        let checked = match definition {
            None => Err(problem(
                &field,
                format!("no custom field {key:?} applies to a {kind}"),
            )),
            Some(d) if visitor && !d.visitor_writable => {
                Err(problem(&field, "visitors may not set this field"))
            }
            Some(d) if value.is_null() && d.required => Err(problem(&field, "is required")),
            Some(_) if value.is_null() => Ok(None),
            Some(d) => normalise(d, &field, value).map(Some),
        };
        match checked {
            Ok(value) => {
                patch.insert(key.clone(), value);
            }
            Err(err) => problems.push(err),
        }
    }
    if create {
        for d in definitions
            .iter()
            .filter(|d| d.applies_to(kind) && d.required)
        {
            // A required key given as null was reported above.
            if !given.contains_key(&d.key) && (!visitor || d.visitor_writable) {
                problems.push(problem(&format!("customFields.{}", d.key), "is required"));
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    if create {
        patch.retain(|_, value| value.is_some());
    }
    Ok(patch)
}

/// A visitor's `customFields` without the fields of `kind` that only
/// agents may set, and the keys left out (sorted). The widget's page sets
/// them once for every chat it starts (`setCustomFields`): one agent-only
/// key there must not refuse every chat from the page, so the key is
/// dropped (the widget warns in the browser's console) rather than
/// refused; unknown keys and bad values are still `check_values`' to refuse.
pub fn without_agent_only(
    definitions: &[Definition],
    kind: RecordKind,
    input: Option<&Value>,
) -> (Option<Value>, Vec<String>) {
    let Some(Value::Object(given)) = input else {
        return (input.cloned(), Vec::new());
    };
    let agent_only = |key: &String| {
        definitions
            .iter()
            .any(|d| &d.key == key && d.applies_to(kind) && !d.visitor_writable)
    };
    let (dropped, kept): (Map<String, Value>, Map<String, Value>) = given
        .clone()
        .into_iter()
        .partition(|(key, _)| agent_only(key));
    (Some(Value::Object(kept)), dropped.keys().cloned().collect())
}

/// `value` as `definition`'s type stores it: text as given, numbers as
/// given, dates `YYYY-MM-DD`, datetimes in UTC with milliseconds and `Z`,
/// a multiselect's options sorted and deduplicated.
fn normalise(definition: &Definition, field: &str, value: &Value) -> Result<Value, FieldError> {
    let bad = |what: &str| problem(field, format!("must be {what}"));
    match definition.field_type {
        FieldType::Text => match value.as_str() {
            Some(text) if text.chars().count() <= TEXT_VALUE_MAX => Ok(json!(text)),
            _ => Err(bad(&format!(
                "a string of at most {TEXT_VALUE_MAX} characters"
            ))),
        },
        FieldType::Number => match value {
            Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => Ok(value.clone()),
            _ => Err(bad("a number")),
        },
        FieldType::Boolean => match value {
            Value::Bool(_) => Ok(value.clone()),
            _ => Err(bad("true or false")),
        },
        FieldType::Date => value
            .as_str()
            .and_then(parse_date)
            .map(|date| json!(date))
            .ok_or_else(|| bad("a date YYYY-MM-DD")),
        FieldType::Datetime => value
            .as_str()
            .and_then(parse_datetime)
            .map(|at| json!(at))
            .ok_or_else(|| bad("an RFC 3339 date and time with a time zone")),
        FieldType::Select => match value.as_str() {
            Some(option) if definition.options.iter().any(|o| o == option) => Ok(json!(option)),
            _ => Err(bad(&format!("one of {:?}", definition.options))),
        },
        FieldType::Multiselect => {
            let what = format!("an array of options among {:?}", definition.options);
            let Value::Array(items) = value else {
                return Err(bad(&what));
            };
            let mut chosen = BTreeSet::new();
            for item in items {
                match item.as_str() {
                    Some(option) if definition.options.iter().any(|o| o == option) => {
                        chosen.insert(option.to_string());
                    }
                    _ => return Err(bad(&what)),
                }
            }
            Ok(json!(chosen))
        }
    }
}

/// `YYYY-MM-DD`, exactly.
pub(super) fn parse_date(text: &str) -> Option<String> {
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    let formatted = date.format("%Y-%m-%d").to_string();
    (formatted == text).then_some(formatted)
}

/// An RFC 3339 date and time, as UTC with milliseconds and `Z` (fixed
/// width, so its text order is its time order).
pub(super) fn parse_datetime(text: &str) -> Option<String> {
    let at = DateTime::parse_from_rfc3339(text).ok()?;
    let utc = Timestamp::from_datetime(at.with_timezone(&Utc)).to_rfc3339();
    // Years beyond 9999 or before 0 would break the fixed width.
    (utc.len() == "2026-01-01T00:00:00.000Z".len()).then_some(utc)
}

/// `current` with `patch` applied, and what really changed (a value set
/// to what it was is no change).
pub fn merge(
    current: &FieldValues,
    patch: &FieldPatch,
) -> (FieldValues, BTreeMap<String, FieldChange>) {
    let mut merged = current.clone();
    let mut changes = BTreeMap::new();
    for (key, wanted) in patch {
        let before = current.get(key);
        if before == wanted.as_ref() {
            continue;
        }
        changes.insert(
            key.clone(),
            FieldChange {
                from: before.cloned(),
                to: wanted.clone(),
            },
        );
        match wanted {
            Some(value) => merged.insert(key.clone(), value.clone()),
            None => merged.remove(key),
        };
    }
    (merged, changes)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn definition(key: &str, field_type: FieldType) -> Definition {
        Definition {
            key: key.into(),
            label: key.into(),
            field_type,
            applies_to: vec![RecordKind::Ticket],
            options: if field_type.has_options() {
                vec!["basic".into(), "pro".into()]
            } else {
                Vec::new()
            },
            required: false,
            visitor_writable: false,
            created_at: Timestamp::now(),
            updated_at: Timestamp::now(),
        }
    }

    fn check(d: &Definition, value: Value) -> Result<FieldPatch, Vec<FieldError>> {
        check_values(
            std::slice::from_ref(d),
            RecordKind::Ticket,
            Some(&json!({ d.key.clone(): value })),
            false,
            false,
        )
    }

    #[test]
    fn each_type_accepts_its_values_normalised() {
        let cases = [
            (FieldType::Text, json!("A-123"), json!("A-123")),
            (FieldType::Number, json!(12.5), json!(12.5)),
            (FieldType::Boolean, json!(true), json!(true)),
            (FieldType::Date, json!("2026-12-31"), json!("2026-12-31")),
            (
                FieldType::Datetime,
                json!("2026-11-24T02:00:00+02:00"),
                json!("2026-11-24T00:00:00.000Z"),
            ),
            (FieldType::Select, json!("pro"), json!("pro")),
            (
                FieldType::Multiselect,
                json!(["pro", "basic", "pro"]),
                json!(["basic", "pro"]),
            ),
        ];
        for (field_type, given, stored) in cases {
            let d = definition("f", field_type);
            assert_eq!(check(&d, given).unwrap()["f"], Some(stored), "{field_type}");
        }
    }

    #[test]
    fn each_type_refuses_other_values() {
        let cases = [
            (FieldType::Text, json!("x".repeat(1_001))),
            (FieldType::Text, json!(1)),
            (FieldType::Number, json!("1")),
            (FieldType::Boolean, json!("true")),
            (FieldType::Date, json!("2026-2-3")),
            (FieldType::Date, json!("2026-02-30")),
            (FieldType::Datetime, json!("2026-11-24T02:00:00")),
            (FieldType::Select, json!("gold")),
            (FieldType::Multiselect, json!("pro")),
            (FieldType::Multiselect, json!(["gold"])),
        ];
        for (field_type, given) in cases {
            let d = definition("f", field_type);
            let problems = check(&d, given.clone()).unwrap_err();
            assert_eq!(problems[0].field, "customFields.f", "{field_type} {given}");
        }
    }

    #[test]
    fn required_fields_must_be_given_and_not_cleared() {
        let mut d = definition("plan", FieldType::Select);
        d.required = true;
        let defs = [d.clone()];
        let missing = check_values(&defs, RecordKind::Ticket, None, true, false).unwrap_err();
        assert_eq!(missing[0].field, "customFields.plan");
        assert!(check(&d, Value::Null).is_err());
        // A visitor is not asked for fields only agents may fill in.
        assert!(check_values(&defs, RecordKind::Ticket, None, true, true).is_ok());
    }

    #[test]
    fn unknown_keys_and_other_kinds_are_refused() {
        let d = definition("plan", FieldType::Text);
        let defs = [d];
        let unknown = json!({"other": "x"});
        assert!(check_values(&defs, RecordKind::Ticket, Some(&unknown), false, false).is_err());
        let chat = json!({"plan": "x"});
        assert!(check_values(&defs, RecordKind::Chat, Some(&chat), false, false).is_err());
    }

    #[test]
    fn a_visitors_agent_only_keys_are_left_out_and_named() {
        let mut writable = definition("cart", FieldType::Text);
        writable.applies_to = vec![RecordKind::Chat];
        writable.visitor_writable = true;
        let mut agents = definition("note", FieldType::Text);
        agents.applies_to = vec![RecordKind::Chat];
        let defs = [writable, agents];
        let given = json!({"cart": "c-1", "note": "VIP", "typo": "x"});
        let (kept, dropped) = without_agent_only(&defs, RecordKind::Chat, Some(&given));
        assert_eq!(kept, Some(json!({"cart": "c-1", "typo": "x"})));
        assert_eq!(dropped, vec!["note".to_string()]);
        let (kept, dropped) = without_agent_only(&defs, RecordKind::Chat, None);
        assert_eq!((kept, dropped), (None, Vec::new()));
    }

    #[test]
    fn a_merge_reports_only_real_changes() {
        let current: FieldValues = json!({"a": 1, "b": "x"}).as_object().unwrap().clone();
        let patch = FieldPatch::from([
            ("a".to_string(), Some(json!(1))),
            ("b".to_string(), None),
            ("c".to_string(), Some(json!(true))),
        ]);
        let (merged, changes) = merge(&current, &patch);
        assert_eq!(Value::Object(merged), json!({"a": 1, "c": true}));
        assert_eq!(changes.keys().collect::<Vec<_>>(), ["b", "c"]);
        assert_eq!(changes["b"].to, None);
    }
}
