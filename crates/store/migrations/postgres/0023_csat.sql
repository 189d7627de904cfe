-- Satisfaction ratings. Each entity says when visitors are asked for one
-- (`auto`: when a chat closes or a ticket is resolved; `manual`: only after
-- an agent asks; `off`: never). A rating is for one closed chat session or
-- one resolved ticket, once: the unique indexes hold that even under
-- concurrent submissions. A request records that an agent (or the auto
-- mode) asked, which is what makes a rating possible in manual mode.

ALTER TABLE entities ADD COLUMN csat TEXT NOT NULL DEFAULT 'auto'
    CHECK (csat IN ('auto', 'manual', 'off'));

CREATE TABLE ratings (
    id               UUID PRIMARY KEY,
    company_id       UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode             TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id        UUID NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    chat_session_id  UUID REFERENCES chat_sessions (id) ON DELETE CASCADE,
    ticket_id        UUID REFERENCES tickets (id) ON DELETE CASCADE,
    score            BIGINT NOT NULL CHECK (score BETWEEN 1 AND 5),
    comment          TEXT CHECK (comment IS NULL OR length(comment) <= 2000),
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    CHECK ((chat_session_id IS NULL) <> (ticket_id IS NULL))
);
CREATE UNIQUE INDEX ratings_chat_session ON ratings (chat_session_id)
    WHERE chat_session_id IS NOT NULL;
CREATE UNIQUE INDEX ratings_ticket ON ratings (ticket_id) WHERE ticket_id IS NOT NULL;
-- The list (newest first) and the report (by entity and period).
CREATE INDEX ratings_tenant ON ratings (company_id, mode, created_at DESC, id DESC);
CREATE INDEX ratings_entity ON ratings (company_id, mode, entity_id, created_at DESC, id DESC);

CREATE TABLE rating_requests (
    record_id     UUID PRIMARY KEY,
    company_id    UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    requested_at  TIMESTAMPTZ NOT NULL
);

-- Who a ticket is from when a widget visitor's chat became the ticket: the
-- session's visitor (its email stays in visitor_email), and the session, so
-- that the visitor's token may rate the ticket too.
ALTER TABLE tickets ADD COLUMN chat_session_id UUID REFERENCES chat_sessions (id) ON DELETE SET NULL;
ALTER TABLE tickets ADD COLUMN visitor_external_id TEXT;
ALTER TABLE tickets ADD COLUMN visitor_name TEXT;
ALTER TABLE tickets ADD COLUMN visitor_verified BOOLEAN NOT NULL DEFAULT false;
