-- Business-hours calendars and SLA policies, per company and mode.

CREATE TABLE business_hours (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    -- An IANA name the service resolves with its tz database.
    timezone    TEXT NOT NULL,
    -- [{day, open, close}] and ["YYYY-MM-DD"]: validated on write, read whole.
    weekly      JSONB NOT NULL,
    holidays    JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX business_hours_tenant ON business_hours (company_id, mode, created_at);

CREATE TABLE sla_policies (
    id                 UUID PRIMARY KEY,
    company_id         UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode               TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    -- The first enabled policy, in this order, whose conditions a ticket
    -- meets is the ticket's policy.
    position           BIGINT NOT NULL,
    name               TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    enabled            BOOLEAN NOT NULL,
    conditions         JSONB NOT NULL,
    -- {PRIORITY: {firstResponseMinutes, nextResponseMinutes, resolutionMinutes}}
    targets            JSONB NOT NULL,
    -- NULL: the clocks run around the clock. A calendar in use cannot be
    -- deleted (the policy must let go of it first).
    business_hours_id  UUID REFERENCES business_hours (id),
    pause_on           JSONB NOT NULL,
    warn_minutes       BIGINT NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX sla_policies_tenant ON sla_policies (company_id, mode, position);
CREATE INDEX sla_policies_hours ON sla_policies (business_hours_id)
    WHERE business_hours_id IS NOT NULL;
