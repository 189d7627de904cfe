//! Collision-safe ticket writes: a write sent with `If-Match` on another
//! version than the ticket's is refused with 412 `version_conflict`, its
//! `details` one line per change since (the field it touched), and
//! `changes` the timeline entries themselves, so the caller can merge and
//! retry. (`crate::versions` reads the header and writes the `ETag`.)

use uuid::Uuid;

use super::model::{Activity, ActivityKind};
use super::store;
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::{ApiError, FieldError, StoreError};
pub use crate::versions::{IfMatch, Versioned};

/// The API error of a refused ticket write: a version conflict gets the
/// changes after `since` (read after the refusal; the refused transaction
/// changed nothing), every other error stays as it is.
pub async fn refused(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    since: Option<i64>,
    error: StoreError,
) -> ApiError {
    let (StoreError::VersionConflict { .. }, Some(since)) = (&error, since) else {
        return error.into();
    };
    let changes = match store::changes_since(db, tenant, id, since).await {
        Ok(changes) => changes,
        Err(read) => return read.into(),
    };
    let mut api = ApiError::from(error);
    api.details = changes.iter().map(change_line).collect();
    api.extra.insert(
        "changes".into(),
        serde_json::to_value(&changes).unwrap_or_default(),
    );
    api
}

/// One change as a `details` line: the field it touched, and what it did.
fn change_line(change: &Activity) -> FieldError {
    let field = match change.kind {
        ActivityKind::Created => "ticket",
        ActivityKind::StatusChanged => "status",
        ActivityKind::PriorityChanged => "priority",
        ActivityKind::AssigneeChanged => "assignedToId",
        ActivityKind::TeamChanged => "teamId",
        ActivityKind::Escalated => "escalation",
        ActivityKind::Commented => "comments",
        ActivityKind::TagsChanged => "tags",
        ActivityKind::CustomFieldsChanged => "customFields",
        ActivityKind::SlaWarning | ActivityKind::SlaBreached | ActivityKind::SlaFulfilled => "sla",
        ActivityKind::Linked | ActivityKind::Unlinked => "links",
        ActivityKind::Snoozed | ActivityKind::Unsnoozed => "snoozedUntil",
        ActivityKind::Merged | ActivityKind::MergeUndone => "mergedInto",
        ActivityKind::Split => "comments",
        ActivityKind::AutomationStopped => "automations",
    };
    let by = change
        .actor
        .as_ref()
        .map(|actor| format!(" by {}", actor.name))
        .unwrap_or_default();
    let what = match (&change.from, &change.to) {
        (None, None) => change.kind.to_string(),
        (from, to) => format!(
            "{} from {} to {}",
            change.kind,
            from.as_deref().unwrap_or("none"),
            to.as_deref().unwrap_or("none")
        ),
    };
    FieldError {
        field: field.into(),
        message: format!("version {}: {what}{by}", change.version),
    }
}

/// The body of a 412 `version_conflict`.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionConflict {
    pub error: String,
    /// `version_conflict`.
    pub code: String,
    pub status: u16,
    /// One line per change since the version named: the field it touched
    /// and what it did (absent when none left an entry).
    #[schema(nullable = false)]
    pub details: Option<Vec<FieldError>>,
    /// The ticket's version now.
    pub current_version: i64,
    /// The timeline entries since the version named, oldest first (at most
    /// 100, the newest).
    pub changes: Vec<Activity>,
}
