-- Settings: escalation rules per company and mode, and the record of which
-- rule escalated which ticket. Company-wide settings (name, timezone) live in
-- `companies` (0001: `name`, and `settings` JSON for the rest).

CREATE TABLE escalation_rules (
    id              UUID PRIMARY KEY,
    company_id      UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    -- The rule's place in the list: GET returns the rules in this order and
    -- a pass evaluates them in it.
    position        BIGINT NOT NULL,
    name            TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    enabled         BOOLEAN NOT NULL,
    -- {priorities, statuses, entityId, unassigned, minutesSinceCreated,
    -- minutesSinceLastActivity}: validated on write, read whole.
    conditions      JSONB NOT NULL,
    escalate_to_id  UUID NOT NULL REFERENCES users (id),
    reason          TEXT CHECK (length(reason) <= 1000),
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX escalation_rules_tenant ON escalation_rules (company_id, mode, position);
-- The scheduler reads the enabled rules of every tenant.
CREATE INDEX escalation_rules_enabled ON escalation_rules (company_id, mode, position) WHERE enabled;

-- One row per (rule, ticket) the rule escalated, written in the escalation's
-- transaction: the primary key is what makes a rule fire once per ticket,
-- whichever node runs the pass.
CREATE TABLE escalation_rule_firings (
    rule_id    UUID NOT NULL REFERENCES escalation_rules (id) ON DELETE CASCADE,
    ticket_id  UUID NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    fired_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (rule_id, ticket_id)
);
CREATE INDEX escalation_rule_firings_ticket ON escalation_rule_firings (ticket_id);

-- Reports: tickets resolved in a period (created in a period reads
-- tickets_list / tickets_list_e of 0004), escalations in a period.
CREATE INDEX tickets_resolved ON tickets (company_id, mode, resolved_at)
    WHERE resolved_at IS NOT NULL;
CREATE INDEX tickets_resolved_e ON tickets (company_id, mode, entity_id, resolved_at)
    WHERE resolved_at IS NOT NULL;
CREATE INDEX ticket_activities_escalated ON ticket_activities (company_id, mode, created_at)
    WHERE kind = 'escalated';
