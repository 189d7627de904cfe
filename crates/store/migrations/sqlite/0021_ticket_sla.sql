-- SLA clocks of tickets: one row per ticket and measured metric.
--
-- A ticket remembers the policy that applies to it; each metric its target
-- has (first response, next response, resolution) gets a clock here. The
-- scheduler reads only the two partial indexes below (running rows by due
-- time, and by warning time), never the tickets.

ALTER TABLE tickets ADD COLUMN sla_policy_id BLOB REFERENCES sla_policies (id) ON DELETE SET NULL;

-- Who wrote a comment: an agent (the default: comments made through the API
-- by agents and integrations) or the customer (their replies, which start a
-- next-response clock).
ALTER TABLE ticket_comments ADD COLUMN author_type TEXT NOT NULL DEFAULT 'agent'
    CHECK (author_type IN ('agent', 'customer'));

CREATE TABLE ticket_sla (
    ticket_id       BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    metric          TEXT NOT NULL
                    CHECK (metric IN ('first_response', 'next_response', 'resolution')),
    -- The tenant, so the scheduler announces a row without reading its ticket.
    company_id      BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    state           TEXT NOT NULL CHECK (state IN ('running', 'paused', 'fulfilled', 'breached')),
    target_minutes  INTEGER NOT NULL,
    -- The clock: business seconds used before `running_since`; NULL
    -- `running_since` while it stands (paused, fulfilled).
    used_seconds    INTEGER NOT NULL DEFAULT 0,
    running_since   TEXT,
    -- When the target falls due and when its warning does (NULL while the
    -- clock stands); kept once breached or fulfilled, for the record.
    due_at          TEXT,
    warn_at         TEXT,
    paused_at       TEXT,
    warned_at       TEXT,
    breached_at     TEXT,
    fulfilled_at    TEXT,
    PRIMARY KEY (ticket_id, metric)
);
CREATE INDEX ticket_sla_due ON ticket_sla (due_at) WHERE state = 'running';
CREATE INDEX ticket_sla_warn ON ticket_sla (warn_at) WHERE state = 'running' AND warned_at IS NULL;
CREATE INDEX ticket_sla_breached ON ticket_sla (ticket_id) WHERE breached_at IS NOT NULL;
