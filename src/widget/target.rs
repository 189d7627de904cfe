//! The entity a widget key names, as the widget's routes resolve it.

use axum::http::StatusCode;

use super::store::{self, WidgetTarget};
use crate::companies::CompanyStatus;
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::time::Clock;
use crate::validate::{Fields, required_text};

/// Longest widget key accepted (they are far shorter).
pub(super) const WIDGET_KEY_MAX: usize = 100;

/// The target of a widget key: 400 when missing, 404 when unknown, 403
/// when its company is suspended.
pub(super) async fn target(
    db: &Db,
    clock: &Clock,
    widget_key: Option<&str>,
) -> ApiResult<WidgetTarget> {
    let (key,) = (required_text("widgetKey", widget_key, WIDGET_KEY_MAX),).all_valid()?;
    target_of(db, clock, &key).await
}

/// The target of a widget key already checked to be present.
pub(super) async fn target_of(db: &Db, clock: &Clock, key: &str) -> ApiResult<WidgetTarget> {
    let target = store::resolve(db, key, clock.now()).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            "Unknown widget key",
        )
    })?;
    if target.company_status != CompanyStatus::Active {
        return Err(ApiError::account_suspended());
    }
    Ok(target)
}
