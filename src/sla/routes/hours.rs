//! `/settings/business-hours`: the calendars SLA policies count business
//! time in (in the key's mode).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::NaiveDate;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Json, Requested};
use crate::idempotency::RequestState;
use crate::realtime::Realtime;
use crate::router::ApiRouter;
use crate::sla::cache::SlaCache;
use crate::sla::calendar::{WEEKDAYS, format_clock, parse_clock};
use crate::sla::model::{
    BusinessHours, CalendarInput, MAX_HOLIDAYS, MAX_INTERVALS, WeeklyInterval,
};
use crate::sla::store;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, Patch, problem, required_text};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::SettingsRead, routes!(list))
        .route(Scope::SettingsWrite, routes!(create))
        .route(Scope::SettingsWrite, routes!(update))
        .route(Scope::SettingsWrite, routes!(delete))
}

#[derive(Serialize, ToSchema)]
#[schema(as = BusinessHoursList)]
pub(crate) struct CalendarList {
    data: Vec<BusinessHours>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = DeletedBusinessHours)]
pub(crate) struct DeletedCalendar {
    id: Uuid,
    /// Always true.
    deleted: bool,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = CreateBusinessHours)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    #[schema(value_type = String, required, min_length = 1, max_length = 255)]
    name: Option<String>,
    /// An IANA time zone name, such as Europe/Berlin.
    #[schema(value_type = String, required, min_length = 1)]
    timezone: Option<String>,
    /// `[{day: "mon", open: "09:00", close: "17:30"}]`; several a day
    /// allowed; `close` at or before `open` crosses midnight.
    #[schema(value_type = Vec<WeeklyInterval>, required)]
    weekly: Option<Value>,
    /// Local dates `YYYY-MM-DD`; default none.
    #[schema(value_type = Option<Vec<String>>)]
    holidays: Option<Value>,
}

/// Any of the fields; the others keep their values.
#[derive(Deserialize, ToSchema)]
#[schema(as = UpdateBusinessHours)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateBody {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 255)]
    name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, min_length = 1)]
    timezone: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Vec<WeeklyInterval>)]
    weekly: Patch<Value>,
    #[serde(default)]
    #[schema(value_type = Vec<String>)]
    holidays: Patch<Value>,
}

/// List business-hours calendars
#[utoipa::path(get, path = "/settings/business-hours", operation_id = "list_business_hours",
    tag = "Settings",
    responses((status = 200, description = "The calendars, oldest first", body = CalendarList)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<CalendarList>> {
    let data = store::list_calendars(&db, &principal.tenant).await?;
    Ok(Json(CalendarList { data }))
}

/// Create a business-hours calendar
#[utoipa::path(post, path = "/settings/business-hours", operation_id = "create_business_hours",
    tag = "Settings",
    request_body = CreateBody,
    responses((status = 201, description = "Created", body = BusinessHours)))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<CreateBody>,
) -> ApiResult<(StatusCode, Json<BusinessHours>)> {
    let (name, timezone, weekly, holidays) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        timezone(body.timezone.as_deref()),
        match &body.weekly {
            None => Err(vec![problem("weekly", "is required")]),
            Some(value) => weekly(value),
        },
        match &body.holidays {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(value) => holidays(value),
        },
    )
        .all_valid()?;
    let input = CalendarInput {
        name,
        timezone,
        weekly,
        holidays,
    };
    let calendar = store::create_calendar(
        &principal.acting(&state.db, requested),
        &principal.tenant,
        &input,
        state.clock.now(),
    )
    .await?;
    state
        .sla
        .changed(&state.realtime.bus, principal.tenant.company_id)
        .await;
    Ok((StatusCode::CREATED, Json(calendar)))
}

/// Update a business-hours calendar
///
/// The due times of tickets already computed stay as they are; tickets
/// get due times from the new hours when their policy is next applied.
#[utoipa::path(patch, path = "/settings/business-hours/{id}",
    operation_id = "update_business_hours", tag = "Settings",
    request_body = UpdateBody,
    params(("id" = Uuid, Path, description = "The calendar's id")),
    responses((status = 200, description = "The updated calendar", body = BusinessHours)))]
#[allow(clippy::too_many_arguments)] // an axum handler: one extractor per handle it uses
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(sla): State<Arc<SlaCache>>,
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
    requested: Requested,
    Path(id): Path<Uuid>,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Json<BusinessHours>> {
    let current = store::find_calendar(&db, &principal.tenant, id).await?;
    let (name, timezone, weekly, holidays) = (
        match &body.name {
            Patch::Missing => Ok(current.name),
            Patch::Null => Err(problem("name", "must not be null")),
            Patch::Value(raw) => required_text("name", Some(raw), NAME_MAX),
        },
        match &body.timezone {
            Patch::Missing => Ok(current.timezone),
            Patch::Null => Err(problem("timezone", "must not be null")),
            Patch::Value(raw) => self::timezone(Some(raw)),
        },
        match &body.weekly {
            Patch::Missing => Ok(current.weekly),
            Patch::Null => Err(vec![problem("weekly", "must not be null")]),
            Patch::Value(value) => self::weekly(value),
        },
        match &body.holidays {
            Patch::Missing => Ok(current.holidays),
            Patch::Null => Ok(Vec::new()),
            Patch::Value(value) => self::holidays(value),
        },
    )
        .all_valid()?;
    let input = CalendarInput {
        name,
        timezone,
        weekly,
        holidays,
    };
    let calendar = store::update_calendar(
        &principal.acting(&db, requested),
        &principal.tenant,
        id,
        &input,
        clock.now(),
    )
    .await?;
    sla.changed(&realtime.bus, principal.tenant.company_id)
        .await;
    Ok(Json(calendar))
}

