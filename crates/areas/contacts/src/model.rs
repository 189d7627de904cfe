//! What a contact and an organisation are, and the checks that turn their
//! wire fields into values that cannot be wrong: emails lower-cased (a
//! match ignores case), domains bare and lower-cased, custom fields an
//! object of plain values.

use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::FieldError;
use crate::event_catalogue::{EventName, EventPayload};
use crate::time::Timestamp;
use crate::validate::{is_plausible_email, problem};

/// Emails a contact holds at most.
pub const EMAILS_MAX: usize = 20;
/// Domains an organisation holds at most.
pub const DOMAINS_MAX: usize = 20;
/// Custom fields a contact or an organisation holds at most.
pub const FIELDS_MAX: usize = 50;
pub const FIELD_KEY_MAX: usize = 64;
pub const FIELD_TEXT_MAX: usize = 1000;
pub const PHONE_MAX: usize = 64;
pub const NOTES_MAX: usize = 10_000;

/// One person the desk talks to.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    pub id: Uuid,
    pub name: Option<String>,
    /// Lower-cased, in the order given (merged ones after).
    pub emails: Vec<String>,
    pub phone: Option<String>,
    /// The customer's own user id from a verified widget identity (the
    /// first one the contact got).
    pub external_id: Option<String>,
    /// Every verified widget identity of the contact (a merge adds the
    /// merged contact's).
    pub external_ids: Vec<String>,
    pub organization_id: Option<Uuid>,
    /// The contact's own fields: string keys, string, number, boolean or
    /// null values.
    #[schema(value_type = Object)]
    pub custom_fields: Map<String, Value>,
    /// Sorted.
    pub tags: Vec<String>,
    pub notes: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A contact to create, checked.
#[derive(Debug, Clone, Default)]
pub struct NewContact {
    pub name: Option<String>,
    pub emails: Vec<String>,
    pub phone: Option<String>,
    pub external_id: Option<String>,
    /// None: the organisation of an email's domain, if any.
    pub organization_id: Option<Uuid>,
    pub custom_fields: Map<String, Value>,
    pub tags: Vec<String>,
    pub notes: Option<String>,
}

/// A PATCH of a contact: `None` keeps a field; `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct ContactChanges {
    pub name: Option<Option<String>>,
    /// Replaces the emails.
    pub emails: Option<Vec<String>>,
    pub phone: Option<Option<String>>,
    /// Replaces the identities with this one (or none).
    pub external_id: Option<Option<String>>,
    pub organization_id: Option<Option<Uuid>>,
    pub custom_fields: Option<Map<String, Value>>,
    pub tags: Option<Vec<String>>,
    pub notes: Option<Option<String>>,
}

/// A company the desk's contacts belong to.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    pub id: Uuid,
    pub name: String,
    /// Lower-cased; a contact with an email at one of them joins the
    /// organisation when it has none.
    pub domains: Vec<String>,
    #[schema(value_type = Object)]
    pub custom_fields: Map<String, Value>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Default)]
pub struct NewOrganization {
    pub name: String,
    pub domains: Vec<String>,
    pub custom_fields: Map<String, Value>,
}

#[derive(Debug, Clone, Default)]
pub struct OrganizationChanges {
    pub name: Option<String>,
    /// Replaces the domains.
    pub domains: Option<Vec<String>>,
    pub custom_fields: Option<Map<String, Value>>,
}

/// `contact.created`: the contact.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ContactCreated<'a>(pub &'a Contact);

impl EventPayload for ContactCreated<'_> {
    const NAME: EventName = EventName::ContactCreated;
}

/// `contact.merged`: the contact that remains, with everything it took
/// over, and the id of the one merged into it (which no longer exists).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContactMerged<'a> {
    pub contact: &'a Contact,
    pub merged_contact_id: Uuid,
}

impl EventPayload for ContactMerged<'_> {
    const NAME: EventName = EventName::ContactMerged;
}

/// `contact.erased`: the id of the contact whose data is gone; nothing
/// else, so the event names no one.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContactErased {
    pub contact_id: Uuid,
}

impl EventPayload for ContactErased {
    const NAME: EventName = EventName::ContactErased;
}

crate::text_enum! {
    /// What a data request does.
    pub enum JobKind {
        Export = "export",
        Erase = "erase",
    }
}

crate::text_enum! {
    /// Where a data request stands.
    pub enum JobState {
        Queued = "queued",
        Running = "running",
        Done = "done",
        Failed = "failed",
    }
}

