-- Business-hours calendars and SLA policies, per company and mode.

CREATE TABLE business_hours (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    -- An IANA name the service resolves with its tz database.
    timezone    TEXT NOT NULL,
    -- [{day, open, close}] and ["YYYY-MM-DD"]: validated on write, read whole.
    weekly      TEXT NOT NULL,
    holidays    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX business_hours_tenant ON business_hours (company_id, mode, created_at);

CREATE TABLE sla_policies (
    id                 BLOB PRIMARY KEY,
    company_id         BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode               TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    -- The first enabled policy, in this order, whose conditions a ticket
    -- meets is the ticket's policy.
    position           INTEGER NOT NULL,
    name               TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    enabled            INTEGER NOT NULL,
    conditions         TEXT NOT NULL,
    -- {PRIORITY: {firstResponseMinutes, nextResponseMinutes, resolutionMinutes}}
    targets            TEXT NOT NULL,
    -- NULL: the clocks run around the clock. A calendar in use cannot be
    -- deleted (the policy must let go of it first).
    business_hours_id  BLOB REFERENCES business_hours (id),
    pause_on           TEXT NOT NULL,
    warn_minutes       INTEGER NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
);
CREATE INDEX sla_policies_tenant ON sla_policies (company_id, mode, position);
CREATE INDEX sla_policies_hours ON sla_policies (business_hours_id)
    WHERE business_hours_id IS NOT NULL;
