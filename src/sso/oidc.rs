//! The identity provider's side of a sign-in, through `openidconnect`:
//! discovery, the authorization URL (code flow with PKCE S256, `state` and
//! `nonce`), the code exchange and the ID token's verification (signature
//! against the provider's JWKS, `iss`, `aud`, `exp`, `nonce`; an unsigned
//! token is refused by the verifier). The discovery document and JWKS are
//! kept per issuer for a while (`sso::providers`).
//!
//! Their HTTP goes through our reqwest (openidconnect's own reqwest
//! feature would bring a second reqwest with a second TLS provider), with
//! redirects off: a provider's endpoint that redirects is an error, not a
//! hop to wherever it points. The issuer is a URL a key with
//! `settings:write` chose, so it passes the webhooks' SSRF guard (and its
//! `webhook_allow_private` switch) like a webhook URL.

use std::sync::OnceLock;
use std::time::Duration;

use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, SignatureVerificationError,
    TokenResponse,
};

use super::providers::Providers;
use crate::sso::store::SsoSecrets;
use crate::time::Clock;
use crate::webhooks::guard::{self, GuardedResolver};

/// How long one call to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// A provider's answer larger than this is refused (discovery, JWKS and
/// token answers are a few KiB).
const ANSWER_MAX: usize = 256 * 1024;

/// A client of the provider, from its discovery document.
pub type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// A company's provider: our client of it, and its discovery document (for
/// fetching its keys again).
pub struct Provider {
    pub client: Client,
    issuer: String,
    metadata: CoreProviderMetadata,
    config_client_id: String,
    client_secret: String,
    redirect: RedirectUrl,
}

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

/// openidconnect's HTTP client: our `send` with `http`.
pub(crate) fn fetcher(
    http: &Http,
) -> impl Fn(
    HttpRequest,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<HttpResponse, HttpError>> + Send>,
> + use<> {
    let http = http.clone();
    move |request| Box::pin(send(http.clone(), request))
}

/// The provider configured in `config`, from its discovery document (and
/// JWKS) as `providers` keeps it (ages on `clock`), with `redirect` as our
/// callback.
pub async fn provider(
    http: &Http,
    providers: &Providers,
    config: &SsoSecrets,
    redirect: &str,
    clock: &Clock,
) -> Result<Provider, ProviderError> {
    let issuer = config.config.issuer_url.clone();
    let metadata = providers.metadata(http, &issuer, clock.now()).await?;
    let redirect = RedirectUrl::new(redirect.to_string())
        .map_err(|err| ProviderError::Discovery(err.to_string()))?;
    let client = client_of(&metadata, &config.config.client_id, &config.client_secret)
        .set_redirect_uri(redirect.clone());
    Ok(Provider {
        client,
        issuer,
        metadata,
        config_client_id: config.config.client_id.clone(),
        client_secret: config.client_secret.clone(),
        redirect,
    })
}

fn client_of(metadata: &CoreProviderMetadata, client_id: &str, secret: &str) -> Client {
    CoreClient::from_provider_metadata(
        metadata.clone(),
        ClientId::new(client_id.to_string()),
        Some(ClientSecret::new(secret.to_string())),
    )
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
        .client
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
/// service's time (`clock`). A token signed by a key the kept JWKS does not
/// hold is verified once more against the provider's JWKS fetched again.
pub async fn identity(
    http: &Http,
    providers: &Providers,
    provider: Provider,
    code: String,
    pkce_verifier: String,
    nonce: String,
    clock: &Clock,
) -> Result<Identity, ProviderError> {
    let tokens = provider
        .client
        .exchange_code(AuthorizationCode::new(code))
        .map_err(|err| ProviderError::Exchange(err.to_string()))?
        .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier))
        .request_async(&fetcher(http))
        .await
        .map_err(|err| ProviderError::Exchange(error_chain(&err)))?;
    let id_token = tokens.id_token().ok_or(ProviderError::NoIdToken)?;
    let nonce = Nonce::new(nonce);
    match verified(&provider.client, id_token, &nonce, clock) {
        Err(ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::NoMatchingKey,
        )) => {
            let metadata = providers
                .refetch_keys(http, &provider.issuer, provider.metadata, clock.now())
                .await?;
            let client = client_of(
                &metadata,
                &provider.config_client_id,
                &provider.client_secret,
            )
            .set_redirect_uri(provider.redirect);
            verified(&client, id_token, &nonce, clock)
        }
        first => first,
    }
    .map_err(|err| ProviderError::IdToken(error_chain(&err)))
}

/// Who `id_token` says signed in, if `client`'s keys and checks pass it.
fn verified(
    client: &Client,
    id_token: &CoreIdToken,
    nonce: &Nonce,
    clock: &Clock,
) -> Result<Identity, ClaimsVerificationError> {
    let clock = clock.clone();
    let verifier = client
        .id_token_verifier()
        .set_time_fn(move || clock.now().0);
    let claims = id_token.claims(&verifier, nonce)?;
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
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
