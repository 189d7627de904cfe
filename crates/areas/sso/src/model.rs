//! A company's SSO configuration as the API shows it, and the pure rules
//! about it.

use serde::Serialize;
use uuid::Uuid;

use crate::time::Timestamp;

crate::text_enum! {
    /// The role a user created at their first SSO sign-in gets. `owner`
    /// is never given this way, and `viewer` waits for the roles of issue
    /// 50 (today's users are AGENT or ADMIN only, and a viewer made an
    /// AGENT would hold more than asked for).
    pub enum JitRole {
        Agent = "agent",
        Admin = "admin",
    }
}

/// The JIT role names, as an enum schema for the OpenAPI document.
pub fn jit_role_schema() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(JitRole::NAMES)
}

/// A company's OpenID Connect configuration. The client secret is held
/// only by `SsoSecrets`: this is what `GET /settings/sso` shows.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SsoConfig {
    #[serde(skip)]
    pub company_id: Uuid,
    /// The company's name in the start path `/auth/sso/{slug}/start`.
    pub slug: String,
    pub issuer_url: String,
    pub client_id: String,
    /// Only users whose email is at this domain may sign in.
    pub allowed_email_domain: Option<String>,
    /// Create an unknown user at their first sign-in.
    pub jit_enabled: bool,
    #[schema(schema_with = jit_role_schema)]
    pub jit_role: JitRole,
    /// Password sign-in refused for the company's agents.
    pub passwords_disabled: bool,
    /// When an SSO sign-in with this issuer and client first succeeded;
    /// `passwordsDisabled` can be set only after that.
    pub verified_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A configuration to store (`PUT /settings/sso`), checked by the route.
#[derive(Debug, Clone)]
pub struct SsoSettings {
    pub slug: String,
    pub issuer_url: String,
    pub client_id: String,
    /// `None` keeps the stored secret (refused when there is none).
    pub client_secret: Option<String>,
    pub allowed_email_domain: Option<String>,
    pub jit_enabled: bool,
    pub jit_role: JitRole,
    pub passwords_disabled: bool,
}

/// Why a configuration was not stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `passwordsDisabled` before an SSO sign-in with this issuer and client
    /// has succeeded.
    NotVerified,
    /// The first configuration of a company came without a client secret.
    SecretMissing,
}

/// Whether `email` is at `domain` (case-insensitively; the domain is the
/// part after the last `@`, and a subdomain is not the domain).
pub fn email_in_domain(email: &str, domain: &str) -> bool {
    email
        .rsplit_once('@')
        .is_some_and(|(local, at)| !local.is_empty() && at.eq_ignore_ascii_case(domain))
}

#[cfg(test)]
mod tests {
    use super::email_in_domain;

    #[test]
    fn an_email_is_in_a_domain_only_by_its_whole_host() {
        assert!(email_in_domain("ann@acme.test", "acme.test"));
        assert!(email_in_domain("Ann@ACME.test", "acme.TEST"));
        assert!(!email_in_domain("ann@mail.acme.test", "acme.test"));
        assert!(!email_in_domain("ann@evilacme.test", "acme.test"));
        assert!(!email_in_domain("acme.test", "acme.test"));
        assert!(!email_in_domain("@acme.test", "acme.test"));
    }
}
