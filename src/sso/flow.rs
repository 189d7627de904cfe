//! The two public routes of an SSO sign-in (no API key: the browser of an
//! agent who is not signed in follows them):
//! `GET /api/v1/auth/sso/{companySlug}/start` sends the browser to the
//! company's provider; `GET /api/v1/auth/sso/callback` is where the
//! provider sends it back, and ends in `sign_in::complete_sign_in`.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::oidc::{self, ProviderError};
use super::providers::Providers;
use super::sign_in::{self, failed};
use super::store::{self, NewLogin, SsoLogin, StateRefusal};
use crate::accounts::AccountDeps;
use crate::client_address::ClientAddress;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::Query;
use crate::openapi::schema::ErrorBody;
use crate::state::AppState;
use crate::webhooks::guard::AllowPrivate;

/// How long a started sign-in may take to come back.
const LOGIN_TTL: std::time::Duration = std::time::Duration::from_secs(10 * 60);
/// Longest `redirect` kept for after the sign-in.
const REDIRECT_MAX: usize = 2000;

/// The public routes (mounted beside the API's, outside its key check).
pub fn router() -> Router<AppState> {
    documented().split_for_parts().0
}

/// Their OpenAPI operations (full paths), from the same declarations.
pub fn operations() -> utoipa::openapi::OpenApi {
    documented().split_for_parts().1
}

fn documented() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(start))
        .routes(routes!(callback))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct StartQuery {
    /// A path of this service to land on after signing in.
    #[param(value_type = Option<String>, max_length = 2000)]
    redirect: Option<String>,
}

/// Start an SSO sign-in
///
/// Sends the browser to the company's OpenID provider (302 with
/// `Location`); the provider sends it back to `/auth/sso/callback`. A
/// company with no SSO configured is 404; a provider that cannot be read
/// is 502 `sso_failed`.
#[utoipa::path(get, path = "/api/v1/auth/sso/{slug}/start", operation_id = "start_sso_sign_in",
    tag = "Agent sign-in",
    params(("slug" = String, Path, description = "The company's slug"), StartQuery),
    responses(
        (status = 302, description = "To the identity provider",
            headers(("Location" = String, description = "The provider's authorization URL"))),
        (status = 404, description = "No company with this slug has SSO", body = ErrorBody),
        (status = 502, description = "`sso_failed`: the provider could not be read",
            body = ErrorBody),
    ))]
async fn start(
    State(state): State<AccountDeps>,
    State(providers): State<Arc<Providers>>,
    State(AllowPrivate(allow_private)): State<AllowPrivate>,
    Path(slug): Path<String>,
    Query(query): Query<StartQuery>,
) -> ApiResult<Response> {
    let redirect_after = match query.redirect {
        Some(path) if !is_local_path(&path) => {
            return Err(ApiError::invalid_field(
                "redirect",
                "must be a path of this service, starting with a single /",
            ));
        }
        path => path,
    };
    let config = store::find_by_slug(&state.db, &slug)
        .await?
        .ok_or_else(ApiError::not_found)?;
    let http = oidc::Http::new(allow_private).map_err(|err| unreachable_provider(&err))?;
    let callback = super::callback_url(&state.public_url);
    let provider = oidc::provider(&http, &providers, &config, &callback, &state.clock)
        .await
        .map_err(|err| unreachable_provider(&err))?;
    let authorization = oidc::authorize(&provider);
    let now = state.clock.now();
    let new = NewLogin {
        state_digest: &digest(&authorization.state),
        login: SsoLogin {
            company_id: config.config.company_id,
            nonce: authorization.nonce,
            pkce_verifier: authorization.pkce_verifier,
            redirect_after,
        },
        expires_at: now.plus(LOGIN_TTL),
    };
    store::start_login(&state.db, new, now).await?;
    let location = HeaderValue::try_from(authorization.url).map_err(|_| ApiError::internal())?;
    Ok((
        StatusCode::FOUND,
        [
            (header::LOCATION, location),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
    )
        .into_response())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CallbackQuery {
    #[param(value_type = Option<String>)]
    code: Option<String>,
    #[param(value_type = Option<String>)]
    state: Option<String>,
    /// Set by the provider instead of `code` when it refused.
    #[param(value_type = Option<String>)]
    error: Option<String>,
}

/// Where the identity provider sends the browser back
///
/// Checks the `state` (once), the ID token (signature, `iss`, `aud`, `exp`,
/// `nonce`) and signs the agent in: 200 as `POST /auth/login`, or 303 to
/// the `redirect` the sign-in started with. Any refusal is 401
/// `sso_failed` saying why.
#[utoipa::path(get, path = "/api/v1/auth/sso/callback", operation_id = "finish_sso_sign_in",
    tag = "Agent sign-in",
    params(CallbackQuery),
    responses(
        (status = 200, description = "Signed in", body = crate::accounts::start::Me,
            headers(("Set-Cookie" = String, description = "The session cookie `sd_session`"))),
        (status = 303, description = "Signed in; on to the path the sign-in started with",
            headers(("Set-Cookie" = String, description = "The session cookie `sd_session`"),
                ("Location" = String, description = "The path to land on"))),
        (status = 401, description = "`sso_failed`: the sign-in was refused", body = ErrorBody),
        (status = 502, description = "`sso_failed`: the provider could not be read",
            body = ErrorBody),
    ))]
