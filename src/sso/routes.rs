//! `/settings/sso`: a company's OpenID Connect configuration. The client
//! secret is write-only: stored, never shown.

use axum::extract::State;
use axum::http::StatusCode;
use openidconnect::url::{Host, Url};
use serde::{Deserialize, Serialize};
use utoipa_axum::routes;

use super::model::{JitRole, Refusal, SsoConfig, SsoSettings};
use super::store;
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode, FieldError};
use crate::extract::{Json, Requested};
use crate::router::ApiRouter;
use crate::state::PublicUrl;
use crate::time::Clock;
use crate::validate::{Fields, optional_enum, optional_text, problem, required_text};

const SLUG_MAX: usize = 63;
const URL_MAX: usize = 2000;
const CLIENT_ID_MAX: usize = 255;
const SECRET_MAX: usize = 2000;
const DOMAIN_MAX: usize = 253;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::SettingsRead, routes!(get_sso))
        .route(Scope::SettingsWrite, routes!(put_sso))
}

/// The configuration with the two URLs an admin needs.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SsoSettingsView {
    #[serde(flatten)]
    config: SsoConfig,
    /// The redirect URI to register with the provider.
    callback_url: String,
    /// Where the company's agents start a sign-in.
    start_url: String,
}

impl SsoSettingsView {
    fn of(config: SsoConfig, public_url: &str) -> Self {
        SsoSettingsView {
            callback_url: super::callback_url(public_url),
            start_url: super::start_url(public_url, &config.slug),
            config,
        }
    }
}

/// The whole configuration (a PUT replaces it).
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = PutSsoSettings)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PutBody {
    /// Lowercase letters, digits and `-`; unique across companies.
    #[schema(value_type = String, required, min_length = 1, max_length = 63,
        pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    slug: Option<String>,
    /// The provider's issuer (its discovery document is at
    /// `{issuerUrl}/.well-known/openid-configuration`): https, or http on
    /// a loopback host.
    #[schema(value_type = String, required, min_length = 1, max_length = 2000)]
    issuer_url: Option<String>,
    #[schema(value_type = String, required, min_length = 1, max_length = 255)]
    client_id: Option<String>,
    /// Required the first time; absent or null keeps the stored one.
    #[schema(max_length = 2000)]
    client_secret: Option<String>,
    /// e.g. `acme.com`; null allows any email the provider vouches for.
    #[schema(max_length = 253)]
    allowed_email_domain: Option<String>,
    #[serde(default)]
    jit_enabled: bool,
    /// `agent` (the default) or `admin`.
    #[schema(schema_with = crate::sso::model::jit_role_schema)]
    jit_role: Option<String>,
    /// Refused (409 `sso_not_verified`) until an SSO sign-in through this
    /// issuer and client has succeeded.
    #[serde(default)]
    passwords_disabled: bool,
}

/// Get the company's SSO configuration
///
/// The client secret is never shown.
#[utoipa::path(get, path = "/settings/sso", tag = "Settings",
    responses(
        (status = 200, description = "The configuration", body = SsoSettingsView),
        (status = 404, description = "SSO is not configured", body = crate::openapi::schema::ErrorBody)))]
async fn get_sso(
    State(db): State<Db>,
    State(PublicUrl(public_url)): State<PublicUrl>,
    principal: Principal,
) -> ApiResult<Json<SsoSettingsView>> {
    let config = store::find(&db, principal.tenant.company_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(Json(SsoSettingsView::of(config, &public_url)))
}

/// Set the company's SSO configuration
#[utoipa::path(put, path = "/settings/sso", tag = "Settings",
    request_body = PutBody,
    responses(
        (status = 200, description = "The stored configuration", body = SsoSettingsView),
        (status = 409, description = "`sso_not_verified`: passwords cannot be turned off before an SSO sign-in has succeeded; `conflict`: another company has the slug",
            body = crate::openapi::schema::ErrorBody)))]
async fn put_sso(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(PublicUrl(public_url)): State<PublicUrl>,
    principal: Principal,
    requested: Requested,
    Json(body): Json<PutBody>,
) -> ApiResult<Json<SsoSettingsView>> {
    let (slug, issuer_url, client_id, client_secret, allowed_email_domain, jit_role) = (
        slug(body.slug.as_deref()),
        issuer_url(body.issuer_url.as_deref()),
        required_text("clientId", body.client_id.as_deref(), CLIENT_ID_MAX),
        optional_text("clientSecret", body.client_secret.as_deref(), SECRET_MAX),
        email_domain(body.allowed_email_domain.as_deref()),
        optional_enum::<JitRole>("jitRole", body.jit_role.as_deref()),
    )
        .all_valid()?;
    let settings = SsoSettings {
        slug,
        issuer_url,
        client_id,
        client_secret,
        allowed_email_domain,
        jit_enabled: body.jit_enabled,
        jit_role: jit_role.unwrap_or(JitRole::Agent),
        passwords_disabled: body.passwords_disabled,
    };
    let company = principal.tenant.company_id;
    let db = principal.acting(&db, requested);
    match store::save(&db, company, settings, clock.now()).await? {
        Ok(config) => Ok(Json(SsoSettingsView::of(config, &public_url))),
        Err(Refusal::SecretMissing) => Err(ApiError::invalid_field(
            "clientSecret",
            "is required the first time",
        )),
        Err(Refusal::NotVerified) => Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::SsoNotVerified,
            "passwordsDisabled can be set only after an SSO sign-in through this issuer \
             and client has succeeded",
        )),
    }
}

fn slug(value: Option<&str>) -> Result<String, FieldError> {
    let slug = required_text("slug", value, SLUG_MAX)?;
    let shaped = slug
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !slug.starts_with('-')
        && !slug.ends_with('-');
    if shaped {
        Ok(slug)
    } else {
        Err(problem(
            "slug",
            "must be lowercase letters, digits and inner hyphens",
        ))
    }
}

/// An issuer: https, or http on a loopback host (a provider on the same
/// machine, as in development); no query or fragment (the discovery path
/// is appended to it).
fn issuer_url(value: Option<&str>) -> Result<String, FieldError> {
    let text = required_text("issuerUrl", value, URL_MAX)?;
    let refused = || {
        problem(
            "issuerUrl",
            "must be an https URL without query or fragment",
        )
    };
    let url = Url::parse(&text).map_err(|_| refused())?;
    let loopback = match url.host() {
        Some(Host::Domain(host)) => host == "localhost",
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    let scheme_ok = url.scheme() == "https" || (url.scheme() == "http" && loopback);
    if !scheme_ok || url.query().is_some() || url.fragment().is_some() || !url.username().is_empty()
    {
        return Err(refused());
    }
    // Kept as given: the ID token's `iss` must equal it exactly.
    Ok(text)
}

fn email_domain(value: Option<&str>) -> Result<Option<String>, FieldError> {
    let Some(domain) = optional_text("allowedEmailDomain", value, DOMAIN_MAX)? else {
        return Ok(None);
    };
    let domain = domain.to_ascii_lowercase();
    let shaped = domain.contains('.')
        && domain.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    if shaped {
        Ok(Some(domain))
    } else {
        Err(problem(
            "allowedEmailDomain",
            "must be a domain name such as acme.com (without @)",
        ))
    }
}
