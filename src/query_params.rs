//! The query string of an API request, checked against its operation's
//! documented parameters before the handler runs: a parameter the
//! operation does not document (`?assignee=` for `assignedToId`, `?tags=`
//! for `tag`) is a 400 naming it, not a filter silently ignored while the
//! list answers everything. The documented parameters come from the same
//! `#[utoipa::path]` declaration the route is mounted from, so what the
//! document shows and what the route takes cannot drift apart.
//!
//! The list filters that each add a condition to the list's statement
//! (`tag` values, `anyTag` values, `cf.<key>` conditions) are capped here
//! too, at the edge where every list's query string passes, before any
//! area parses them.

use axum::http::Method;
use utoipa::IntoParams;
use utoipa::openapi::PathItem;
use utoipa::openapi::RefOr;
use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ArrayBuilder, ObjectBuilder, Required, Type};

use crate::error::{ApiError, FieldError};
use crate::validate::problem;

/// The most values a list takes for each of `tag` and `anyTag`, and the
/// most `cf.<key>` conditions (docs/api.md, "Filter limits"): each one is
/// a probe per candidate row, and hundreds of them kept a database core
/// busy for minutes.
pub const FILTER_VALUES_MAX: usize = 20;

/// The parameters whose values are counted against [`FILTER_VALUES_MAX`]:
/// the documented name, and whether one parameter holds comma-separated
/// values (a tag list) rather than one condition.
const CAPPED: &[(&str, bool)] = &[("tag", true), ("anyTag", true), ("cf.{key}", false)];

/// The query parameters one operation documents: exact names, and the
/// prefixes of templated ones (`cf.` of `cf.{key}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownParams {
    names: Vec<String>,
    templates: Vec<Template>,
}

/// A templated parameter (`cf.{key}`): the documented name and the prefix
/// every instance starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Template {
    documented: String,
    prefix: String,
}

impl KnownParams {
    /// The query parameters of `operation`'s documentation.
    pub fn of(operation: &Operation) -> Self {
        let mut known = KnownParams::default();
        let parameters = operation.parameters.iter().flatten();
        for parameter in parameters {
            let RefOr::T(parameter) = parameter else {
                continue;
            };
            if parameter.parameter_in != ParameterIn::Query {
                continue;
            }
            match parameter.name.split_once('{') {
                Some((prefix, _)) => known.templates.push(Template {
                    documented: parameter.name.clone(),
                    prefix: prefix.to_string(),
                }),
                None => known.names.push(parameter.name.clone()),
            }
        }
        known
    }

    /// The documented name `name` is an instance of, if any.
    fn documented<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        if self.names.iter().any(|known| known == name) {
            return Some(name);
        }
        self.templates
            .iter()
            .find(|t| name.len() > t.prefix.len() && name.starts_with(&t.prefix))
            .map(|t| t.documented.as_str())
    }

    /// What an unknown parameter's message lists: the names it may have
    /// meant.
    fn listing(&self) -> String {
        let names = self.names.iter().map(String::as_str);
        let templates = self.templates.iter().map(|t| t.documented.as_str());
        let all: Vec<&str> = names.chain(templates).collect();
        if all.is_empty() {
            "this operation takes no query parameters".to_string()
        } else {
            format!("this operation takes {}", all.join(", "))
        }
    }
}

/// The documented query parameters of each method of one route.
#[derive(Debug, Clone, Default)]
pub struct RouteParams {
    by_method: Vec<(Method, KnownParams)>,
}

impl RouteParams {
    /// The parameters of every operation of `items` (the path items one
    /// route serves).
    pub fn of_items<'a>(items: impl IntoIterator<Item = &'a PathItem>) -> Self {
        let mut by_method = Vec::new();
        for item in items {
            let operations = [
                (Method::GET, &item.get),
                (Method::POST, &item.post),
                (Method::PUT, &item.put),
                (Method::PATCH, &item.patch),
                (Method::DELETE, &item.delete),
            ];
            for (method, operation) in operations {
                if let Some(operation) = operation {
                    by_method.push((method, KnownParams::of(operation)));
                }
            }
        }
        RouteParams { by_method }
    }

    /// The parameters `method` takes here (HEAD is served by GET).
    fn for_method(&self, method: &Method) -> Option<&KnownParams> {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.by_method
            .iter()
            .find(|(m, _)| m == method)
            .map(|(_, known)| known)
    }

    /// Checks `query` (the raw query string) of a request with `method`.
    pub fn check(&self, method: &Method, query: Option<&str>) -> Result<(), ApiError> {
        match (self.for_method(method), query) {
            (Some(known), Some(query)) if !query.is_empty() => check(known, query),
            _ => Ok(()),
        }
    }
}

/// Every unknown parameter of `query`, each a field error naming it, then
/// each capped filter over [`FILTER_VALUES_MAX`].
fn check(known: &KnownParams, query: &str) -> Result<(), ApiError> {
    let mut problems: Vec<FieldError> = Vec::new();
    let mut counts = [0usize; CAPPED.len()];
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let Some(documented) = known.documented(&name) else {
            if !problems.iter().any(|p| p.field == name) {
                let message = format!("unknown query parameter; {}", known.listing());
                problems.push(problem(&name, message));
            }
            continue;
        };
        if let Some(i) = CAPPED.iter().position(|(capped, _)| *capped == documented) {
            let values = if CAPPED[i].1 {
                value.split(',').filter(|v| !v.trim().is_empty()).count()
            } else {
                usize::from(!value.is_empty())
            };
            counts[i] += values;
        }
    }
    for ((name, listed), count) in CAPPED.iter().zip(counts) {
        if count > FILTER_VALUES_MAX {
            let what = if *listed { "values" } else { "conditions" };
            let message =
                format!("too many {what}: {count} given, the limit is {FILTER_VALUES_MAX}");
            problems.push(problem(name, message));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::validation(problems))
    }
}

