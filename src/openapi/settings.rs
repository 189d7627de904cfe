//! Operations of settings, escalation rules and reports.
#![allow(dead_code)]

use utoipa::OpenApi;

use crate::reports::model::TicketReport;
use crate::reports::routes::ReportParams;
use crate::settings::routes::UpdateBody;
use crate::settings::rules::{RulesBody, RulesResponse};
use crate::settings::store::CompanySettings;

#[derive(OpenApi)]
#[openapi(paths(
    get_settings,
    update_settings,
    list_rules,
    replace_rules,
    ticket_report
))]
pub struct Doc;

/// Get the company settings
///
/// Shared by both modes.
#[utoipa::path(get, path = "/api/v1/settings", tag = "Settings",
    responses((status = 200, description = "The company profile", body = CompanySettings)))]
fn get_settings() {}

/// Update the company settings
#[utoipa::path(patch, path = "/api/v1/settings", tag = "Settings", request_body = UpdateBody,
    responses((status = 200, description = "The updated profile", body = CompanySettings)))]
fn update_settings() {}

/// List escalation rules
///
/// The key's mode's rules, in evaluation order.
#[utoipa::path(get, path = "/api/v1/settings/escalation-rules", tag = "Settings",
    responses((status = 200, description = "The rules", body = RulesResponse)))]
fn list_rules() {}

/// Replace escalation rules
///
/// The list is replaced whole; a rule sent with its `id` keeps its history.
/// The response has the shape of the body, so a client can read, change and
/// send it back.
#[utoipa::path(put, path = "/api/v1/settings/escalation-rules", tag = "Settings",
    request_body = RulesBody,
    responses((status = 200, description = "The rules as stored", body = RulesResponse)))]
fn replace_rules() {}

/// Ticket report
///
/// Counts by status and priority, tickets created and resolved per day,
/// time to resolution, escalations.
#[utoipa::path(get, path = "/api/v1/reports/tickets", tag = "Reports", params(ReportParams),
    responses((status = 200, description = "The report", body = TicketReport)))]
fn ticket_report() {}
