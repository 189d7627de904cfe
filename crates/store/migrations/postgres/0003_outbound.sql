-- Outbound: webhook subscriptions, their deliveries (each row is both the
-- delivery log entry and its queue item) and every attempt made.

CREATE TABLE webhooks (
    id                           UUID PRIMARY KEY,
    company_id                   UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode                         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name                         TEXT NOT NULL,
    url                          TEXT NOT NULL,
    -- JSON array of event names.
    events                       JSONB NOT NULL,
    secret                       TEXT NOT NULL,
    -- The secret replaced by the last rotation, still signing until it expires.
    previous_secret              TEXT,
    previous_secret_expires_at   TIMESTAMPTZ,
    is_active                    BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason              TEXT,
    -- Set by the first failed attempt after a success; cleared by a success.
    failing_since                TIMESTAMPTZ,
    created_at                   TIMESTAMPTZ NOT NULL,
    updated_at                   TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhooks_tenant ON webhooks (company_id, mode, created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
    -- Sent as X-Service-Delivery and webhook-id, the same on every attempt.
    id               UUID PRIMARY KEY,
    webhook_id       UUID NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    company_id       UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode             TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    event_id         UUID NOT NULL,
    event            TEXT NOT NULL,
    -- The request body exactly as signed and sent on every attempt.
    body             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMPTZ,
    -- Lease of the worker that claimed it; its value is the claim's token.
    locked_until     TIMESTAMPTZ,
    last_status      INTEGER,
    last_error       TEXT,
    delivered_at     TIMESTAMPTZ,
    -- Set on a manual redelivery: the delivery it repeats.
    redelivery_of    UUID,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE webhook_delivery_attempts (
    id               UUID PRIMARY KEY,
    delivery_id      UUID NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt          INTEGER NOT NULL,
    attempted_at     TIMESTAMPTZ NOT NULL,
    duration_ms      BIGINT NOT NULL,
    success          BOOLEAN NOT NULL,
    response_status  INTEGER,
    -- The first 1 KiB of the response body.
    response_body    TEXT,
    error            TEXT,
    UNIQUE (delivery_id, attempt)
);

-- Emails and other jobs are claimed by kind.
CREATE INDEX outbox_jobs_kind_due ON outbox_jobs (kind, run_at) WHERE status = 'pending';
