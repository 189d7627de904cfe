-- Retrieval for questions. A tenant's synonym groups (each a JSON array of
-- terms that mean the same to its customers), one row per company and mode.
CREATE TABLE kb_synonyms (
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    term_groups JSONB NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (company_id, mode)
);

-- The articles suggested for a question and what came of it: the visitor
-- said one answered it (self_served), went on to a human (handed_off, with
-- the chat it opened), or they were shown to the agent of a new ticket
-- (shown). The chat or ticket is named by id only: the knowledge base
-- does not reach into their tables.
CREATE TABLE kb_suggestions (
    id               UUID PRIMARY KEY,
    company_id       UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode             TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id        UUID NOT NULL,
    question         TEXT NOT NULL,
    -- [{id, title, slug}], best first, as they were shown.
    articles         JSONB NOT NULL,
    outcome          TEXT NOT NULL CHECK (outcome IN ('self_served', 'handed_off', 'shown')),
    answered_by      UUID,
    chat_session_id  UUID,
    ticket_id        UUID,
    created_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX kb_suggestions_chat ON kb_suggestions (chat_session_id) WHERE chat_session_id IS NOT NULL;
CREATE INDEX kb_suggestions_ticket ON kb_suggestions (ticket_id) WHERE ticket_id IS NOT NULL;
CREATE INDEX kb_suggestions_tenant ON kb_suggestions (company_id, mode, created_at DESC, id DESC);
