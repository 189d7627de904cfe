//! One-time links that set a password, and changing one's own password.
//!
//! - An invitation (`POST /users` with `invite: true`, `supportdesk users
//!   invite`) emails a link valid for `INVITATION_LIFETIME`;
//!   `POST /auth/invitations/accept {token, password, name?}` sets the
//!   first password and signs in.
//! - `POST /auth/password-reset {email}` answers 202 whatever the email and
//!   emails each account with it a link valid for `RESET_LIFETIME`;
//!   `POST /auth/password-reset/confirm {token, password}` sets the new
//!   password, ends every session of the user and clears the account's
//!   failed sign-ins.
//! - `POST /auth/password {currentPassword, newPassword}` (signed in) ends
//!   the user's other sessions.
//!
//! Only the newest link of a kind works; a used or expired one is 400
//! `invalid_link`.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use super::AccountDeps;
use super::answers::{invalid_credentials, new_password};
use super::guard::Subject;
use super::signed_in::{Client, SignedIn};
use super::start::{Me, SessionOwner, start_session};
use super::tokens::{self, LinkedAccount, TokenKind};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::{Mode, Tenant};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode, StoreError};
use crate::extract::{Json, Requested};
use crate::mail::Email;
use crate::openapi::schema::ErrorBody;
use crate::ratelimit::Limiter;
use crate::state::AppState;
use crate::time::Timestamp;
use crate::users::credentials;

/// A reset link works for an hour.
pub const RESET_LIFETIME: Duration = Duration::from_secs(60 * 60);
/// An invitation works for a week.
pub const INVITATION_LIFETIME: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Reset emails one address may be sent per hour (beyond, 202 and nothing).
const RESETS_PER_HOUR: u64 = 5;

/// The routes with their OpenAPI operations.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(request_reset))
        .routes(routes!(confirm_reset))
        .routes(routes!(accept_invitation))
        .routes(routes!(change_password))
        .merge(super::totp::router())
}

/// The link to `path` on the console with `secret` in its fragment (a
/// fragment never reaches a server log or a `Referer`).
fn link(public_url: &str, path: &str, secret: &str) -> String {
    format!("{public_url}/app/{path}#token={secret}")
}

/// Emails `account` (at `to`) a new link of `kind` on the service at
/// `public_url`, queued in the transaction that stores it; the link.
pub async fn send_link(
    db: &Db,
    public_url: &str,
    now: Timestamp,
    account: LinkedAccount,
    to: &str,
    kind: TokenKind,
) -> Result<String, StoreError> {
    let secret = tokens::new_secret();
    let invitation_link = link(public_url, "accept-invitation", &secret);
    let reset_link = link(public_url, "reset-password", &secret);
    let (lifetime, email, sent) = match kind {
        TokenKind::Invitation => (
            INVITATION_LIFETIME,
            Email {
                to: to.to_owned(),
                subject: "You are invited to the support desk".into(),
                text: format!(
                    "You have been invited to answer customers on the support desk.\n\n\
                     Choose your password here (the link works for 7 days, once):\n{}\n",
                    invitation_link
                ),
                html: None,
            },
            invitation_link.clone(),
        ),
        TokenKind::PasswordReset => (
            RESET_LIFETIME,
            Email {
                to: to.to_owned(),
                subject: "Reset your support desk password".into(),
                text: format!(
                    "Someone asked to reset the password of this support desk account.\n\n\
                     Choose a new password here (the link works for an hour, once):\n{}\n\n\
                     If it was not you, ignore this email: your password stays as it is.\n",
                    reset_link
                ),
                html: None,
            },
            reset_link.clone(),
        ),
    };
    let tenant = Tenant::new(account.company_id, Mode::Live);
    let mut tx = db.begin().await?;
    let digest = crate::auth::key::hash(&secret);
    tokens::issue(&mut tx, kind, account, &digest, now, now.plus(lifetime)).await?;
    crate::mail::queue(&mut tx, &tenant, &email).await?;
    if kind == TokenKind::Invitation {
        // The link is a secret: the entry says one was sent, never which.
        let target = Target::new(TargetType::User, account.user_id);
        let changes = Changes::none()
            .secret("created")
            .with("after", serde_json::json!({"email": to}));
        let action = Action::UserInvited;
        crate::audit::record(&mut tx, account.company_id, now, action, target, changes).await?;
    }
    tx.commit().await?;
    Ok(sent)
}