/// The ticket list's `tag`, `anyTag` and `cf.{key}` parameters
/// (`params(TicketLabelFilters)`), documented once with the chat session
/// list's by [`label_filters`].
pub struct TicketLabelFilters;

/// The chat session list's `tag`, `anyTag` and `cf.{key}` parameters.
pub struct SessionLabelFilters;

impl IntoParams for TicketLabelFilters {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        label_filters("tickets")
    }
}

impl IntoParams for SessionLabelFilters {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        label_filters("sessions")
    }
}

/// The tag and custom field filters of a list of `records`, capped at
/// [`FILTER_VALUES_MAX`] each.
fn label_filters(records: &str) -> Vec<Parameter> {
    let text = || ObjectBuilder::new().schema_type(Type::String);
    let filter = |name: &str, description: String| {
        ParameterBuilder::new()
            .name(name)
            .parameter_in(ParameterIn::Query)
            .required(Required::False)
            .description(Some(description))
    };
    vec![
        filter(
            "tag",
            format!(
                "Only {records} carrying every one of these tags (repeat the parameter or \
                 separate with commas; at most {FILTER_VALUES_MAX})"
            ),
        )
        .schema(Some(ArrayBuilder::new().items(text())))
        .explode(Some(true))
        .build(),
        filter(
            "anyTag",
            format!(
                "Only {records} carrying at least one of these comma-separated tags (at most \
                 {FILTER_VALUES_MAX})"
            ),
        )
        .schema(Some(text()))
        .build(),
        filter(
            "cf.{key}",
            format!(
                "Only {records} whose custom field `key` equals this (a multiselect: contains \
                 it); `cf.{{key}}[gt|gte|lt|lte]` compares numbers, dates and datetimes (at most \
                 {FILTER_VALUES_MAX} such conditions)"
            ),
        )
        .schema(Some(text()))
        .build(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::openapi::path::{OperationBuilder, ParameterBuilder};

    fn known(names: &[&str]) -> KnownParams {
        let mut operation = OperationBuilder::new();
        for name in names {
            operation = operation.parameter(
                ParameterBuilder::new()
                    .name(*name)
                    .parameter_in(ParameterIn::Query),
            );
        }
        operation = operation.parameter(
            ParameterBuilder::new()
                .name("id")
                .parameter_in(ParameterIn::Path),
        );
        KnownParams::of(&operation.build())
    }

    fn fields(result: Result<(), ApiError>) -> Vec<String> {
        let error = result.expect_err("refused");
        error.details.into_iter().map(|d| d.field).collect()
    }

    #[test]
    fn documented_parameters_pass_and_others_are_named() {
        let list = known(&["status", "tag", "cf.{key}", "limit"]);
        assert!(
            check(
                &list,
                "status=OPEN&tag=a&tag=b&cf.plan=pro&cf.n[gte]=1&limit="
            )
            .is_ok()
        );
        assert_eq!(
            fields(check(&list, "tags=a&status=OPEN&assignee=x&tags=b&id=1")),
            ["tags", "assignee", "id"]
        );
        // The bare prefix is no instance of the template.
        assert_eq!(fields(check(&list, "cf.=x")), ["cf."]);
    }

    #[test]
    fn the_message_lists_what_the_operation_takes() {
        let error = check(&known(&["status", "cf.{key}"]), "stauts=OPEN").expect_err("refused");
        assert_eq!(
            error.message,
            "stauts: unknown query parameter; this operation takes status, cf.{key}"
        );
        let error = check(&known(&[]), "limit=5").expect_err("refused");
        assert_eq!(
            error.message,
            "limit: unknown query parameter; this operation takes no query parameters"
        );
    }

    #[test]
    fn filters_are_capped_at_the_limit() {
        let list = known(&["tag", "anyTag", "cf.{key}"]);
        let tags = |n: usize| {
            (0..n)
                .map(|i| format!("t{i}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let at_cap = format!(
            "tag={}&anyTag={}",
            tags(FILTER_VALUES_MAX),
            tags(FILTER_VALUES_MAX)
        );
        assert!(check(&list, &at_cap).is_ok());
        // Repeated parameters and comma-separated lists count alike;
        // empty pieces are no values.
        let over = format!("tag={}&tag=x,,&anyTag=", tags(FILTER_VALUES_MAX));
        assert_eq!(fields(check(&list, &over)), ["tag"]);
        let conditions = (0..=FILTER_VALUES_MAX)
            .map(|i| format!("cf.f{i}=1"))
            .collect::<Vec<_>>()
            .join("&");
        let error = check(&list, &conditions).expect_err("refused");
        assert_eq!(
            error.message,
            "cf.{key}: too many conditions: 21 given, the limit is 20"
        );
    }
}
