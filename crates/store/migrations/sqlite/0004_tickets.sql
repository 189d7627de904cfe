-- Tickets, their comments and their activity timeline.

CREATE TABLE tickets (
    id              BLOB PRIMARY KEY,
    company_id      BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id       BLOB NOT NULL REFERENCES entities (id),
    -- `TKT-000001`, from the `counters` row (company_id, mode, 'ticket').
    ticket_number   TEXT NOT NULL,
    subject         TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    description     TEXT CHECK (length(description) <= 50000),
    status          TEXT NOT NULL CHECK (status IN ('OPEN', 'IN_PROGRESS', 'RESOLVED', 'CLOSED')),
    priority        TEXT NOT NULL CHECK (priority IN ('LOW', 'MEDIUM', 'HIGH', 'URGENT')),
    assigned_to_id  BLOB REFERENCES users (id) ON DELETE SET NULL,
    visitor_email   TEXT CHECK (length(visitor_email) <= 255),
    -- Set when the status becomes RESOLVED, cleared when it is reopened.
    resolved_at     TEXT,
    created_at      TEXT NOT NULL,
    -- Last change or comment (escalation rules read "since last activity").
    updated_at      TEXT NOT NULL,
    UNIQUE (company_id, mode, ticket_number)
);

-- GET /tickets filters on any subset of (entity_id, status, priority,
-- assigned_to_id) and reads newest first: one index per subset, each with
-- the order, so every page is an index range scan without a sort.
CREATE INDEX tickets_list ON tickets (company_id, mode, created_at DESC, id DESC);
CREATE INDEX tickets_list_e ON tickets (company_id, mode, entity_id, created_at DESC, id DESC);
CREATE INDEX tickets_list_s ON tickets (company_id, mode, status, created_at DESC, id DESC);
CREATE INDEX tickets_list_p ON tickets (company_id, mode, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_a ON tickets (company_id, mode, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_es ON tickets (company_id, mode, entity_id, status, created_at DESC, id DESC);
CREATE INDEX tickets_list_ep ON tickets (company_id, mode, entity_id, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_ea ON tickets (company_id, mode, entity_id, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_sp ON tickets (company_id, mode, status, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_sa ON tickets (company_id, mode, status, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_pa ON tickets (company_id, mode, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_esp ON tickets (company_id, mode, entity_id, status, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_esa ON tickets (company_id, mode, entity_id, status, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_epa ON tickets (company_id, mode, entity_id, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_spa ON tickets (company_id, mode, status, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_espa ON tickets (company_id, mode, entity_id, status, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;

CREATE TABLE ticket_comments (
    id           BLOB PRIMARY KEY,
    company_id   BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    ticket_id    BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    body         TEXT NOT NULL CHECK (length(body) BETWEEN 1 AND 50000),
    author_id    BLOB REFERENCES users (id) ON DELETE SET NULL,
    is_internal  INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL
);
CREATE INDEX ticket_comments_ticket ON ticket_comments (ticket_id, created_at, id);

-- The timeline: one row per change, written in the change's transaction.
CREATE TABLE ticket_activities (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    ticket_id   BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('created', 'status_changed', 'priority_changed',
                    'assignee_changed', 'escalated', 'commented')),
    from_value  TEXT,
    to_value    TEXT,
    details     TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX ticket_activities_ticket ON ticket_activities (ticket_id, created_at, id);