/// Emails user `user_id` of `company_id` (at `email`) an invitation.
pub async fn invite(
    state: &AccountDeps,
    db: &Db,
    company_id: Uuid,
    user_id: Uuid,
    email: &str,
) -> ApiResult<()> {
    let account = LinkedAccount {
        company_id,
        user_id,
    };
    let now = state.clock.now();
    send_link(
        db,
        &state.public_url,
        now,
        account,
        email,
        TokenKind::Invitation,
    )
    .await?;
    Ok(())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = PasswordResetRequest)]
struct ResetRequest {
    #[schema(value_type = String, format = Email, required)]
    email: Option<String>,
}

/// Ask for a password reset link
///
/// 202 whatever the email: each account with it is emailed a link that
/// works once, for an hour (at most 5 emails an address an hour).
#[utoipa::path(post, path = "/api/v1/auth/password-reset", operation_id = "request_password_reset",
    tag = "Agent sign-in",
    request_body = ResetRequest,
    responses((status = 202, description = "Accepted, whether or not the email has an account")))]
async fn request_reset(
    State(state): State<AccountDeps>,
    Json(body): Json<ResetRequest>,
) -> ApiResult<StatusCode> {
    let email = body.email.unwrap_or_default().trim().to_lowercase();
    if email.is_empty() {
        return Err(ApiError::invalid_field("email", "is required"));
    }
    // Whatever happens next, the answer is the same 202: it tells no one
    // whether the email has an account.
    let bucket = format!("pwreset:{}", crate::auth::key::hash(&email));
    let allowed = state
        .access
        .limiter
        .check(&bucket, RESETS_PER_HOUR, Duration::from_secs(60 * 60))
        .await
        .map(|decision| decision.allowed)
        .unwrap_or(false);
    if allowed {
        for account in credentials::accounts_with_email(&state.db, &email).await? {
            let linked = LinkedAccount {
                company_id: account.company_id,
                user_id: account.id,
            };
            let (db, url, now) = (&state.db, &state.public_url, state.clock.now());
            send_link(
                db,
                url,
                now,
                linked,
                &account.email,
                TokenKind::PasswordReset,
            )
            .await?;
        }
    }
    Ok(StatusCode::ACCEPTED)
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = SetPasswordByLink)]
struct SetPassword {
    /// The secret of the emailed link (after `#token=`).
    #[schema(value_type = String, required)]
    token: Option<String>,
    /// The new password (10 characters to 256 bytes).
    #[schema(value_type = String, required)]
    password: Option<String>,
    /// An invitation may also set the name the agent goes by.
    #[schema(schema_with = crate::openapi::schema::name)]
    name: Option<String>,
}

fn invalid_link() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        ErrorCode::InvalidLink,
        "The link is unknown, used or expired; ask for a new one",
    )
}

/// Redeems the link of `kind` in `body` and sets its account's password;
/// the account.
async fn redeem_with_password(
    state: &AccountDeps,
    db: &Db,
    kind: TokenKind,
    body: &SetPassword,
) -> ApiResult<LinkedAccount> {
    let password = new_password("password", body.password.as_deref())?;
    let name = match body.name.as_deref() {
        Some(raw) => Some(
            crate::validate::required_text("name", Some(raw), crate::validate::NAME_MAX)
                .map_err(|problem| ApiError::validation(vec![problem]))?,
        ),
        None => None,
    };
    let hash = super::hashing::in_turn(move || password.hash())
        .await
        .ok_or_else(ApiError::internal)?
        .map_err(|_| ApiError::internal())?;
    let secret = body.token.as_deref().unwrap_or("").trim();
    let now = state.clock.now();
    let mut tx = db.begin().await?;
    let Some(account) = tokens::redeem(&mut tx, kind, &crate::auth::key::hash(secret), now).await?
    else {
        return Err(invalid_link());
    };
    let (company, user) = (account.company_id, account.user_id);
    credentials::set_password_hash(&mut tx, company, user, &hash, now).await?;
    // An accepted invitation is the user's first password, not a change.
    if kind == TokenKind::PasswordReset {
        let how = credentials::PasswordSet::Reset;
        credentials::record_password_set(&mut tx, company, user, how, now).await?;
    }
    if let Some(name) = name {
        credentials::set_name(&mut tx, account.user_id, &name, now).await?;
    }
    tx.commit().await?;
    Ok(account)
}

