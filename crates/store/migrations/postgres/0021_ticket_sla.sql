-- SLA clocks of tickets: one row per ticket and measured metric.
--
-- A ticket remembers the policy that applies to it; each metric its target
-- has (first response, next response, resolution) gets a clock here. The
-- scheduler reads only the two partial indexes below (running rows by due
-- time, and by warning time), never the tickets.

ALTER TABLE tickets ADD COLUMN sla_policy_id UUID REFERENCES sla_policies (id) ON DELETE SET NULL;

-- Who wrote a comment: an agent (the default: comments made through the API
-- by agents and integrations) or the customer (their replies, which start a
-- next-response clock).
ALTER TABLE ticket_comments ADD COLUMN author_type TEXT NOT NULL DEFAULT 'agent'
    CHECK (author_type IN ('agent', 'customer'));

CREATE TABLE ticket_sla (
    ticket_id       UUID NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    metric          TEXT NOT NULL
                    CHECK (metric IN ('first_response', 'next_response', 'resolution')),
    -- The tenant, so the scheduler announces a row without reading its ticket.
    company_id      UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    state           TEXT NOT NULL CHECK (state IN ('running', 'paused', 'fulfilled', 'breached')),
    target_minutes  BIGINT NOT NULL,
    -- The clock: business seconds used before `running_since`; NULL
    -- `running_since` while it stands (paused, fulfilled).
    used_seconds    BIGINT NOT NULL DEFAULT 0,
    running_since   TIMESTAMPTZ,
    -- When the target falls due and when its warning does (NULL while the
    -- clock stands); kept once breached or fulfilled, for the record.
    due_at          TIMESTAMPTZ,
    warn_at         TIMESTAMPTZ,
    paused_at       TIMESTAMPTZ,
    warned_at       TIMESTAMPTZ,
    breached_at     TIMESTAMPTZ,
    fulfilled_at    TIMESTAMPTZ,
    PRIMARY KEY (ticket_id, metric)
);
CREATE INDEX ticket_sla_due ON ticket_sla (due_at) WHERE state = 'running';
CREATE INDEX ticket_sla_warn ON ticket_sla (warn_at) WHERE state = 'running' AND warned_at IS NULL;
CREATE INDEX ticket_sla_breached ON ticket_sla (ticket_id) WHERE breached_at IS NOT NULL;
