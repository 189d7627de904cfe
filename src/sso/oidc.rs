//! The identity provider's side of a sign-in, through `openidconnect`:
//! discovery, the authorization URL (code flow with PKCE S256, `state` and
//! `nonce`), the code exchange and the ID token's verification (signature
//! against the provider's JWKS, `iss`, `aud`, `exp`, `nonce`; an unsigned
//! token is refused by the verifier).
//!
//! Their HTTP goes through our reqwest (openidconnect's own reqwest
//! feature would bring a second reqwest with a second TLS provider), with
//! redirects off: a provider's endpoint that redirects is an error, not a
//! hop to wherever it points. The issuer is a URL a key with
//! `settings:write` chose, so it passes the webhooks' SSRF guard (and its
//! `webhook_allow_private` switch) like a webhook URL.

use std::sync::OnceLock;
use std::time::Duration;

use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet, EndpointNotSet,
    EndpointSet, HttpRequest, HttpResponse, IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, Scope, TokenResponse,
};

use crate::sso::store::SsoSecrets;
use crate::time::Clock;
use crate::webhooks::guard::{self, GuardedResolver};

/// How long one call to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// A provider's answer larger than this is refused (discovery, JWKS and
/// token answers are a few KiB).
const ANSWER_MAX: usize = 256 * 1024;

/// A client of the provider, from its discovery document.
pub type Provider = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Why talking to the provider failed; the text goes into the 401's
/// message (it names a check or the provider's answer, never our internals).
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("the identity provider's configuration could not be read: {0}")]
    Discovery(String),
    #[error("the identity provider refused the code: {0}")]
    Exchange(String),
    #[error("the identity provider answered without an ID token")]
    NoIdToken,
    #[error("the ID token was refused: {0}")]
    IdToken(String),
}

/// Errors of our HTTP client as openidconnect sees them.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("{0}")]
    Request(#[from] reqwest::Error),
    #[error("the answer is larger than {ANSWER_MAX} bytes")]
    TooLarge,
    #[error("{0}")]
    Http(#[from] openidconnect::http::Error),
    #[error("{}", guard::BLOCKED)]
    Blocked,
}

/// Our HTTP client to providers, built once per guard setting.
#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    allow_private: bool,
}

impl Http {
    pub fn new(allow_private: bool) -> Result<Http, ProviderError> {
        static GUARDED: OnceLock<reqwest::Client> = OnceLock::new();
        static OPEN: OnceLock<reqwest::Client> = OnceLock::new();
        let cell = if allow_private { &OPEN } else { &GUARDED };
        let client = match cell.get() {
            Some(client) => client.clone(),
            None => {
                let client = reqwest::Client::builder()
                    .dns_resolver(GuardedResolver { allow_private })
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .timeout(PROVIDER_TIMEOUT)
                    .build()
                    .map_err(|err| ProviderError::Discovery(err.to_string()))?;
                cell.get_or_init(|| client).clone()
            }
        };
        Ok(Http {
            client,
            allow_private,
        })
    }
}

/// One request of openidconnect's, sent with our client.
async fn send(http: Http, request: HttpRequest) -> Result<HttpResponse, HttpError> {
    let request = reqwest::Request::try_from(request)?;
    // A literal IP never meets the resolver.
    if !http.allow_private && guard::literal_ip(request.url()).is_some_and(guard::is_forbidden) {
        return Err(HttpError::Blocked);
    }
    let client = http.client;
    let mut response = client.execute(request).await?;
    let mut answer = openidconnect::http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > ANSWER_MAX {
            return Err(HttpError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(answer.body(body)?)
}

/// The provider configured in `config`, read from its discovery document
/// (and JWKS), with `redirect` as our callback.
pub async fn provider(
    http: &Http,
    config: &SsoSecrets,
    redirect: &str,
) -> Result<Provider, ProviderError> {
    let http = http.clone();
    let fetch = move |request| send(http.clone(), request);
    let issuer = IssuerUrl::new(config.config.issuer_url.clone())
        .map_err(|err| ProviderError::Discovery(err.to_string()))?;
    let metadata = CoreProviderMetadata::discover_async(issuer, &fetch)
        .await
        .map_err(|err| ProviderError::Discovery(error_chain(&err)))?;
    let redirect = RedirectUrl::new(redirect.to_string())
        .map_err(|err| ProviderError::Discovery(err.to_string()))?;
    Ok(CoreClient::from_provider_metadata(
        metadata,
        ClientId::new(config.config.client_id.clone()),
        Some(ClientSecret::new(config.client_secret.clone())),
    )
    .set_redirect_uri(redirect))
}

/// Where to send the browser, and the secrets the callback needs.
pub struct Authorization {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// The authorization request: code flow, PKCE S256, a fresh `state` and
/// `nonce`, scopes `openid email profile`.
pub fn authorize(provider: &Provider) -> Authorization {
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state, nonce) = provider
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_scope(Scope::new("email".to_string()))
        .add_scope(Scope::new("profile".to_string()))
        .set_pkce_challenge(challenge)
        .url();
    Authorization {
        url: url.to_string(),
        state: state.secret().clone(),
        nonce: nonce.secret().clone(),
        pkce_verifier: verifier.secret().clone(),
    }
}

/// Who the provider says signed in.
#[derive(Debug, Clone)]
pub struct Identity {
    pub email: Option<String>,
    /// `None` when the token does not say.
    pub email_verified: Option<bool>,
    pub name: Option<String>,
}

/// Exchanges `code` and verifies the ID token against `nonce`, at the
/// service's time (`clock`).
pub async fn identity(
    http: &Http,
    provider: &Provider,
    code: String,
    pkce_verifier: String,
    nonce: String,
    clock: &Clock,
) -> Result<Identity, ProviderError> {
    let http = http.clone();
    let fetch = move |request| send(http.clone(), request);
    let tokens = provider
        .exchange_code(AuthorizationCode::new(code))
        .map_err(|err| ProviderError::Exchange(err.to_string()))?
        .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier))
        .request_async(&fetch)
        .await
        .map_err(|err| ProviderError::Exchange(error_chain(&err)))?;
    let id_token = tokens.id_token().ok_or(ProviderError::NoIdToken)?;
    let clock = clock.clone();
    let verifier = provider
        .id_token_verifier()
        .set_time_fn(move || clock.now().0);
    let claims = id_token
        .claims(&verifier, &Nonce::new(nonce))
        .map_err(|err| ProviderError::IdToken(error_chain(&err)))?;
    Ok(Identity {
        email: claims.email().map(|email| email.as_str().to_string()),
        email_verified: claims.email_verified(),
        name: claims
            .name()
            .and_then(|name| name.get(None))
            .map(|name| name.as_str().to_string()),
    })
}

/// An error with its sources, one line.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
