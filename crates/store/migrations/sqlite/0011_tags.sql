-- Tags on tickets and chat sessions: one row per (record, tag), so adding
-- and removing single tags needs no read-modify-write of a list, and the
-- list filters and the company's tag counts read an index.

CREATE TABLE ticket_tags (
    ticket_id   BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    tag         TEXT NOT NULL CHECK (length(tag) BETWEEN 1 AND 50),
    PRIMARY KEY (ticket_id, tag)
);
CREATE INDEX ticket_tags_tenant ON ticket_tags (company_id, mode, tag);

CREATE TABLE chat_session_tags (
    session_id  BLOB NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    tag         TEXT NOT NULL CHECK (length(tag) BETWEEN 1 AND 50),
    PRIMARY KEY (session_id, tag)
);
CREATE INDEX chat_session_tags_tenant ON chat_session_tags (company_id, mode, tag);

-- The timeline records tag changes (`tags_changed`). SQLite cannot change a
-- CHECK constraint in place: the table is rebuilt with the wider one.
CREATE TABLE ticket_activities_new (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    ticket_id   BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('created', 'status_changed', 'priority_changed',
                    'assignee_changed', 'escalated', 'commented', 'tags_changed')),
    from_value  TEXT,
    to_value    TEXT,
    details     TEXT,
    created_at  TEXT NOT NULL
);
INSERT INTO ticket_activities_new (id, company_id, mode, ticket_id, kind, from_value, to_value,
    details, created_at)
    SELECT id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at
    FROM ticket_activities;
DROP TABLE ticket_activities;
ALTER TABLE ticket_activities_new RENAME TO ticket_activities;
CREATE INDEX ticket_activities_ticket ON ticket_activities (ticket_id, created_at, id);
CREATE INDEX ticket_activities_escalated ON ticket_activities (company_id, mode, created_at)
    WHERE kind = 'escalated';
