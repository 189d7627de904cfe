//! Checking a sign-in: the lock-outs first (no store work, no hashing for a
//! locked-out client or account), then the password, then the second
//! factor. An unknown email and a wrong password get the same answer after
//! the same work: one argon2 verification either way (against a decoy hash
//! when no account has the email).

use std::net::IpAddr;

use uuid::Uuid;

use super::AccountDeps;
use super::answers::invalid_credentials;
use super::guard::Subject;
use super::sessions::SignInFailure;
use super::{password, sessions};
use crate::actor::RequestContext;
use crate::error::{ApiError, ApiResult};
use crate::ratelimit::{self, client::client_key};
use crate::users::credentials::{self, SignInAccount};

/// The account `email` and `password` sign in to, or the 401/429 to answer.
pub async fn verify_password(
    state: &AccountDeps,
    email: &str,
    password: String,
    client: Option<IpAddr>,
    request: &RequestContext,
) -> ApiResult<SignInAccount> {
    let guard = &state.access.sign_in_guard;
    let subjects = subjects(email, client);
    for subject in &subjects {
        if let Some(wait) = guard.locked_for(subject).await {
            crate::metrics::rate_limited(crate::metrics::Limiter::AuthFailures);
            return Err(ratelimit::exceeded(wait.as_secs().max(1)));
        }
    }
    let candidates = if email.is_empty() {
        Vec::new()
    } else {
        credentials::sign_in_candidates(&state.db, email).await?
    };
    let named: Vec<(Uuid, Uuid, String)> = candidates
        .iter()
        .map(|account| (account.company_id, account.id, account.name.clone()))
        .collect();
    let matched = super::hashing::in_turn(move || first_match(candidates, &password))
        .await
        .ok_or_else(ApiError::internal)?;
    match matched {
        Some(account) => {
            for subject in &subjects {
                guard.clear(subject).await;
            }
            // Told only to who knows the password: no account is revealed.
            if crate::sso::store::passwords_disabled(&state.db, account.company_id).await? {
                return Err(ApiError::new(
                    axum::http::StatusCode::FORBIDDEN,
                    crate::error::ErrorCode::SsoRequired,
                    "This company signs in with SSO only: GET /api/v1/auth/sso/{slug}/start",
                ));
            }
            Ok(account)
        }
        None => {
            let mut locked_for = None;
            for subject in &subjects {
                locked_for = locked_for.max(guard.record_failure(subject).await);
            }
            for (company_id, user_id, name) in &named {
                let failure = SignInFailure {
                    reason: "password",
                    locked_for,
                };
                failed(state, request, (*company_id, *user_id, name), failure).await?;
            }
            Err(invalid_credentials())
        }
    }
}

/// Records a failed sign-in to the account `named` (company, user, name)
/// in its company's audit log, with the lock-out it started.
async fn failed(
    state: &AccountDeps,
    request: &RequestContext,
    (company_id, user_id, name): (Uuid, Uuid, &str),
    failure: SignInFailure<'_>,
) -> ApiResult<()> {
    let db = state.db.with_request(request.clone());
    let now = state.clock.now();
    sessions::record_failed_sign_in(&db, company_id, user_id, name, failure, now).await?;
    Ok(())
}

/// Whose failures a sign-in counts: the account's (by email) and the
/// client's (an IPv6 client by its /64).
fn subjects(email: &str, client: Option<IpAddr>) -> Vec<Subject> {
    let mut subjects = vec![Subject::Account(email.to_owned())];
    if let Some(client) = client {
        subjects.push(Subject::Client(client_key(client)));
    }
    subjects
}

/// The first of `candidates` whose password is `password`. With no
/// candidate it verifies against the decoy, so the time is the same.
fn first_match(candidates: Vec<SignInAccount>, password: &str) -> Option<SignInAccount> {
    if candidates.is_empty() {
        password::verify(password::decoy_hash(), password);
        return None;
    }
    candidates.into_iter().find(|account| {
        account
            .password_hash
            .as_deref()
            .is_some_and(|hash| password::verify(hash, password))
    })
}

/// The second factor of `account`, when it has one: `code` must be a
/// current TOTP code not used before, or an unused recovery code; a missing
/// one is 401 `totp_required`, a wrong one 401 `invalid_credentials`.
pub async fn check_second_factor(
    state: &AccountDeps,
    account: &SignInAccount,
    code: Option<&str>,
    request: &RequestContext,
) -> ApiResult<()> {
    if !account.totp_enabled {
        return Ok(());
    }
    let Some(code) = code.map(str::trim).filter(|code| !code.is_empty()) else {
        return Err(ApiError::unauthorized(
            crate::error::ErrorCode::TotpRequired,
            "This account has two-factor authentication: give the code in `totp`",
        ));
    };
    if super::totp::accept_code(state, account, code).await? {
        Ok(())
    } else {
        let mut locked_for = None;
        for subject in subjects(&account.email, None) {
            locked_for = locked_for.max(state.access.sign_in_guard.record_failure(&subject).await);
        }
        let named = (account.company_id, account.id, account.name.as_str());
        let failure = SignInFailure {
            reason: "second_factor",
            locked_for,
        };
        failed(state, request, named, failure).await?;
        Err(invalid_credentials())
    }
}