/// Delete a business-hours calendar
///
/// Refused with 409 while an SLA policy uses it.
#[utoipa::path(delete, path = "/settings/business-hours/{id}",
    operation_id = "delete_business_hours", tag = "Settings",
    params(("id" = Uuid, Path, description = "The calendar's id")),
    responses((status = 200, description = "Deleted", body = DeletedCalendar),
        (status = 409, description = "A policy uses it", body = crate::openapi::schema::ErrorBody)))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(sla): State<Arc<SlaCache>>,
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
    requested: Requested,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<DeletedCalendar>> {
    let now = clock.now();
    let db = principal.acting(&db, requested);
    store::delete_calendar(&db, &principal.tenant, id, now).await?;
    sla.changed(&realtime.bus, principal.tenant.company_id)
        .await;
    Ok(Json(DeletedCalendar { id, deleted: true }))
}

/// A time zone the tz database knows, in its canonical spelling.
fn timezone(value: Option<&str>) -> Result<String, FieldError> {
    let Some(raw) = value.map(str::trim) else {
        return Err(problem("timezone", "is required"));
    };
    raw.parse::<Tz>()
        .map(|tz| tz.name().to_string())
        .map_err(|_| {
            problem(
                "timezone",
                "must be an IANA time zone name, such as Europe/Berlin",
            )
        })
}

/// The weekly intervals, each checked (`weekly[2].close`), sorted by day
/// and opening time.
pub(crate) fn weekly(value: &Value) -> Result<Vec<WeeklyInterval>, Vec<FieldError>> {
    let Some(items) = value.as_array() else {
        return Err(vec![problem(
            "weekly",
            "must be a list of {day, open, close}",
        )]);
    };
    if items.is_empty() || items.len() > MAX_INTERVALS {
        let message = format!("must hold 1 to {MAX_INTERVALS} intervals");
        return Err(vec![problem("weekly", message)]);
    }
    let mut errors = Vec::new();
    let mut parsed = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match interval(&format!("weekly[{i}]"), item) {
            Ok(found) => parsed.push(found),
            Err(mut problems) => errors.append(&mut problems),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    parsed.sort_unstable();
    parsed.dedup();
    Ok(parsed
        .into_iter()
        .map(|(day, open, close)| WeeklyInterval {
            day: WEEKDAYS[day].to_string(),
            open: format_clock(open),
            close: format_clock(close),
        })
        .collect())
}

/// `(weekday, open, close)` of one `{day, open, close}`.
fn interval(prefix: &str, item: &Value) -> Result<(usize, u32, u32), Vec<FieldError>> {
    let field = |name: &str| format!("{prefix}.{name}");
    let Some(object) = item.as_object() else {
        return Err(vec![problem(
            prefix,
            "must be an object {day, open, close}",
        )]);
    };
    if let Some(unknown) = object
        .keys()
        .find(|k| !["day", "open", "close"].contains(&k.as_str()))
    {
        return Err(vec![problem(
            &field(unknown),
            "is not a field of an interval",
        )]);
    }
    let text = |name: &str| object.get(name).and_then(Value::as_str);
    let (day, open, close) = (
        text("day")
            .and_then(|d| WEEKDAYS.iter().position(|w| *w == d))
            .ok_or_else(|| {
                problem(
                    &field("day"),
                    "must be one of: mon, tue, wed, thu, fri, sat, sun",
                )
            }),
        text("open")
            .and_then(|t| parse_clock(t, false))
            .ok_or_else(|| problem(&field("open"), "must be a time HH:MM from 00:00 to 23:59")),
        text("close")
            .and_then(|t| parse_clock(t, true))
            .ok_or_else(|| problem(&field("close"), "must be a time HH:MM from 00:00 to 24:00")),
    )
        .collect_errors()?;
    if open == close {
        return Err(vec![problem(
            &field("close"),
            "must differ from open (for a whole day use 00:00 to 24:00)",
        )]);
    }
    Ok((day, open, close))
}

/// Local dates, deduplicated and sorted.
pub(crate) fn holidays(value: &Value) -> Result<Vec<NaiveDate>, Vec<FieldError>> {
    let Some(items) = value.as_array() else {
        return Err(vec![problem(
            "holidays",
            "must be a list of dates YYYY-MM-DD",
        )]);
    };
    if items.len() > MAX_HOLIDAYS {
        let message = format!("must hold at most {MAX_HOLIDAYS} dates");
        return Err(vec![problem("holidays", message)]);
    }
    let mut errors = Vec::new();
    let mut dates = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let date = item
            .as_str()
            .filter(|t| t.len() == 10)
            .and_then(|t| NaiveDate::parse_from_str(t, "%Y-%m-%d").ok());
        match date {
            Some(date) => dates.push(date),
            None => errors.push(problem(
                &format!("holidays[{i}]"),
                "must be a date YYYY-MM-DD",
            )),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    dates.sort_unstable();
    dates.dedup();
    Ok(dates)
}
