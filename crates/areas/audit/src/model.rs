//! An audit entry as the API shows it, its closed sets (actions, target
//! types) and the `changes` it records, from which secrets are left out.

use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::actor::Actor;
use crate::time::Timestamp;

crate::text_enum! {
    /// What an entry records (docs/api.md lists each with its target).
    pub enum Action {
        ApiKeyCreated = "api_key.created",
        ApiKeyUpdated = "api_key.updated",
        ApiKeyRevoked = "api_key.revoked",
        UserCreated = "user.created",
        UserInvited = "user.invited",
        UserUpdated = "user.updated",
        UserDeactivated = "user.deactivated",
        RoleCreated = "role.created",
        RoleUpdated = "role.updated",
        RoleDeleted = "role.deleted",
        SignedIn = "auth.signed_in",
        SignInFailed = "auth.sign_in_failed",
        TotpEnabled = "totp.enabled",
        TotpDisabled = "totp.disabled",
        SessionEnded = "session.ended",
        SettingsUpdated = "settings.updated",
        WebhookCreated = "webhook.created",
        WebhookUpdated = "webhook.updated",
        WebhookDeleted = "webhook.deleted",
        WebhookSecretRotated = "webhook.secret_rotated",
        CompanySuspended = "company.suspended",
        CompanyReactivated = "company.reactivated",
        TeamCreated = "team.created",
        TeamUpdated = "team.updated",
        TeamDeleted = "team.deleted",
        TicketDeleted = "ticket.deleted",
        SsoUpdated = "sso.updated",
        PasswordChanged = "user.password_changed",
        PasswordReset = "user.password_reset",
        SlaPoliciesReplaced = "sla_policies.replaced",
        BusinessHoursCreated = "business_hours.created",
        BusinessHoursUpdated = "business_hours.updated",
        BusinessHoursDeleted = "business_hours.deleted",
        EscalationRulesReplaced = "escalation_rules.replaced",
        CustomFieldCreated = "custom_field.created",
        CustomFieldUpdated = "custom_field.updated",
        CustomFieldDeleted = "custom_field.deleted",
        EntityCreated = "entity.created",
        EntityUpdated = "entity.updated",
        WidgetSecretRotated = "widget.secret_rotated",
        ChatDeleted = "chat.deleted",
        SignInLimited = "auth.sign_in_limited",
        AuditRetentionPruned = "audit.pruned",
        ContactErased = "contact.erased",
        AutomationCreated = "automation.created",
        AutomationUpdated = "automation.updated",
        AutomationDeleted = "automation.deleted",
        CommentCancelled = "comment.cancelled",
        EmailChannelCreated = "email_channel.created",
        EmailChannelUpdated = "email_channel.updated",
        EmailChannelDeleted = "email_channel.deleted",
        ExportRequested = "export.requested",
        ExportDownloaded = "export.downloaded",
    }
}

crate::text_enum! {
    /// The kinds of record an entry's target is.
    pub enum TargetType {
        ApiKey = "api_key",
        User = "user",
        Role = "role",
        Session = "session",
        Settings = "settings",
        Webhook = "webhook",
        Company = "company",
        Team = "team",
        Ticket = "ticket",
        Sso = "sso",
        SlaPolicies = "sla_policies",
        BusinessHours = "business_hours",
        EscalationRules = "escalation_rules",
        CustomField = "custom_field",
        Entity = "entity",
        ChatSession = "chat_session",
        Contact = "contact",
        Automation = "automation",
        Comment = "comment",
        EmailChannel = "email_channel",
    }
}

/// What an entry is about: `{"type": "api_key", "id": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Target {
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "api_key")]
    pub kind: TargetType,
    pub id: Option<Uuid>,
}

impl Target {
    pub fn new(kind: TargetType, id: Uuid) -> Target {
        Target { kind, id: Some(id) }
    }
}

/// One entry of the audit log. `seq`, `hash` and `prevHash` are null until
/// the sealer has chained it (shortly after it commits).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: Uuid,
    pub seq: Option<i64>,
    pub at: Timestamp,
    pub actor: Actor,
    #[schema(value_type = String, example = "api_key.created")]
    pub action: Action,
    pub target: Target,
    #[schema(value_type = Object)]
    pub changes: Value,
    pub request_id: Option<String>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    pub hash: Option<String>,
    pub prev_hash: Option<String>,
}

/// The data of the `audit.entry` event: the sealed entry as the list
/// shows it.
#[derive(Serialize)]
#[serde(transparent)]
pub struct AuditEntry<'a>(pub &'a Entry);

impl crate::event_catalogue::EventPayload for AuditEntry<'_> {
    const NAME: crate::event_catalogue::EventName = crate::event_catalogue::EventName::AuditEntry;
}

