-- Core tables shared by every area: tenants, keys, users, events, outbox.

CREATE TABLE companies (
    id          UUID PRIMARY KEY,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    settings    JSONB NOT NULL DEFAULT '{}',
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE entities (
    id               UUID PRIMARY KEY,
    company_id       UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    parent_id        UUID REFERENCES entities (id) ON DELETE SET NULL,
    name             TEXT NOT NULL,
    widget_key_test  TEXT NOT NULL UNIQUE,
    widget_key_live  TEXT NOT NULL UNIQUE,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX entities_company ON entities (company_id, created_at DESC, id DESC);

CREATE TABLE users (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    email       TEXT NOT NULL,
    role        TEXT NOT NULL DEFAULT 'AGENT' CHECK (role IN ('AGENT', 'ADMIN')),
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (company_id, email)
);
CREATE INDEX users_company ON users (company_id, created_at DESC, id DESC);

CREATE TABLE api_keys (
    id            UUID PRIMARY KEY,
    company_id    UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key_hash      TEXT NOT NULL UNIQUE,
    key_prefix    TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    rate_limit    BIGINT NOT NULL CHECK (rate_limit > 0),
    expires_at    TIMESTAMPTZ,
    is_active     BOOLEAN NOT NULL DEFAULT TRUE,
    last_used_at  TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX api_keys_company ON api_keys (company_id, created_at DESC, id DESC);

-- Every domain event, written in the transaction of the change that caused it.
CREATE TABLE events (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL,
    data        JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX events_tenant ON events (company_id, mode, created_at DESC);

-- Durable background jobs (webhook deliveries, emails), enqueued in the
-- transaction of the change that caused them and claimed with a lease.
CREATE TABLE outbox_jobs (
    id            UUID PRIMARY KEY,
    kind          TEXT NOT NULL,
    company_id    UUID REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT CHECK (mode IN ('test', 'live')),
    payload       JSONB NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    run_at        TIMESTAMPTZ NOT NULL,
    locked_until  TIMESTAMPTZ,
    last_error    TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX outbox_jobs_due ON outbox_jobs (run_at) WHERE status = 'pending';

-- Per-tenant sequences (ticket numbers): incremented inside the insert's
-- transaction, so numbers have no gaps and no duplicates across nodes.
CREATE TABLE counters (
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL,
    value       BIGINT NOT NULL,
    PRIMARY KEY (company_id, mode, name)
);
