-- Search over tickets and chat sessions: one document row per ticket and
-- per session with a weighted tsvector and a GIN index. Triggers on the
-- source tables keep the documents in step inside the transaction of every
-- write that changes searched text, so no write path can forget one.
--
-- Text is reduced to runs of letters and digits before parsing, as SQLite's
-- FTS5 tokenizer reads it, so both backends see the same words (an address
-- like jane.doe@example.com is the words jane, doe, example and com).
-- Comment and message text is capped at 100,000 characters per document
-- (oldest first) so that a very long conversation never makes a write fail
-- on the tsvector's size limit.

-- Ticket weights: subject A, description B, public comments C, internal
-- notes D (callers without the scope that reads notes filter D out).
CREATE TABLE ticket_search (
    ticket_id      UUID PRIMARY KEY REFERENCES tickets (id) ON DELETE CASCADE,
    subject        TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    public_text    TEXT NOT NULL DEFAULT '',
    internal_text  TEXT NOT NULL DEFAULT '',
    search_vector  TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', regexp_replace(subject, '[^[:alnum:]]+', ' ', 'g')), 'A')
        || setweight(to_tsvector('english', regexp_replace(description, '[^[:alnum:]]+', ' ', 'g')), 'B')
        || setweight(to_tsvector('english', regexp_replace(public_text, '[^[:alnum:]]+', ' ', 'g')), 'C')
        || setweight(to_tsvector('english', regexp_replace(internal_text, '[^[:alnum:]]+', ' ', 'g')), 'D')
    ) STORED
);
CREATE INDEX ticket_search_vector ON ticket_search USING GIN (search_vector);

-- Session weights: visitor name A, visitor email B, message bodies C.
CREATE TABLE chat_session_search (
    session_id     UUID PRIMARY KEY REFERENCES chat_sessions (id) ON DELETE CASCADE,
    name_text      TEXT NOT NULL,
    email_text     TEXT NOT NULL DEFAULT '',
    message_text   TEXT NOT NULL DEFAULT '',
    search_vector  TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', regexp_replace(name_text, '[^[:alnum:]]+', ' ', 'g')), 'A')
        || setweight(to_tsvector('english', regexp_replace(email_text, '[^[:alnum:]]+', ' ', 'g')), 'B')
        || setweight(to_tsvector('english', regexp_replace(message_text, '[^[:alnum:]]+', ' ', 'g')), 'C')
    ) STORED
);
CREATE INDEX chat_session_search_vector ON chat_session_search USING GIN (search_vector);

-- Backfill: comments and messages oldest first, as the triggers append them.
INSERT INTO ticket_search (ticket_id, subject, description, public_text, internal_text)
SELECT t.id, t.subject, coalesce(t.description, ''),
    left(coalesce((SELECT string_agg(c.body, ' ' ORDER BY c.created_at, c.id)
        FROM ticket_comments c WHERE c.ticket_id = t.id AND NOT c.is_internal), ''), 100000),
    left(coalesce((SELECT string_agg(c.body, ' ' ORDER BY c.created_at, c.id)
        FROM ticket_comments c WHERE c.ticket_id = t.id AND c.is_internal), ''), 100000)
FROM tickets t;

INSERT INTO chat_session_search (session_id, name_text, email_text, message_text)
SELECT s.id, s.visitor_name, coalesce(s.visitor_email, ''),
    left(coalesce((SELECT string_agg(m.body, ' ' ORDER BY m.created_at, m.id)
        FROM chat_messages m WHERE m.session_id = s.id), ''), 100000)
FROM chat_sessions s;

CREATE FUNCTION ticket_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ticket_search (ticket_id, subject, description)
    VALUES (NEW.id, NEW.subject, coalesce(NEW.description, ''));
    RETURN NULL;
END $$;
CREATE TRIGGER tickets_search_insert AFTER INSERT ON tickets
    FOR EACH ROW EXECUTE FUNCTION ticket_search_insert();

CREATE FUNCTION ticket_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE ticket_search SET subject = NEW.subject, description = coalesce(NEW.description, '')
    WHERE ticket_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER tickets_search_update AFTER UPDATE OF subject, description ON tickets
    FOR EACH ROW
    WHEN (OLD.subject IS DISTINCT FROM NEW.subject OR OLD.description IS DISTINCT FROM NEW.description)
    EXECUTE FUNCTION ticket_search_update();

CREATE FUNCTION ticket_search_comment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.is_internal THEN
        UPDATE ticket_search SET internal_text = left(internal_text || ' ' || NEW.body, 100000)
        WHERE ticket_id = NEW.ticket_id AND length(internal_text) < 100000;
    ELSE
        UPDATE ticket_search SET public_text = left(public_text || ' ' || NEW.body, 100000)
        WHERE ticket_id = NEW.ticket_id AND length(public_text) < 100000;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER ticket_comments_search AFTER INSERT ON ticket_comments
    FOR EACH ROW EXECUTE FUNCTION ticket_search_comment();

CREATE FUNCTION chat_session_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chat_session_search (session_id, name_text, email_text)
    VALUES (NEW.id, NEW.visitor_name, coalesce(NEW.visitor_email, ''));
    RETURN NULL;
END $$;
CREATE TRIGGER chat_sessions_search_insert AFTER INSERT ON chat_sessions
    FOR EACH ROW EXECUTE FUNCTION chat_session_search_insert();

CREATE FUNCTION chat_session_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chat_session_search
    SET name_text = NEW.visitor_name, email_text = coalesce(NEW.visitor_email, '')
    WHERE session_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER chat_sessions_search_update AFTER UPDATE OF visitor_name, visitor_email
    ON chat_sessions FOR EACH ROW
    WHEN (OLD.visitor_name IS DISTINCT FROM NEW.visitor_name
        OR OLD.visitor_email IS DISTINCT FROM NEW.visitor_email)
    EXECUTE FUNCTION chat_session_search_update();

CREATE FUNCTION chat_session_search_message() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chat_session_search SET message_text = left(message_text || ' ' || NEW.body, 100000)
    WHERE session_id = NEW.session_id AND length(message_text) < 100000;
    RETURN NULL;
END $$;
CREATE TRIGGER chat_messages_search AFTER INSERT ON chat_messages
    FOR EACH ROW EXECUTE FUNCTION chat_session_search_message();
