-- Automations: per company and mode, ordered rules that run on ticket
-- events (`trigger`) or on elapsed time (`timed`). Conditions and actions
-- are parsed on write and stored whole.
CREATE TABLE automations (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    kind        TEXT NOT NULL CHECK (kind IN ('trigger', 'timed')),
    events      JSONB NOT NULL,
    conditions  JSONB NOT NULL,
    actions     JSONB NOT NULL,
    position    BIGINT NOT NULL,
    enabled     BOOLEAN NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX automations_tenant ON automations (company_id, mode, position, id);

-- How far each tenant's triggers have read its change feed: the number of
-- the last entry they ran on (entries are numbered in commit order).
CREATE TABLE automation_cursors (
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    seq         BIGINT NOT NULL,
    PRIMARY KEY (company_id, mode)
);

-- A timed automation that fired on a ticket, while its condition holds:
-- the row goes when the condition turns false, so it may fire again.
CREATE TABLE automation_firings (
    automation_id  UUID NOT NULL REFERENCES automations (id) ON DELETE CASCADE,
    ticket_id      UUID NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    company_id     UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode           TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    fired_at       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (automation_id, ticket_id)
);

INSERT INTO ticket_activity_kinds (kind) VALUES ('automation_stopped');
