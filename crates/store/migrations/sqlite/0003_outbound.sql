-- Outbound: webhook subscriptions, their deliveries (each row is both the
-- delivery log entry and its queue item) and every attempt made.

CREATE TABLE webhooks (
    id                           BLOB PRIMARY KEY,
    company_id                   BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode                         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name                         TEXT NOT NULL,
    url                          TEXT NOT NULL,
    -- JSON array of event names.
    events                       TEXT NOT NULL,
    secret                       TEXT NOT NULL,
    -- The secret replaced by the last rotation, still signing until it expires.
    previous_secret              TEXT,
    previous_secret_expires_at   TEXT,
    is_active                    INTEGER NOT NULL DEFAULT 1,
    disabled_reason              TEXT,
    -- Set by the first failed attempt after a success; cleared by a success.
    failing_since                TEXT,
    created_at                   TEXT NOT NULL,
    updated_at                   TEXT NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (company_id, mode, created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
    -- Sent as X-Service-Delivery and webhook-id, the same on every attempt.
    id               BLOB PRIMARY KEY,
    webhook_id       BLOB NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    company_id       BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode             TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    event_id         BLOB NOT NULL,
    event            TEXT NOT NULL,
    -- The request body exactly as signed and sent on every attempt.
    body             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT,
    -- Lease of the worker that claimed it; its value is the claim's token.
    locked_until     TEXT,
    last_status      INTEGER,
    last_error       TEXT,
    delivered_at     TEXT,
    -- Set on a manual redelivery: the delivery it repeats.
    redelivery_of    BLOB,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE webhook_delivery_attempts (
    id               BLOB PRIMARY KEY,
    delivery_id      BLOB NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt          INTEGER NOT NULL,
    attempted_at     TEXT NOT NULL,
    duration_ms      INTEGER NOT NULL,
    success          INTEGER NOT NULL,
    response_status  INTEGER,
    -- The first 1 KiB of the response body.
    response_body    TEXT,
    error            TEXT,
    UNIQUE (delivery_id, attempt)
);

-- Emails and other jobs are claimed by kind.
CREATE INDEX outbox_jobs_kind_due ON outbox_jobs (kind, run_at) WHERE status = 'pending';
