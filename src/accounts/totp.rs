//! The second factor: TOTP (RFC 6238: SHA-1, six digits, 30-second steps,
//! one step of skew either way) with ten one-time recovery codes.
//!
//! `POST /auth/totp/setup` makes a secret (not yet in force) and answers its
//! `otpauth://` URL for an authenticator app; `POST /auth/totp/confirm`
//! with a current code puts it in force and answers the recovery codes,
//! once; `DELETE /auth/totp` (with a current code or a recovery code) turns
//! it off. Turning it on or off ends the agent's other sessions; turning
//! it on also swaps the current session for a fresh one.
//!
//! The secret is stored sealed (`crate::sealed`, with the server secret
//! `totp-secrets`); one stored before sealing is read as it is and sealed
//! at its first use.

use axum::Json as AxumJson;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use totp_rs::{Algorithm, Secret, Totp};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use uuid::Uuid;

use super::AccountDeps;
use super::recovery;
use super::signed_in::{Client, SignedIn};
use super::start::{no_store, open_session};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Requested};
use crate::openapi::schema::ErrorBody;
use crate::sealed::{Opened, SealingKey};
use crate::state::AppState;
use crate::users::credentials::{self, SignInAccount};

const ISSUER: &str = "supportdesk";

/// The server secret TOTP secrets are sealed with.
const SEAL: &str = "totp-secrets";

/// `secret` sealed for user `user_id`, as it is stored.
async fn sealed(state: &AccountDeps, user_id: Uuid, secret: &str) -> ApiResult<String> {
    let key = SealingKey::load(&state.db, SEAL).await?;
    key.seal(user_id, secret).ok_or_else(ApiError::internal)
}

/// User `user_id`'s TOTP secret (base32) from its stored form. One stored
/// before secrets were sealed is sealed now (only if the row still holds
/// it). One that does not open (the server secret replaced, the row
/// altered) is a 500, never a factor that anything passes.
async fn opened(state: &AccountDeps, user_id: Uuid, stored: &str) -> ApiResult<String> {
    let key = SealingKey::load(&state.db, SEAL).await?;
    match key.open(user_id, stored) {
        Some(Opened::Sealed(secret)) => Ok(secret),
        Some(Opened::Plain(secret)) => {
            let sealed = key.seal(user_id, &secret).ok_or_else(ApiError::internal)?;
            credentials::reseal_totp_secret(&state.db, user_id, stored, &sealed).await?;
            Ok(secret)
        }
        None => {
            tracing::error!(user = %user_id, "a stored TOTP secret does not open");
            Err(ApiError::internal())
        }
    }
}

/// The routes with their OpenAPI operations.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(setup))
        .routes(routes!(confirm))
        .routes(routes!(disable))
}

/// The TOTP of `secret` (base32) for `account_name`.
fn totp_of(secret: &str, account_name: &str) -> Option<Totp> {
    let secret = Secret::try_from_base32(secret).ok()?;
    totp_rs::Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_secret(secret)
        .with_account_name(account_name)
        .with_issuer(Some(ISSUER))
        .build()
        .ok()
}

/// The time step `code` is current for at the node's clock, if it is.
fn matching_step(state: &AccountDeps, totp: &Totp, code: &str) -> Option<i64> {
    let unix = u64::try_from(state.clock.now().0.timestamp()).ok()?;
    totp.check(code, unix)
        .and_then(|step| i64::try_from(step).ok())
}

/// Whether `code` passes `account`'s second factor now: a current TOTP code
/// of a step not used before, or an unused recovery code (used up now).
pub async fn accept_code(
    state: &AccountDeps,
    account: &SignInAccount,
    code: &str,
) -> ApiResult<bool> {
    let stored = credentials::totp_state(&state.db, account.id).await?;
    let Some(stored) = stored.totp_secret.filter(|_| stored.totp_enabled) else {
        return Ok(false);
    };
    let secret = opened(state, account.id, &stored).await?;
    let digits_only = code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit());
    if digits_only {
        let Some(totp) = totp_of(&secret, &account.email) else {
            return Ok(false);
        };
        return match matching_step(state, &totp, code) {
            Some(step) => Ok(credentials::claim_totp_step(&state.db, account.id, step).await?),
            None => Ok(false),
        };
    }
    let digest = crate::auth::key::hash(code);
    Ok(recovery::redeem(&state.db, account.id, &digest, state.clock.now()).await?)
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = TotpSetup)]
#[serde(rename_all = "camelCase")]
struct Setup {
    /// The secret, base32, for typing into an app.
    secret: String,
    /// The `otpauth://` URL to show as a QR code.
    otpauth_url: String,
}

/// Start setting up two-factor authentication
///
/// Makes a new secret (not in force until confirmed) and answers it with
/// its `otpauth://` URL for an authenticator app. 409 when it is on.
#[utoipa::path(post, path = "/api/v1/auth/totp/setup", operation_id = "set_up_totp",
    tag = "Agent sign-in",
    responses(
        (status = 200, description = "The secret to confirm", body = Setup),
        (status = 409, description = "Two-factor authentication is already on", body = ErrorBody),
    ))]
