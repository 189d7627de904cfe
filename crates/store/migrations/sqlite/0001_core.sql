-- Core tables shared by every area: tenants, keys, users, events, outbox.

CREATE TABLE companies (
    id          BLOB PRIMARY KEY,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    settings    TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE entities (
    id               BLOB PRIMARY KEY,
    company_id       BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    parent_id        BLOB REFERENCES entities (id) ON DELETE SET NULL,
    name             TEXT NOT NULL,
    widget_key_test  TEXT NOT NULL UNIQUE,
    widget_key_live  TEXT NOT NULL UNIQUE,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX entities_company ON entities (company_id, created_at DESC, id DESC);

CREATE TABLE users (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    email       TEXT NOT NULL,
    role        TEXT NOT NULL DEFAULT 'AGENT' CHECK (role IN ('AGENT', 'ADMIN')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (company_id, email)
);
CREATE INDEX users_company ON users (company_id, created_at DESC, id DESC);

CREATE TABLE api_keys (
    id            BLOB PRIMARY KEY,
    company_id    BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key_hash      TEXT NOT NULL UNIQUE,
    key_prefix    TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    rate_limit    INTEGER NOT NULL CHECK (rate_limit > 0),
    expires_at    TEXT,
    is_active     INTEGER NOT NULL DEFAULT 1,
    last_used_at  TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX api_keys_company ON api_keys (company_id, created_at DESC, id DESC);

-- Every domain event, written in the transaction of the change that caused it.
CREATE TABLE events (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX events_tenant ON events (company_id, mode, created_at DESC);

-- Durable background jobs (webhook deliveries, emails), enqueued in the
-- transaction of the change that caused them and claimed with a lease.
CREATE TABLE outbox_jobs (
    id            BLOB PRIMARY KEY,
    kind          TEXT NOT NULL,
    company_id    BLOB REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT CHECK (mode IN ('test', 'live')),
    payload       TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    run_at        TEXT NOT NULL,
    locked_until  TEXT,
    last_error    TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX outbox_jobs_due ON outbox_jobs (run_at) WHERE status = 'pending';

-- Per-tenant sequences (ticket numbers): incremented inside the insert's
-- transaction, so numbers have no gaps and no duplicates across nodes.
CREATE TABLE counters (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL,
    value       INTEGER NOT NULL,
    PRIMARY KEY (company_id, mode, name)
);
