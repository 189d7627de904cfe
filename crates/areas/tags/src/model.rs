//! What a tag is: trimmed, lower-cased, 1–50 letters, digits, `-`, `_`,
//! `:` or `.`; at most 50 on one record; a set (duplicates collapse).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::error::FieldError;
use crate::validate::problem;

/// Longest tag, in characters.
pub const TAG_MAX: usize = 50;
/// Most tags one record may carry.
pub const TAGS_PER_RECORD: usize = 50;

const SHAPE: &str = "1-50 letters, digits, '-', '_', ':' or '.'";

/// `raw` trimmed and lower-cased, or why it is not a tag.
pub fn normalize(raw: &str) -> Result<String, String> {
    let tag = raw.trim().to_lowercase();
    let allowed = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.');
    let length = tag.chars().count();
    if length == 0 || length > TAG_MAX || !tag.chars().all(allowed) {
        return Err(format!("{raw:?} is not a tag: {SHAPE}"));
    }
    Ok(tag)
}

/// A JSON array of tags as the sorted set it names; `field` is how the
/// request spells it. At most `TAGS_PER_RECORD` distinct tags.
pub fn tag_set(field: &str, value: &Value) -> Result<Vec<String>, FieldError> {
    let Value::Array(items) = value else {
        return Err(problem(field, "must be an array of strings"));
    };
    let mut tags = BTreeSet::new();
    for item in items {
        let Value::String(raw) = item else {
            return Err(problem(field, "must be an array of strings"));
        };
        tags.insert(normalize(raw).map_err(|message| problem(field, message))?);
    }
    if tags.len() > TAGS_PER_RECORD {
        return Err(too_many(field));
    }
    Ok(tags.into_iter().collect())
}

/// An optional `tags` field: absent (or null) is the empty set.
pub fn optional_tag_set(field: &str, value: Option<&Value>) -> Result<Vec<String>, FieldError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(value) => tag_set(field, value),
    }
}

/// The problem of a record that would carry more than `TAGS_PER_RECORD`.
pub fn too_many(field: &str) -> FieldError {
    problem(
        field,
        format!("a record carries at most {TAGS_PER_RECORD} tags"),
    )
}

/// `POST …/tags`: tags to add and tags to remove, disjoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagEdit {
    pub add: Vec<String>,
    pub remove: Vec<String>,
}

/// What a change did to a record's tags, each list sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TagChange {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl TagChange {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }

    /// What replacing the sorted set `current` by the sorted set `wanted`
    /// adds and removes.
    pub fn between(current: &[String], wanted: &[String]) -> TagChange {
        TagChange {
            added: wanted
                .iter()
                .filter(|t| !current.contains(t))
                .cloned()
                .collect(),
            removed: current
                .iter()
                .filter(|t| !wanted.contains(t))
                .cloned()
                .collect(),
        }
    }
}

/// List filters: records carrying every tag of `all` and, when `any` is
/// not empty, at least one of `any`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagFilter {
    pub all: Vec<String>,
    pub any: Vec<String>,
}

impl TagFilter {
    pub fn is_empty(&self) -> bool {
        self.all.is_empty() && self.any.is_empty()
    }

    /// Every tag of the filter, in the order its SQL binds them.
    pub fn values(&self) -> impl Iterator<Item = &String> {
        self.all.iter().chain(&self.any)
    }
}

/// The tag filters of a raw query string: `tag` (all of) and `anyTag`
/// (one of), each repeatable and comma-separated, normalised like tags;
/// empty pieces are skipped. Parsed from the raw string because the
/// structured query extractor cannot read a repeated key.
pub fn tag_filter(raw_query: Option<&str>) -> Result<TagFilter, Vec<FieldError>> {
    let mut all = BTreeSet::new();
    let mut any = BTreeSet::new();
    let mut problems = Vec::new();
    let pairs = form_urlencoded::parse(raw_query.unwrap_or_default().as_bytes());
    for (key, value) in pairs {
        let (field, into) = match key.as_ref() {
            "tag" => ("tag", &mut all),
            "anyTag" => ("anyTag", &mut any),
            _ => continue,
        };
        for piece in value.split(',').filter(|p| !p.trim().is_empty()) {
            match normalize(piece) {
                Ok(tag) => {
                    into.insert(tag);
                }
                Err(message) => problems.push(problem(field, message)),
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(TagFilter {
        all: all.into_iter().collect(),
        any: any.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_are_trimmed_lower_cased_and_collapse() {
        let tags = tag_set("tags", &json!([" VIP ", "vip", "Billing:EU", "a.b_c-d"])).unwrap();
        assert_eq!(tags, ["a.b_c-d", "billing:eu", "vip"]);
    }

    #[test]
    fn bad_tags_name_the_field() {
        for bad in [
            json!(["a b"]),
            json!([""]),
            json!(["x".repeat(51)]),
            json!([1]),
            json!("vip"),
        ] {
            assert_eq!(tag_set("add", &bad).unwrap_err().field, "add", "{bad}");
        }
        let fifty_one: Vec<String> = (0..51).map(|i| format!("t{i}")).collect();
        assert!(tag_set("tags", &json!(fifty_one)).is_err());
    }

    #[test]
    fn filters_read_repeated_and_comma_separated_values() {
        let filter = tag_filter(Some("tag=VIP&tag=billing,eu&anyTag=a,,b&status=OPEN")).unwrap();
        assert_eq!(filter.all, ["billing", "eu", "vip"]);
        assert_eq!(filter.any, ["a", "b"]);
        assert_eq!(
            tag_filter(Some("anyTag=a%20b")).unwrap_err()[0].field,
            "anyTag"
        );
    }

    #[test]
    fn a_replacement_adds_and_removes_the_difference() {
        let current = ["a".to_string(), "b".to_string()];
        let wanted = ["b".to_string(), "c".to_string()];
        let change = TagChange::between(&current, &wanted);
        assert_eq!(change.added, ["c"]);
        assert_eq!(change.removed, ["a"]);
    }
}
