//! Answers from the knowledge base without a model: suggestions for a
//! question (retrieval tuned with stop words and the company's synonyms),
//! the synonym groups, and the suggestion records an agent reads on a chat
//! or a ticket.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::super::model::{SearchHit, Subject, Suggestion};
use crate::auth::Principal;
use crate::db::Db;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::{Json, Query};
use crate::kb::question::{names_something, tokenise};
use crate::kb::store;
use crate::openapi::schema::{DataList, ErrorBody};
use crate::search;
use crate::time::Clock;
use crate::validate::{Fields, Page, optional_id, problem, required_text};

/// Synonym groups a tenant may keep.
pub const GROUPS_MAX: usize = 500;
/// Terms in one group.
pub const TERMS_MAX: usize = 20;
/// Characters in one term.
pub const TERM_CHARS_MAX: usize = 64;

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct SuggestParams {
    /// The question (1–500 characters), as typed so far.
    #[param(value_type = String, required, min_length = 1, max_length = 500)]
    q: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    /// At most 10 (default 3).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
}

/// Suggest articles for a question
///
/// The published articles that best answer a question: stop words and
/// question fillers are dropped, each word also matches the company's
/// synonyms (`PUT /kb/synonyms`), articles matching every word rank first,
/// then those matching any. The last word also matches as a prefix while
/// it is being typed.
#[utoipa::path(get, path = "/kb/suggest", tag = "Knowledge base",
    params(SuggestParams),
    responses(
        (status = 200, description = "Articles, best first", body = Vec<SearchHit>),
        (status = 400, description = "`validation_failed`", body = ErrorBody)))]
pub(super) async fn suggest(
    State(db): State<Db>,
    principal: Principal,
    Query(params): Query<SuggestParams>,
) -> ApiResult<Json<Vec<SearchHit>>> {
    let (q, entity) = (
        required_text("q", params.q.as_deref(), search::QUERY_MAX),
        optional_id("entityId", params.entity_id.as_deref()),
    )
        .all_valid()?;
    let page = Page::parse(params.limit.as_deref(), None, 3, 10)?;
    let hits = store::suggest(&db, &principal.tenant, entity, &q, page.limit).await?;
    Ok(Json(hits))
}

#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SynonymGroups {
    /// Each group lists terms (a word or a few words) that mean the same to
    /// the company's customers, e.g. `["refund", "money back"]`: 2–20 terms
    /// of 1–64 characters, at most 500 groups.
    #[schema(value_type = Vec<Vec<String>>, required)]
    groups: Option<Vec<Vec<String>>>,
}

/// Read synonym groups
///
/// The key's mode's synonym groups, as set.
#[utoipa::path(get, path = "/kb/synonyms", tag = "Knowledge base",
    responses((status = 200, description = "The groups", body = SynonymGroups)))]
pub(super) async fn get_synonyms(
    State(db): State<Db>,
    principal: Principal,
) -> ApiResult<Json<SynonymGroups>> {
    let groups = store::synonym_groups(&db, &principal.tenant).await?;
    Ok(Json(SynonymGroups {
        groups: Some(groups),
    }))
}

/// Replace synonym groups
///
/// The groups are replaced whole (an empty list clears them); suggestions
/// use them at once. Terms are kept trimmed and lower-cased.
#[utoipa::path(put, path = "/kb/synonyms", operation_id = "replace_synonyms",
    tag = "Knowledge base",
    request_body = SynonymGroups,
    responses(
        (status = 200, description = "The groups as stored", body = SynonymGroups),
        (status = 400, description = "`validation_failed`, naming the group and term",
            body = ErrorBody)))]
pub(super) async fn put_synonyms(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    Json(body): Json<SynonymGroups>,
) -> ApiResult<Json<SynonymGroups>> {
    let groups = parse_groups(body.groups).map_err(ApiError::validation)?;
    store::set_synonym_groups(&db, &principal.tenant, &groups, clock.now()).await?;
    Ok(Json(SynonymGroups {
        groups: Some(groups),
    }))
}