/// Fields never recorded, whatever record they are part of (compared
/// without case, `_` and `-`): key material, passwords, TOTP seeds,
/// webhook and SSO secrets, tokens. A change to one is recorded as
/// `{"secret": "rotated"}` (and the like) instead.
const SECRET_FIELDS: &[&str] = &[
    "secret",
    "key",
    "keyhash",
    "apikey",
    "password",
    "passwordhash",
    "totp",
    "totpsecret",
    "token",
    "clientsecret",
    "signingkey",
];

/// Fields that change with every write and say nothing of what changed.
const STAMPS: &[&str] = &["updatedAt", "lastUsedAt", "lastSignInAt", "lastSeenAt"];

fn is_secret(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_FIELDS.contains(&folded.as_str())
}

/// `value` without any secret field, at any depth.
fn redacted(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(name, _)| !is_secret(name))
                .map(|(name, value)| (name, redacted(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(redacted).collect()),
        other => other,
    }
}

/// The record as JSON, secrets left out; a record that does not serialise
/// to an object is kept under `value`.
fn fields_of(record: &impl Serialize) -> Map<String, Value> {
    match redacted(serde_json::to_value(record).unwrap_or(Value::Null)) {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        other => Map::from_iter([("value".to_string(), other)]),
    }
}

/// An entry's `changes`: `before` and `after` values of the fields that
/// changed (the whole record for a creation or a deletion), never a
/// secret's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes(Map<String, Value>);

impl Changes {
    /// Nothing but what `with` and `secret` add.
    pub fn none() -> Changes {
        Changes::default()
    }

    /// A record that came to be: all of it as `after`.
    pub fn created(after: &impl Serialize) -> Changes {
        Changes::none().with("after", Value::Object(fields_of(after)))
    }

    /// A record that went: all of it as `before`.
    pub fn deleted(before: &impl Serialize) -> Changes {
        Changes::none().with("before", Value::Object(fields_of(before)))
    }

    /// The fields that differ between `before` and `after`, each side's
    /// value (stamps such as `updatedAt` left out).
    pub fn updated(before: &impl Serialize, after: &impl Serialize) -> Changes {
        let (old, new) = (fields_of(before), fields_of(after));
        let mut was = Map::new();
        let mut is = Map::new();
        let names = old
            .keys()
            .chain(new.keys().filter(|k| !old.contains_key(*k)));
        for name in names {
            if STAMPS.contains(&name.as_str()) {
                continue;
            }
            let (a, b) = (old.get(name), new.get(name));
            if a != b {
                was.insert(name.clone(), a.cloned().unwrap_or(Value::Null));
                is.insert(name.clone(), b.cloned().unwrap_or(Value::Null));
            }
        }
        Changes::none()
            .with("before", Value::Object(was))
            .with("after", Value::Object(is))
    }

    /// Adds `name: value` (secrets are still left out of `value`).
    pub fn with(mut self, name: &str, value: Value) -> Changes {
        self.0.insert(name.to_string(), redacted(value));
        self
    }

    /// Says that a secret changed, never its value: `{"secret": what}`
    /// (`"created"`, `"rotated"`, `"removed"`).
    pub fn secret(mut self, what: &str) -> Changes {
        self.0
            .insert("secret".to_string(), Value::String(what.to_string()));
        self
    }

    /// Whether an update changed nothing recorded.
    pub fn is_empty_update(&self) -> bool {
        let empty = |name: &str| {
            self.0
                .get(name)
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
        };
        empty("before") && empty("after") && !self.0.contains_key("secret")
    }

    /// The JSON text stored (and hashed as stored).
    pub fn to_text(&self) -> String {
        Value::Object(self.0.clone()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_update_names_only_what_changed() {
        let changes = Changes::updated(
            &json!({"name": "a", "scopes": ["x"], "updatedAt": 1}),
            &json!({"name": "b", "scopes": ["x"], "updatedAt": 2}),
        );
        assert_eq!(
            changes.to_text(),
            json!({"before": {"name": "a"}, "after": {"name": "b"}}).to_string()
        );
    }

    #[test]
    fn secrets_are_left_out_at_any_depth() {
        let changes = Changes::created(&json!({
            "name": "hook", "secret": "s3cr3t",
            "inbound": {"password": "pw", "apiKey": "k", "host": "h"}
        }))
        .secret("created");
        let text = changes.to_text();
        for secret in ["s3cr3t", "pw", "\"k\""] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("\"secret\":\"created\""));
        assert!(text.contains("\"host\":\"h\""));
    }

    #[test]
    fn an_update_of_nothing_is_empty() {
        let same = json!({"name": "a", "updatedAt": 1});
        assert!(Changes::updated(&same, &json!({"name": "a", "updatedAt": 2})).is_empty_update());
        assert!(
            !Changes::updated(&same, &same)
                .secret("rotated")
                .is_empty_update()
        );
    }
}
