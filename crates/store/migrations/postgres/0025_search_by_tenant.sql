-- Search documents carry their record's tenant (and, for tickets, its
-- creation time), and the GIN indexes lead with the tenant.
--
-- With one GIN index over every company's documents, a word common in one
-- large company (10% of its million tickets) made the same search in a
-- company of 2,000 tickets walk the large company's hundred thousand matches
-- to throw them away. With (company_id, mode) in the index (btree_gin lets a
-- GIN index hold plain columns), a search reads only its own company's
-- matches. `ticket_search_recent` lets a search rank the newest matches of a
-- company without reading them all (see the ticket store's ranked list).
-- btree_gin is a trusted extension: the database's owner may create it.

CREATE EXTENSION IF NOT EXISTS btree_gin;

ALTER TABLE ticket_search
    ADD COLUMN company_id UUID,
    ADD COLUMN mode TEXT,
    ADD COLUMN created_at TIMESTAMPTZ;
UPDATE ticket_search d
SET company_id = t.company_id, mode = t.mode, created_at = t.created_at
FROM tickets t
WHERE t.id = d.ticket_id;
ALTER TABLE ticket_search
    ALTER COLUMN company_id SET NOT NULL,
    ALTER COLUMN mode SET NOT NULL,
    ALTER COLUMN created_at SET NOT NULL;
DROP INDEX ticket_search_vector;
CREATE INDEX ticket_search_vector ON ticket_search USING GIN (company_id, mode, search_vector);
CREATE INDEX ticket_search_recent ON ticket_search (company_id, mode, created_at DESC, ticket_id DESC);

CREATE OR REPLACE FUNCTION ticket_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ticket_search (ticket_id, company_id, mode, created_at, subject, description)
    VALUES (NEW.id, NEW.company_id, NEW.mode, NEW.created_at, NEW.subject,
            coalesce(NEW.description, ''));
    RETURN NULL;
END $$;

ALTER TABLE chat_session_search
    ADD COLUMN company_id UUID,
    ADD COLUMN mode TEXT;
UPDATE chat_session_search d
SET company_id = s.company_id, mode = s.mode
FROM chat_sessions s
WHERE s.id = d.session_id;
ALTER TABLE chat_session_search
    ALTER COLUMN company_id SET NOT NULL,
    ALTER COLUMN mode SET NOT NULL;
DROP INDEX chat_session_search_vector;
CREATE INDEX chat_session_search_vector
    ON chat_session_search USING GIN (company_id, mode, search_vector);

CREATE OR REPLACE FUNCTION chat_session_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chat_session_search (session_id, company_id, mode, name_text, email_text)
    VALUES (NEW.id, NEW.company_id, NEW.mode, NEW.visitor_name, coalesce(NEW.visitor_email, ''));
    RETURN NULL;
END $$;