async fn callback(
    State(state): State<AccountDeps>,
    State(providers): State<Arc<Providers>>,
    State(AllowPrivate(allow_private)): State<AllowPrivate>,
    Query(query): Query<CallbackQuery>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let given_state = query
        .state
        .filter(|s| !s.is_empty())
        .ok_or_else(|| failed("the callback carries no state"))?;
    // The state is taken (single use) before anything else: a replayed or
    // forged callback ends here.
    let login = match store::take_login(&state.db, &digest(&given_state), state.clock.now()).await?
    {
        Ok(login) => login,
        Err(StateRefusal::Unknown) => return Err(failed("the state is unknown")),
        Err(StateRefusal::Used) => return Err(failed("the state was already used")),
        Err(StateRefusal::Expired) => return Err(failed("the sign-in expired; start again")),
    };
    if let Some(error) = query.error {
        return Err(failed(format!(
            "the identity provider answered {}",
            error.chars().take(100).collect::<String>()
        )));
    }
    let code = query
        .code
        .filter(|c| !c.is_empty())
        .ok_or_else(|| failed("the callback carries no code"))?;
    let config = store::find_secrets(&state.db, login.company_id)
        .await?
        .ok_or_else(|| failed("SSO is no longer configured for this company"))?;
    let http = oidc::Http::new(allow_private).map_err(|err| unreachable_provider(&err))?;
    let callback = super::callback_url(&state.public_url);
    let provider = oidc::provider(&http, &providers, &config, &callback, &state.clock)
        .await
        .map_err(|err| unreachable_provider(&err))?;
    let identity = oidc::identity(
        &http,
        &providers,
        provider,
        code,
        login.pkce_verifier,
        login.nonce,
        &state.clock,
    )
    .await
    .map_err(|err| failed(err.to_string()))?;
    let user = sign_in::user_of(&state, &config.config, identity).await?;
    store::mark_verified(&state.db, config.config.company_id, state.clock.now()).await?;
    let company_id = config.config.company_id;
    sign_in::complete_sign_in(
        &state,
        company_id,
        user,
        address,
        &headers,
        login.redirect_after,
    )
    .await
}

/// The provider could not be read: not the agent's fault, so a 502.
fn unreachable_provider(err: &ProviderError) -> ApiError {
    tracing::warn!(error = %err, "SSO discovery failed");
    ApiError::new(
        StatusCode::BAD_GATEWAY,
        ErrorCode::SsoFailed,
        err.to_string(),
    )
}

/// What the store keeps of a state: its SHA-256, hex.
fn digest(state: &str) -> String {
    hex::encode(Sha256::digest(state.as_bytes()))
}

/// A path on this service (`/…` but not `//…`, which a browser reads as
/// another host), without control characters.
fn is_local_path(path: &str) -> bool {
    path.len() <= REDIRECT_MAX
        && path.starts_with('/')
        && !path.starts_with("//")
        && !path.starts_with("/\\")
        && !path.chars().any(|c| c.is_control())
}

#[cfg(test)]
mod tests {
    use super::is_local_path;

    #[test]
    fn only_paths_of_this_service_are_kept_for_after_the_sign_in() {
        assert!(is_local_path("/console/"));
        assert!(!is_local_path("//evil.test/"));
        assert!(!is_local_path("/\\evil.test/"));
        assert!(!is_local_path("https://evil.test/"));
        assert!(!is_local_path("/a\nb"));
    }
}
