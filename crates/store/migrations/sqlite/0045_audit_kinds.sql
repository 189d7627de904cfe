-- The audit log records more kinds of change (SSO, passwords, SLA policies,
-- business hours, escalation rules, custom fields, entities, widget
-- secrets, deletions, refused sign-ins). Which actions and target types
-- exist is the code's closed set (audit::Action, audit::TargetType), so
-- the table no longer repeats it: each area that records a new kind would
-- otherwise rebuild the table. SQLite cannot drop a CHECK, so the table is
-- rebuilt once, with every column and index of 0041.

CREATE TABLE audit_entries_0045 (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    actor_type  TEXT NOT NULL
        CHECK (actor_type IN ('agent', 'key', 'visitor', 'system', 'automation', 'ai')),
    actor_id    BLOB,
    actor_name  TEXT NOT NULL,
    action      TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id   BLOB,
    changes     TEXT NOT NULL,
    request_id  TEXT,
    ip          TEXT,
    user_agent  TEXT,
    seq         BIGINT,
    hash        TEXT,
    prev_hash   TEXT
);
INSERT INTO audit_entries_0045 (id, company_id, created_at, actor_type, actor_id, actor_name,
    action, target_type, target_id, changes, request_id, ip, user_agent, seq, hash, prev_hash)
SELECT id, company_id, created_at, actor_type, actor_id, actor_name, action, target_type,
    target_id, changes, request_id, ip, user_agent, seq, hash, prev_hash
FROM audit_entries;
DROP TABLE audit_entries;
ALTER TABLE audit_entries_0045 RENAME TO audit_entries;
CREATE INDEX audit_entries_list ON audit_entries (company_id, created_at, id);
CREATE UNIQUE INDEX audit_entries_chain ON audit_entries (company_id, seq) WHERE seq IS NOT NULL;
CREATE INDEX audit_entries_unsealed ON audit_entries (company_id, created_at, id) WHERE seq IS NULL;