/// Set a new password with a reset link
///
/// Ends every session of the agent and lifts the account's lock-out. A
/// used, expired or unknown link is 400 `invalid_link`.
#[utoipa::path(post, path = "/api/v1/auth/password-reset/confirm", operation_id = "confirm_password_reset",
    tag = "Agent sign-in",
    request_body = SetPassword,
    responses((status = 204, description = "The password is set")))]
async fn confirm_reset(
    State(state): State<AccountDeps>,
    requested: Requested,
    Json(body): Json<SetPassword>,
) -> ApiResult<StatusCode> {
    let db = state.db.with_request(requested.0);
    let account = redeem_with_password(&state, &db, TokenKind::PasswordReset, &body).await?;
    let (company, user) = (account.company_id, account.user_id);
    super::end::all_sessions_of(&state, &state.db, company, user, None).await?;
    if let Some(found) =
        credentials::account(&state.db, account.company_id, account.user_id).await?
    {
        let subject = Subject::Account(found.email);
        state.access.sign_in_guard.clear(&subject).await;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Accept an invitation
///
/// Sets the first password (and the name, if given) and signs the new
/// agent in, as `POST /auth/login` does. A used, expired or unknown link is
/// 400 `invalid_link`.
#[utoipa::path(post, path = "/api/v1/auth/invitations/accept", operation_id = "accept_invitation",
    tag = "Agent sign-in",
    request_body = SetPassword,
    responses((status = 200, description = "Signed in", body = Me,
        headers(("Set-Cookie" = String, description = "The session cookie `sd_session`")))))]
async fn accept_invitation(
    State(state): State<AccountDeps>,
    client: Client,
    headers: HeaderMap,
    Json(body): Json<SetPassword>,
) -> ApiResult<Response> {
    let account = redeem_with_password(&state, &state.db, TokenKind::Invitation, &body).await?;
    let owner = SessionOwner {
        company_id: account.company_id,
        user_id: account.user_id,
    };
    start_session(&state, &owner, Mode::Live, client.0, &headers).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = PasswordChange)]
#[serde(rename_all = "camelCase")]
struct ChangePassword {
    #[schema(value_type = String, required)]
    current_password: Option<String>,
    /// 10 characters to 256 bytes.
    #[schema(value_type = String, required)]
    new_password: Option<String>,
}

/// Change one's password
///
/// Ends the agent's other sessions. A wrong `currentPassword` is 401
/// `invalid_credentials`.
#[utoipa::path(post, path = "/api/v1/auth/password", operation_id = "change_password",
    tag = "Agent sign-in",
    request_body = ChangePassword,
    responses(
        (status = 204, description = "Changed"),
        (status = 401, description = "`invalid_credentials`: the current password is wrong; \
            or no valid session", body = ErrorBody),
    ))]
async fn change_password(
    State(state): State<AccountDeps>,
    signed_in: SignedIn,
    requested: Requested,
    Json(body): Json<ChangePassword>,
) -> ApiResult<StatusCode> {
    let password = new_password("newPassword", body.new_password.as_deref())?;
    let account = credentials::account(&state.db, signed_in.company_id(), signed_in.user_id())
        .await?
        .ok_or_else(ApiError::not_found)?;
    let current = body.current_password.unwrap_or_default();
    let stored = account.password_hash.clone().unwrap_or_default();
    let (matches, hash) = super::hashing::in_turn(move || {
        let matches = super::password::verify(&stored, &current);
        (matches, matches.then(|| password.hash()))
    })
    .await
    .ok_or_else(ApiError::internal)?;
    if !matches {
        return Err(invalid_credentials());
    }
    let hash = hash
        .ok_or_else(ApiError::internal)?
        .map_err(|_| ApiError::internal())?;
    let now = state.clock.now();
    let db = signed_in.principal.acting(&state.db, requested);
    let mut tx = db.begin().await?;
    credentials::set_password_hash(&mut tx, account.company_id, account.id, &hash, now).await?;
    let how = credentials::PasswordSet::Changed;
    credentials::record_password_set(&mut tx, account.company_id, account.id, how, now).await?;
    tx.commit().await?;
    let keep = Some(signed_in.session.session_id());
    super::end::all_sessions_of(&state, &state.db, account.company_id, account.id, keep).await?;
    Ok(StatusCode::NO_CONTENT)
}
