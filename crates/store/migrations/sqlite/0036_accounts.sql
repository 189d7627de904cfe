-- Agent accounts: a user's password (argon2id, PHC string) and second
-- factor, the sessions a signed-in agent holds, and the one-time links
-- (invitations, password resets) that set a password.
ALTER TABLE users ADD COLUMN password_hash TEXT;
ALTER TABLE users ADD COLUMN last_sign_in_at TEXT;
ALTER TABLE users ADD COLUMN totp_secret TEXT;
ALTER TABLE users ADD COLUMN totp_enabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN totp_last_step INTEGER;
-- Sign-in finds an account by its email (stored lower case) in any company.
CREATE INDEX users_email_sign_in ON users (email);

CREATE TABLE agent_sessions (
    id            BLOB PRIMARY KEY,
    -- SHA-256 (hex) of the cookie's secret: the secret itself is never kept.
    token_digest  TEXT NOT NULL UNIQUE,
    company_id    BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    user_id       BLOB NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    csrf_token    TEXT NOT NULL,
    ip            TEXT,
    user_agent    TEXT,
    created_at    TEXT NOT NULL,
    last_seen_at  TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    ended_at      TEXT
);
CREATE INDEX agent_sessions_user ON agent_sessions (user_id, created_at DESC) WHERE ended_at IS NULL;

CREATE TABLE account_tokens (
    -- SHA-256 (hex) of the link's secret.
    digest      TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('invitation', 'password_reset')),
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    user_id     BLOB NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
CREATE INDEX account_tokens_user ON account_tokens (user_id, kind);

-- One-time recovery codes of an account with a second factor (SHA-256 hex).
CREATE TABLE account_recovery_codes (
    user_id  BLOB NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    digest   TEXT NOT NULL,
    used_at  TEXT,
    PRIMARY KEY (user_id, digest)
);
