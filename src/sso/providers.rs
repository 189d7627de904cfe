//! What the service knows of each identity provider: its discovery
//! document with its JWKS, kept per issuer for [`KEEP`] so a sign-in (its
//! start and its callback) does not fetch both every time. A token signed
//! by a key the kept JWKS does not hold (the provider rotated its keys)
//! fetches the JWKS again once, at once, whatever the kept one's age
//! (`oidc::identity`).
//!
//! Ages are counted on the service's clock, so tests move it instead of
//! waiting.

use std::time::Duration;

use dashmap::DashMap;
use openidconnect::JsonWebKeySet;
use openidconnect::core::CoreProviderMetadata;

use super::oidc::{Http, ProviderError, error_chain, fetcher};
use crate::time::Timestamp;

/// How long a provider's discovery document and JWKS are kept: a key the
/// provider retires stops being accepted at most this long after.
pub const KEEP: Duration = Duration::from_secs(15 * 60);

/// The providers known, by issuer URL.
#[derive(Default)]
pub struct Providers {
    known: DashMap<String, Known>,
}

#[derive(Clone)]
struct Known {
    metadata: CoreProviderMetadata,
    fetched_at: Timestamp,
}

impl Providers {
    /// The discovery document (with its JWKS) of `issuer`: the kept one if
    /// younger than [`KEEP`] at `now`, else fetched and kept.
    pub async fn metadata(
        &self,
        http: &Http,
        issuer: &str,
        now: Timestamp,
    ) -> Result<CoreProviderMetadata, ProviderError> {
        if let Some(known) = self.known.get(issuer)
            && now < known.fetched_at.plus(KEEP)
        {
            return Ok(known.metadata.clone());
        }
        let url = openidconnect::IssuerUrl::new(issuer.to_string())
            .map_err(|err| ProviderError::Discovery(err.to_string()))?;
        let metadata = CoreProviderMetadata::discover_async(url, &fetcher(http))
            .await
            .map_err(|err| ProviderError::Discovery(error_chain(&err)))?;
        self.keep(issuer, &metadata, now);
        Ok(metadata)
    }

    /// `metadata` of `issuer` with its JWKS fetched again (a token named a
    /// key it did not hold), kept from `now`.
    pub async fn refetch_keys(
        &self,
        http: &Http,
        issuer: &str,
        metadata: CoreProviderMetadata,
        now: Timestamp,
    ) -> Result<CoreProviderMetadata, ProviderError> {
        let keys = JsonWebKeySet::fetch_async(metadata.jwks_uri(), &fetcher(http))
            .await
            .map_err(|err| ProviderError::Discovery(error_chain(&err)))?;
        let metadata = metadata.set_jwks(keys);
        self.keep(issuer, &metadata, now);
        Ok(metadata)
    }

    fn keep(&self, issuer: &str, metadata: &CoreProviderMetadata, now: Timestamp) {
        // Issuers no longer asked for leave with the next fetch.
        self.known
            .retain(|_, known| now < known.fetched_at.plus(KEEP));
        let known = Known {
            metadata: metadata.clone(),
            fetched_at: now,
        };
        self.known.insert(issuer.to_string(), known);
    }
}
