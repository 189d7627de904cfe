//! Extractors that wrap axum's so that malformed input gets our error shape
//! (never axum's plain-text rejections, never a 422).

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

use crate::error::ApiError;

/// JSON body extractor and responder.
pub struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(ApiError::from_status(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        }
        let body = Bytes::from_request(req, state).await.map_err(|rejection| {
            match rejection.status() {
                StatusCode::PAYLOAD_TOO_LARGE => {
                    ApiError::from_status(StatusCode::PAYLOAD_TOO_LARGE)
                }
                _ => ApiError::invalid_json(rejection.body_text()),
            }
        })?;
        refuse_nul(&body)?;
        match axum::Json::<T>::from_bytes(&body) {
            Ok(axum::Json(value)) => Ok(Json(value)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// Whether the request says its body is JSON (`application/json` or an
/// `application/…+json` type), as axum's own extractor decides. Written out
/// here because the body is read before it is parsed (see [`refuse_nul`])
/// and axum keeps its check private.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.split_once('/') {
        Some(("application", subtype)) => subtype == "json" || subtype.ends_with("+json"),
        _ => false,
    }
}

/// Neither Postgres `text` nor `jsonb` can hold a NUL character, so a body
/// carrying one anywhere (a value or a key, at any depth) is refused here,
/// once for every route, naming where it is, instead of failing as a 500 on
/// one backend. JSON can only carry NUL as the escape `\u0000`: bodies
/// without that text (nearly all) are not parsed twice.
fn refuse_nul(body: &[u8]) -> Result<(), ApiError> {
    const ESCAPE: &[u8] = b"\\u0000";
    if memchr::memmem::find(body, ESCAPE).is_none() {
        return Ok(());
    }
    // Unparseable JSON is left to the typed parse, which words that error.
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Ok(());
    };
    match nul_path(&value, String::new()) {
        Some(path) => Err(ApiError::invalid_field(
            if path.is_empty() { "body" } else { &path },
            "must not contain NUL characters".to_string(),
        )),
        None => Ok(()),
    }
}

/// The path (`a.b[2]`) of the first string or key holding NUL.
fn nul_path(value: &serde_json::Value, at: String) -> Option<String> {
    match value {
        serde_json::Value::String(text) => text.contains('\0').then_some(at),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_path(item, format!("{at}[{i}]"))),
        serde_json::Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            let here = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            if key.contains('\0') {
                Some(here)
            } else {
                nul_path(item, here)
            }
        }),
        _ => None,
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    match rejection {
        JsonRejection::JsonDataError(err) => {
            // "<prefix>: <path>: <problem>" for a wrong type, or
            // "<prefix>: missing field `x` at …" for an absent one.
            let text = err.body_text();
            let detail = text.split_once(": ").map(|(_, rest)| rest).unwrap_or(&text);
            let (field, message) = split_serde_message(detail);
            ApiError::invalid_field(&field, message)
        }
        JsonRejection::JsonSyntaxError(_) => {
            ApiError::invalid_json("Request body is not valid JSON")
        }
        JsonRejection::MissingJsonContentType(_) => {
            ApiError::from_status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        }
        JsonRejection::BytesRejection(err) if err.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::from_status(StatusCode::PAYLOAD_TOO_LARGE)
        }
        other => ApiError::invalid_json(other.body_text()),
    }
}

/// Splits a serde message into the field it concerns and the problem.
fn split_serde_message(detail: &str) -> (String, String) {
    if let Some((path, problem)) = detail.split_once(": ")
        && !path.contains(' ')
    {
        return (path.to_string(), problem.to_string());
    }
    if let Some(start) = detail.find('`')
        && let Some(len) = detail[start + 1..].find('`')
    {
        return (
            detail[start + 1..start + 1 + len].to_string(),
            detail.to_string(),
        );
    }
    ("body".to_string(), detail.to_string())
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// Query-string extractor with our error shape.
pub struct Query<T>(pub T);

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        if let Some(field) = parts.uri.query().and_then(nul_parameter) {
            return Err(ApiError::invalid_field(
                &field,
                "must not contain NUL characters",
            ));
        }
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(QueryRejection::FailedToDeserializeQueryString(err)) => {
                let message = err.body_text();
                let message = message
                    .strip_prefix("Failed to deserialize query string: ")
                    .unwrap_or(&message)
                    .to_string();
                Err(ApiError::invalid_field("query", message))
            }
            Err(other) => Err(ApiError::invalid_field("query", other.body_text())),
        }
    }
}

/// The name of the first query parameter whose name or value holds an
/// encoded NUL (`%00`), which no column can store (see [`refuse_nul`]).
fn nul_parameter(query: &str) -> Option<String> {
    query
        .split('&')
        .find(|pair| pair.contains("%00"))
        .map(|pair| {
            let name = pair.split_once('=').map_or(pair, |(name, _)| name);
            match name.contains("%00") {
                true => "query".to_string(),
                false => name.to_string(),
            }
        })
}

/// Parses a path id. Malformed ids are 404, like ids that do not exist: the
/// API never tells a caller which ids are well-formed but someone else's.
pub fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::not_found())
}

/// A path segment that is a resource id.
pub struct Id(pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(raw) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|_| ApiError::not_found())?;
        parse_id(&raw).map(Id)
    }
}

/// Two path ids (`/parent/{id}/child/{childId}`).
pub struct Ids(pub Uuid, pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for Ids {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path((a, b)) =
            axum::extract::Path::<(String, String)>::from_request_parts(parts, state)
                .await
                .map_err(|_| ApiError::not_found())?;
        Ok(Ids(parse_id(&a)?, parse_id(&b)?))
    }
}

/// Where a request came from, for the audit log: its `X-Request-Id` (set
/// by the request-id layer), the client's address as the server resolved
/// it and its `User-Agent` (cut to 512 characters). A handler names it on
/// its store handle with `Db::with_request`.
pub struct Requested(pub crate::floors::vocab::actor::RequestContext);

/// The longest user agent an audit entry keeps.
const USER_AGENT_MAX: usize = 512;

impl Requested {
    /// The context of a request with `parts`.
    pub fn of(parts: &Parts) -> crate::floors::vocab::actor::RequestContext {
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        crate::floors::vocab::actor::RequestContext {
            request_id: header("x-request-id"),
            ip: crate::client_address::ClientAddress::of(&parts.extensions)
                .map(|ip| ip.to_string()),
            user_agent: header("user-agent")
                .map(|agent| agent.chars().take(USER_AGENT_MAX).collect()),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Requested {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Requested(Requested::of(parts)))
    }
}
