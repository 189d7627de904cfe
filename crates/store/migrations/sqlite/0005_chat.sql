-- Chat: visitor sessions and their messages, plus the server secrets from
-- which socket and visitor tokens are signed (created once, read by every node).

CREATE TABLE chat_sessions (
    id             BLOB PRIMARY KEY,
    company_id     BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode           TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id      BLOB NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    status         TEXT NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'CLOSED')),
    visitor_name   TEXT NOT NULL,
    visitor_email  TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    closed_at      TEXT
);
CREATE INDEX chat_sessions_tenant ON chat_sessions (company_id, mode, created_at DESC, id DESC);
CREATE INDEX chat_sessions_entity ON chat_sessions (company_id, mode, entity_id, created_at DESC, id DESC);
CREATE INDEX chat_sessions_status ON chat_sessions (company_id, mode, status, created_at DESC, id DESC);

CREATE TABLE chat_messages (
    id           BLOB PRIMARY KEY,
    session_id   BLOB NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    company_id   BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    body         TEXT NOT NULL,
    sender_type  TEXT NOT NULL CHECK (sender_type IN ('visitor', 'agent', 'system')),
    sender_id    BLOB,
    created_at   TEXT NOT NULL
);
-- A session's messages in order, and replay after a given message.
CREATE INDEX chat_messages_replay ON chat_messages (session_id, created_at, id);
-- Replay of an entity channel (all sessions of the entity) after a message.
CREATE INDEX chat_messages_tenant ON chat_messages (company_id, mode, created_at, id);

CREATE TABLE server_secrets (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