/// Every group checked, every problem listed (`groups[1][0]`).
fn parse_groups(groups: Option<Vec<Vec<String>>>) -> Result<Vec<Vec<String>>, Vec<FieldError>> {
    let Some(groups) = groups else {
        return Err(vec![problem("groups", "is required")]);
    };
    if groups.len() > GROUPS_MAX {
        return Err(vec![problem(
            "groups",
            format!("must hold at most {GROUPS_MAX} groups"),
        )]);
    }
    let mut errors = Vec::new();
    let mut parsed = Vec::with_capacity(groups.len());
    for (i, group) in groups.into_iter().enumerate() {
        if !(2..=TERMS_MAX).contains(&group.len()) {
            errors.push(problem(
                &format!("groups[{i}]"),
                format!("must hold 2 to {TERMS_MAX} terms"),
            ));
            continue;
        }
        let mut terms = Vec::with_capacity(group.len());
        for (j, term) in group.into_iter().enumerate() {
            let term = term.trim().to_lowercase();
            let field = format!("groups[{i}][{j}]");
            if term.is_empty() || term.chars().count() > TERM_CHARS_MAX {
                errors.push(problem(
                    &field,
                    format!("must be 1 to {TERM_CHARS_MAX} characters"),
                ));
            } else if !names_something(&term) {
                errors.push(problem(&field, "must hold a word that is not a stop word"));
            } else if tokenise(&term).join(" ") != term {
                errors.push(problem(
                    &field,
                    "must be words of letters and digits separated by single spaces",
                ));
            } else {
                terms.push(term);
            }
        }
        parsed.push(terms);
    }
    if errors.is_empty() {
        Ok(parsed)
    } else {
        Err(errors)
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct SuggestionParams {
    /// The chat whose suggestions to list (this or `ticketId`).
    #[param(value_type = Option<uuid::Uuid>)]
    chat_session_id: Option<String>,
    /// The ticket whose suggestions to list (this or `chatSessionId`).
    #[param(value_type = Option<uuid::Uuid>)]
    ticket_id: Option<String>,
}

/// Suggestions shown on a chat or a ticket
///
/// The articles suggested to the visitor before a chat (who then asked for
/// a human) or for a new ticket, with the question, oldest first.
#[utoipa::path(get, path = "/kb/suggestions", tag = "Knowledge base",
    params(SuggestionParams),
    responses(
        (status = 200, description = "The suggestion records", body = DataList<Suggestion>),
        (status = 400, description = "`validation_failed`: neither or both ids", body = ErrorBody)))]
pub(super) async fn list_suggestions(
    State(db): State<Db>,
    principal: Principal,
    Query(params): Query<SuggestionParams>,
) -> ApiResult<Json<Value>> {
    let (chat, ticket) = (
        optional_id("chatSessionId", params.chat_session_id.as_deref()),
        optional_id("ticketId", params.ticket_id.as_deref()),
    )
        .all_valid()?;
    let subject = match (chat, ticket) {
        (Some(chat), None) => Subject::ChatSession(chat),
        (None, Some(ticket)) => Subject::Ticket(ticket),
        _ => {
            return Err(ApiError::invalid_field(
                "chatSessionId",
                "give exactly one of chatSessionId and ticketId",
            ));
        }
    };
    let records = store::suggestions_of(&db, &principal.tenant, subject).await?;
    Ok(Json(json!({ "data": records })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(groups: &[&[&str]]) -> Option<Vec<Vec<String>>> {
        Some(
            groups
                .iter()
                .map(|g| g.iter().map(|t| t.to_string()).collect())
                .collect(),
        )
    }

    fn fields(errors: Vec<FieldError>) -> Vec<String> {
        errors.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn groups_are_trimmed_and_lower_cased() {
        let parsed = parse_groups(owned(&[&[" Refund ", "Money Back"]])).expect("valid");
        assert_eq!(parsed, vec![vec!["refund", "money back"]]);
    }

    #[test]
    fn every_bad_term_is_named() {
        let errors =
            parse_groups(owned(&[&["lid"], &["cap", "", "the", "a-b"]])).expect_err("invalid");
        assert_eq!(
            fields(errors),
            vec!["groups[0]", "groups[1][1]", "groups[1][2]", "groups[1][3]"]
        );
    }
}