async fn setup(
    State(state): State<AccountDeps>,
    signed_in: SignedIn,
) -> ApiResult<AxumJson<Setup>> {
    let account = account_of(&state, &signed_in).await?;
    if account.totp_enabled {
        return Err(ApiError::conflict(
            "Two-factor authentication is already on; turn it off first",
        ));
    }
    let secret = Secret::generate().to_base32();
    let totp = totp_of(&secret, &account.email).ok_or_else(ApiError::internal)?;
    let otpauth_url = totp.to_url().map_err(|_| ApiError::internal())?;
    let stored = sealed(&state, account.id, &secret).await?;
    let mut tx = state.db.begin().await?;
    credentials::set_totp_secret(&mut tx, account.id, Some(&stored), state.clock.now()).await?;
    tx.commit().await?;
    Ok(AxumJson(Setup {
        secret,
        otpauth_url,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = TotpCode)]
struct CodeBody {
    /// A current six-digit code (or, to turn it off, an unused recovery
    /// code).
    #[schema(value_type = String, required)]
    code: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = TotpConfirmed)]
#[serde(rename_all = "camelCase")]
struct Confirmed {
    /// Shown once: each signs in once in place of a code.
    recovery_codes: Vec<String>,
    /// The fresh session the answer's cookie holds (the one the request
    /// came with has ended), and the token its changes carry.
    session_id: Uuid,
    csrf_token: String,
}

/// Confirm two-factor authentication
///
/// A current code puts the secret set up in force; answers ten one-time
/// recovery codes, once. Ends every session of the agent, this one too,
/// and answers a fresh one (`Set-Cookie`, its `sessionId` and `csrfToken`):
/// the session may now hold more (a company that requires a second factor
/// gives its scopes only now), so it changes id as at sign-in.
#[utoipa::path(post, path = "/api/v1/auth/totp/confirm", operation_id = "confirm_totp",
    tag = "Agent sign-in",
    request_body = CodeBody,
    responses(
        (status = 200, description = "On; the recovery codes", body = Confirmed),
        (status = 409, description = "It is on already, or no setup is pending", body = ErrorBody),
    ))]
async fn confirm(
    State(state): State<AccountDeps>,
    signed_in: SignedIn,
    requested: Requested,
    client: Client,
    headers: HeaderMap,
    Json(body): Json<CodeBody>,
) -> ApiResult<Response> {
    let account = account_of(&state, &signed_in).await?;
    let stored = credentials::totp_state(&state.db, account.id).await?;
    let (Some(stored), false) = (stored.totp_secret, stored.totp_enabled) else {
        return Err(ApiError::conflict(
            "Start with POST /api/v1/auth/totp/setup (two-factor authentication is on, or no \
             setup is pending)",
        ));
    };
    let secret = opened(&state, account.id, &stored).await?;
    let code = body.code.unwrap_or_default();
    let totp = totp_of(&secret, &account.email).ok_or_else(ApiError::internal)?;
    let step = matching_step(&state, &totp, code.trim())
        .ok_or_else(|| ApiError::invalid_field("code", "is not the current code"))?;
    if !credentials::claim_totp_step(&state.db, account.id, step).await? {
        return Err(ApiError::invalid_field("code", "was used already"));
    }
    let codes: Vec<String> = (0..recovery::CODES).map(|_| recovery::new_code()).collect();
    let digests: Vec<String> = codes
        .iter()
        .map(|code| crate::auth::key::hash(code))
        .collect();
    let now = state.clock.now();
    let db = signed_in.principal.acting(&state.db, requested);
    let mut tx = db.begin().await?;
    credentials::enable_totp(&mut tx, account.id, now).await?;
    recovery::replace(&mut tx, account.id, &digests).await?;
    let target = Target::new(TargetType::User, account.id);
    let changes = Changes::none().secret("created");
    let action = Action::TotpEnabled;
    crate::audit::record(&mut tx, account.company_id, now, action, target, changes).await?;
    tx.commit().await?;
    super::end::all_sessions_of(&state, &db, account.company_id, account.id, None).await?;
    let mode = signed_in.principal.tenant.mode;
    let (fresh, cookie) = open_session(&state, &account.into(), mode, client.0, &headers).await?;
    let mut response = AxumJson(Confirmed {
        recovery_codes: codes,
        session_id: fresh.session.session_id(),
        csrf_token: fresh.session.csrf_token().to_owned(),
    })
    .into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    no_store(&mut response);
    Ok(response)
}

/// Turn two-factor authentication off
///
/// Takes a current code or an unused recovery code. Ends the agent's
/// other sessions.
#[utoipa::path(delete, path = "/api/v1/auth/totp", operation_id = "turn_off_totp",
    tag = "Agent sign-in",
    request_body = CodeBody,
    responses(
        (status = 204, description = "Off"),
        (status = 409, description = "It is off", body = ErrorBody),
    ))]
async fn disable(
    State(state): State<AccountDeps>,
    signed_in: SignedIn,
    requested: Requested,
    Json(body): Json<CodeBody>,
) -> ApiResult<StatusCode> {
    let account = account_of(&state, &signed_in).await?;
    if !account.totp_enabled {
        return Err(ApiError::conflict("Two-factor authentication is off"));
    }
    let code = body.code.unwrap_or_default();
    if !accept_code(&state, &account, code.trim()).await? {
        return Err(ApiError::invalid_field(
            "code",
            "is neither the current code nor an unused recovery code",
        ));
    }
    let now = state.clock.now();
    let db = signed_in.principal.acting(&state.db, requested);
    let mut tx = db.begin().await?;
    credentials::set_totp_secret(&mut tx, account.id, None, now).await?;
    recovery::replace(&mut tx, account.id, &[]).await?;
    let target = Target::new(TargetType::User, account.id);
    let changes = Changes::none().secret("removed");
    let action = Action::TotpDisabled;
    crate::audit::record(&mut tx, account.company_id, now, action, target, changes).await?;
    tx.commit().await?;
    let keep = Some(signed_in.session.session_id());
    super::end::all_sessions_of(&state, &db, account.company_id, account.id, keep).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn account_of(state: &AccountDeps, signed_in: &SignedIn) -> ApiResult<SignInAccount> {
    credentials::account(&state.db, signed_in.company_id(), signed_in.user_id())
        .await?
        .ok_or_else(ApiError::not_found)
}
