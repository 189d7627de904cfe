-- Search documents carry their record's tenant (and, for tickets, its
-- creation time), as on Postgres, where the search index leads with the
-- tenant; here FTS5 finds the matches and the columns keep one SQL text
-- for both backends. `ticket_search_recent` serves the ranked list's
-- newest matches.

-- The FTS5 index follows the searched text only: filling the new columns
-- must not rewrite every document's index entries.
DROP TRIGGER ticket_search_fts_update;
CREATE TRIGGER ticket_search_fts_update
AFTER UPDATE OF subject, description, public_text, internal_text ON ticket_search BEGIN
    INSERT INTO ticket_search_fts (ticket_search_fts, rowid, subject, description, public_text,
        internal_text)
    VALUES ('delete', old.seq, old.subject, old.description, old.public_text, old.internal_text);
    INSERT INTO ticket_search_fts (rowid, subject, description, public_text, internal_text)
    VALUES (new.seq, new.subject, new.description, new.public_text, new.internal_text);
END;

DROP TRIGGER chat_session_search_fts_update;
CREATE TRIGGER chat_session_search_fts_update
AFTER UPDATE OF name_text, email_text, message_text ON chat_session_search BEGIN
    INSERT INTO chat_session_search_fts (chat_session_search_fts, rowid, name_text, email_text,
        message_text)
    VALUES ('delete', old.seq, old.name_text, old.email_text, old.message_text);
    INSERT INTO chat_session_search_fts (rowid, name_text, email_text, message_text)
    VALUES (new.seq, new.name_text, new.email_text, new.message_text);
END;

ALTER TABLE ticket_search ADD COLUMN company_id BLOB;
ALTER TABLE ticket_search ADD COLUMN mode TEXT;
ALTER TABLE ticket_search ADD COLUMN created_at TEXT;
UPDATE ticket_search
SET company_id = (SELECT t.company_id FROM tickets t WHERE t.id = ticket_search.ticket_id),
    mode = (SELECT t.mode FROM tickets t WHERE t.id = ticket_search.ticket_id),
    created_at = (SELECT t.created_at FROM tickets t WHERE t.id = ticket_search.ticket_id);
CREATE INDEX ticket_search_recent ON ticket_search (company_id, mode, created_at DESC, ticket_id DESC);

DROP TRIGGER tickets_search_insert;
CREATE TRIGGER tickets_search_insert AFTER INSERT ON tickets BEGIN
    INSERT INTO ticket_search (ticket_id, company_id, mode, created_at, subject, description)
    VALUES (new.id, new.company_id, new.mode, new.created_at, new.subject,
            coalesce(new.description, ''));
END;

ALTER TABLE chat_session_search ADD COLUMN company_id BLOB;
ALTER TABLE chat_session_search ADD COLUMN mode TEXT;
UPDATE chat_session_search
SET company_id = (SELECT s.company_id FROM chat_sessions s WHERE s.id = chat_session_search.session_id),
    mode = (SELECT s.mode FROM chat_sessions s WHERE s.id = chat_session_search.session_id);

DROP TRIGGER chat_sessions_search_insert;
CREATE TRIGGER chat_sessions_search_insert AFTER INSERT ON chat_sessions BEGIN
    INSERT INTO chat_session_search (session_id, company_id, mode, name_text, email_text)
    VALUES (new.id, new.company_id, new.mode, new.visitor_name, coalesce(new.visitor_email, ''));
END;
