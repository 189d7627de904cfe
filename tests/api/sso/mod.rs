//! SSO with OpenID Connect, against a real provider (`oidc-provider`, run
//! by Node from tests/oidc) and, for the tokens a correct provider never
//! issues (wrong `aud` or `iss`, expired, unsigned, signed by another key, an old
//! nonce), a deliberately broken issuer of our own (tests/oidc/fake.mjs).

mod browser;
mod flow;
mod forged;
mod keys;
mod passwords_off;
mod provider;
mod settings;
