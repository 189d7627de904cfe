-- Tags on tickets and chat sessions: one row per (record, tag), so adding
-- and removing single tags needs no read-modify-write of a list, and the
-- list filters and the company's tag counts read an index.

CREATE TABLE ticket_tags (
    ticket_id   UUID NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    tag         TEXT NOT NULL CHECK (length(tag) BETWEEN 1 AND 50),
    PRIMARY KEY (ticket_id, tag)
);
CREATE INDEX ticket_tags_tenant ON ticket_tags (company_id, mode, tag);

CREATE TABLE chat_session_tags (
    session_id  UUID NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    tag         TEXT NOT NULL CHECK (length(tag) BETWEEN 1 AND 50),
    PRIMARY KEY (session_id, tag)
);
CREATE INDEX chat_session_tags_tenant ON chat_session_tags (company_id, mode, tag);

-- The timeline records tag changes (`tags_changed`).
ALTER TABLE ticket_activities DROP CONSTRAINT ticket_activities_kind_check;
ALTER TABLE ticket_activities ADD CONSTRAINT ticket_activities_kind_check
    CHECK (kind IN ('created', 'status_changed', 'priority_changed', 'assignee_changed',
                    'escalated', 'commented', 'tags_changed'));
