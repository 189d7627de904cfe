-- SSO (OpenID Connect) per company: its configuration, and the sign-ins
-- between their start and the provider's callback (kept here so the
-- callback may reach any node).

CREATE TABLE sso_configs (
    company_id            BLOB PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    -- The company's name in the start path: unique across companies.
    slug                  TEXT NOT NULL UNIQUE,
    issuer_url            TEXT NOT NULL,
    client_id             TEXT NOT NULL,
    client_secret         TEXT NOT NULL,
    allowed_email_domain  TEXT,
    jit_enabled           BOOLEAN NOT NULL DEFAULT FALSE,
    jit_role              TEXT NOT NULL DEFAULT 'agent' CHECK (jit_role IN ('agent', 'admin')),
    passwords_disabled    BOOLEAN NOT NULL DEFAULT FALSE,
    -- The first successful sign-in through this issuer and client.
    verified_at           TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);

CREATE TABLE sso_logins (
    -- SHA-256 of the state (hex): the state itself is a bearer secret.
    state_digest    TEXT PRIMARY KEY,
    company_id      BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    nonce           TEXT NOT NULL,
    pkce_verifier   TEXT NOT NULL,
    redirect_after  TEXT,
    created_at      TEXT NOT NULL,
    expires_at      TEXT NOT NULL,
    used_at         TEXT
);
CREATE INDEX sso_logins_expiry ON sso_logins (expires_at);
