-- Search over tickets and chat sessions: one document row per ticket and
-- per session, indexed by an FTS5 table (porter stemming, unicode61) over
-- it. Triggers on the source tables keep the documents in step inside the
-- transaction of every write that changes searched text, so no write path
-- can forget one; triggers on the documents keep FTS5 in step with them.
-- Documents are keyed by `seq`, a stable integer alias of the rowid (a plain
-- rowid may change on VACUUM), for the external-content FTS5 tables.
-- Comment and message text is capped at 100,000 characters per document
-- (oldest first), as on Postgres, where the tsvector has a size limit.

-- Ticket columns, ranked subject > description > public comments >
-- internal notes; callers without the scope that reads notes match the
-- first three columns only.
CREATE TABLE ticket_search (
    seq            INTEGER PRIMARY KEY,
    ticket_id      BLOB NOT NULL UNIQUE REFERENCES tickets (id) ON DELETE CASCADE,
    subject        TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    public_text    TEXT NOT NULL DEFAULT '',
    internal_text  TEXT NOT NULL DEFAULT ''
);

CREATE VIRTUAL TABLE ticket_search_fts USING fts5 (
    subject,
    description,
    public_text,
    internal_text,
    content = 'ticket_search',
    content_rowid = 'seq',
    tokenize = 'porter unicode61',
    prefix = '2 3'
);

CREATE TRIGGER ticket_search_fts_insert AFTER INSERT ON ticket_search BEGIN
    INSERT INTO ticket_search_fts (rowid, subject, description, public_text, internal_text)
    VALUES (new.seq, new.subject, new.description, new.public_text, new.internal_text);
END;

CREATE TRIGGER ticket_search_fts_delete AFTER DELETE ON ticket_search BEGIN
    INSERT INTO ticket_search_fts (ticket_search_fts, rowid, subject, description, public_text,
        internal_text)
    VALUES ('delete', old.seq, old.subject, old.description, old.public_text, old.internal_text);
END;

CREATE TRIGGER ticket_search_fts_update AFTER UPDATE ON ticket_search BEGIN
    INSERT INTO ticket_search_fts (ticket_search_fts, rowid, subject, description, public_text,
        internal_text)
    VALUES ('delete', old.seq, old.subject, old.description, old.public_text, old.internal_text);
    INSERT INTO ticket_search_fts (rowid, subject, description, public_text, internal_text)
    VALUES (new.seq, new.subject, new.description, new.public_text, new.internal_text);
END;

-- Session columns, ranked visitor name > visitor email > message bodies.
CREATE TABLE chat_session_search (
    seq            INTEGER PRIMARY KEY,
    session_id     BLOB NOT NULL UNIQUE REFERENCES chat_sessions (id) ON DELETE CASCADE,
    name_text      TEXT NOT NULL,
    email_text     TEXT NOT NULL DEFAULT '',
    message_text   TEXT NOT NULL DEFAULT ''
);

CREATE VIRTUAL TABLE chat_session_search_fts USING fts5 (
    name_text,
    email_text,
    message_text,
    content = 'chat_session_search',
    content_rowid = 'seq',
    tokenize = 'porter unicode61',
    prefix = '2 3'
);

CREATE TRIGGER chat_session_search_fts_insert AFTER INSERT ON chat_session_search BEGIN
    INSERT INTO chat_session_search_fts (rowid, name_text, email_text, message_text)
    VALUES (new.seq, new.name_text, new.email_text, new.message_text);
END;

CREATE TRIGGER chat_session_search_fts_delete AFTER DELETE ON chat_session_search BEGIN
    INSERT INTO chat_session_search_fts (chat_session_search_fts, rowid, name_text,
        email_text, message_text)
    VALUES ('delete', old.seq, old.name_text, old.email_text, old.message_text);
END;

CREATE TRIGGER chat_session_search_fts_update AFTER UPDATE ON chat_session_search BEGIN
    INSERT INTO chat_session_search_fts (chat_session_search_fts, rowid, name_text,
        email_text, message_text)
    VALUES ('delete', old.seq, old.name_text, old.email_text, old.message_text);
    INSERT INTO chat_session_search_fts (rowid, name_text, email_text, message_text)
    VALUES (new.seq, new.name_text, new.email_text, new.message_text);
END;

-- Backfill: comments and messages oldest first, as the triggers append them.
INSERT INTO ticket_search (ticket_id, subject, description, public_text, internal_text)
SELECT t.id, t.subject, coalesce(t.description, ''),
    substr(coalesce((SELECT group_concat(body, ' ') FROM (SELECT c.body FROM ticket_comments c
        WHERE c.ticket_id = t.id AND c.is_internal = 0 ORDER BY c.created_at, c.id)), ''),
        1, 100000),
    substr(coalesce((SELECT group_concat(body, ' ') FROM (SELECT c.body FROM ticket_comments c
        WHERE c.ticket_id = t.id AND c.is_internal <> 0 ORDER BY c.created_at, c.id)), ''),
        1, 100000)
FROM tickets t;

INSERT INTO chat_session_search (session_id, name_text, email_text, message_text)
SELECT s.id, s.visitor_name, coalesce(s.visitor_email, ''),
    substr(coalesce((SELECT group_concat(body, ' ') FROM (SELECT m.body FROM chat_messages m
        WHERE m.session_id = s.id ORDER BY m.created_at, m.id)), ''), 1, 100000)
FROM chat_sessions s;

CREATE TRIGGER tickets_search_insert AFTER INSERT ON tickets BEGIN
    INSERT INTO ticket_search (ticket_id, subject, description)
    VALUES (new.id, new.subject, coalesce(new.description, ''));
END;

CREATE TRIGGER tickets_search_update AFTER UPDATE OF subject, description ON tickets
WHEN old.subject IS NOT new.subject OR old.description IS NOT new.description BEGIN
    UPDATE ticket_search SET subject = new.subject, description = coalesce(new.description, '')
    WHERE ticket_id = new.id;
END;

CREATE TRIGGER ticket_comments_search_public AFTER INSERT ON ticket_comments
WHEN new.is_internal = 0 BEGIN
    UPDATE ticket_search SET public_text = substr(public_text || ' ' || new.body, 1, 100000)
    WHERE ticket_id = new.ticket_id AND length(public_text) < 100000;
END;

CREATE TRIGGER ticket_comments_search_internal AFTER INSERT ON ticket_comments
WHEN new.is_internal <> 0 BEGIN
    UPDATE ticket_search SET internal_text = substr(internal_text || ' ' || new.body, 1, 100000)
    WHERE ticket_id = new.ticket_id AND length(internal_text) < 100000;
END;

CREATE TRIGGER chat_sessions_search_insert AFTER INSERT ON chat_sessions BEGIN
    INSERT INTO chat_session_search (session_id, name_text, email_text)
    VALUES (new.id, new.visitor_name, coalesce(new.visitor_email, ''));
END;

CREATE TRIGGER chat_sessions_search_update AFTER UPDATE OF visitor_name, visitor_email
ON chat_sessions
WHEN old.visitor_name IS NOT new.visitor_name OR old.visitor_email IS NOT new.visitor_email BEGIN
    UPDATE chat_session_search
    SET name_text = new.visitor_name, email_text = coalesce(new.visitor_email, '')
    WHERE session_id = new.id;
END;

CREATE TRIGGER chat_messages_search AFTER INSERT ON chat_messages BEGIN
    UPDATE chat_session_search SET message_text = substr(message_text || ' ' || new.body, 1, 100000)
    WHERE session_id = new.session_id AND length(message_text) < 100000;
END;