/// A data request: an export or an erasure of one contact, run in the
/// background.
#[derive(Debug, Clone)]
pub struct DataJob {
    pub id: Uuid,
    pub contact_id: Uuid,
    pub kind: JobKind,
    pub state: JobState,
    /// Percent done.
    pub progress: i64,
    pub error: Option<String>,
    /// An export's archive waits for its one download.
    pub archive_ready: bool,
    pub downloaded_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// An email as contacts hold it: trimmed, lower-cased, plausible.
pub fn email(field: &str, raw: &str) -> Result<String, FieldError> {
    let email = raw.trim().to_lowercase();
    if email.chars().count() > 255 || !is_plausible_email(&email) {
        return Err(problem(field, "must hold valid email addresses"));
    }
    Ok(email)
}

/// The domain of a checked email.
pub fn domain_of(email: &str) -> &str {
    email.rsplit_once('@').map_or("", |(_, domain)| domain)
}

/// `emails`: an array of distinct addresses (case ignored), at most
/// `EMAILS_MAX`, kept in the order given.
pub fn emails(field: &str, value: &Value) -> Result<Vec<String>, FieldError> {
    let list = strings(field, value, EMAILS_MAX, "email addresses")?;
    let mut emails: Vec<String> = Vec::new();
    for raw in list {
        let email = email(field, raw)?;
        if !emails.contains(&email) {
            emails.push(email);
        }
    }
    Ok(emails)
}

/// `domains`: an array of distinct domain names (`example.com`; a leading
/// `@` is dropped), lower-cased, at most `DOMAINS_MAX`, in the order given.
pub fn domains(field: &str, value: &Value) -> Result<Vec<String>, FieldError> {
    let list = strings(field, value, DOMAINS_MAX, "domain names")?;
    let mut domains: Vec<String> = Vec::new();
    for raw in list {
        let domain = raw.trim().trim_start_matches('@').to_lowercase();
        let labels_ok = domain.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
        if !domain.contains('.') || domain.len() > 253 || !labels_ok {
            return Err(problem(field, "must hold domain names such as example.com"));
        }
        if !domains.contains(&domain) {
            domains.push(domain);
        }
    }
    Ok(domains)
}

fn strings<'v>(
    field: &str,
    value: &'v Value,
    max: usize,
    what: &str,
) -> Result<Vec<&'v str>, FieldError> {
    let Value::Array(items) = value else {
        return Err(problem(field, format!("must be an array of {what}")));
    };
    if items.len() > max {
        return Err(problem(field, format!("must hold at most {max} {what}")));
    }
    items
        .iter()
        .map(|item| {
            item.as_str()
                .ok_or_else(|| problem(field, format!("must be an array of {what}")))
        })
        .collect()
}

/// `customFields`: an object of at most `FIELDS_MAX` keys (1 to
/// `FIELD_KEY_MAX` characters) whose values are strings (up to
/// `FIELD_TEXT_MAX` characters), numbers, booleans or null.
pub fn custom_fields(field: &str, value: &Value) -> Result<Map<String, Value>, FieldError> {
    let Value::Object(map) = value else {
        return Err(problem(field, "must be an object"));
    };
    if map.len() > FIELDS_MAX {
        return Err(problem(
            field,
            format!("must hold at most {FIELDS_MAX} keys"),
        ));
    }
    for (key, value) in map {
        let key_len = key.chars().count();
        if key_len == 0 || key_len > FIELD_KEY_MAX || key.contains('\0') {
            return Err(problem(
                field,
                format!("keys must be 1 to {FIELD_KEY_MAX} characters"),
            ));
        }
        let plain = match value {
            Value::String(text) => text.chars().count() <= FIELD_TEXT_MAX && !text.contains('\0'),
            Value::Number(_) | Value::Bool(_) | Value::Null => true,
            Value::Array(_) | Value::Object(_) => false,
        };
        if !plain {
            return Err(problem(
                field,
                format!(
                    "values must be strings (up to {FIELD_TEXT_MAX} characters), numbers, \
                     booleans or null"
                ),
            ));
        }
    }
    Ok(map.clone())
}

/// An external id as the widget gives it: trimmed, 1 to 255 characters.
pub fn external_id(field: &str, raw: &str) -> Result<String, FieldError> {
    let id = raw.trim();
    if id.is_empty() || id.chars().count() > 255 || id.contains('\0') {
        return Err(problem(field, "must be 1 to 255 characters"));
    }
    Ok(id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn emails_are_lower_cased_and_kept_once() {
        let list = emails(
            "emails",
            &json!(["Ada@Example.COM", "ada@example.com", "b@x.io"]),
        );
        assert_eq!(list, Ok(vec!["ada@example.com".into(), "b@x.io".into()]));
    }

    #[test]
    fn a_domain_loses_its_at_and_its_case() {
        assert_eq!(
            domains("domains", &json!(["@Acme.Example"])),
            Ok(vec!["acme.example".to_string()])
        );
    }

    #[test]
    fn a_domain_without_a_dot_is_refused() {
        assert!(domains("domains", &json!(["localhost"])).is_err());
    }

    #[test]
    fn a_custom_field_holding_an_object_is_refused() {
        assert!(custom_fields("customFields", &json!({"plan": {"tier": 1}})).is_err());
    }
}
