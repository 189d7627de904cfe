-- Saved views: a named ticket list (the list's filters, checked and kept
-- in canonical form, and its order). A personal view belongs to its agent
-- (owner_id) and only they see it; a shared one is the tenant's.
CREATE TABLE ticket_views (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    visibility  TEXT NOT NULL CHECK (visibility IN ('personal', 'shared')),
    owner_id    UUID REFERENCES users (id) ON DELETE CASCADE,
    -- {status, priority, tag: [..], "cf.<key>": .., ...}: the ticket
    -- list's query parameters, read whole.
    filters     JSONB NOT NULL,
    sort        TEXT NOT NULL CHECK (sort IN ('newest', 'sla_due')),
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    CHECK ((visibility = 'personal') = (owner_id IS NOT NULL))
);
CREATE INDEX ticket_views_tenant ON ticket_views (company_id, mode, name, id);
CREATE INDEX ticket_views_owner ON ticket_views (owner_id) WHERE owner_id IS NOT NULL;

-- Mentions: the agents an internal note names with `@`, written in the
-- note's transaction; each agent lists theirs, newest first.
CREATE TABLE ticket_mentions (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    ticket_id   UUID NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    comment_id  UUID NOT NULL REFERENCES ticket_comments (id) ON DELETE CASCADE,
    user_id     UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (comment_id, user_id)
);
CREATE INDEX ticket_mentions_user ON ticket_mentions (user_id, created_at DESC, id DESC);
CREATE INDEX ticket_mentions_ticket ON ticket_mentions (ticket_id);

-- Scheduled replies and undo send: an agent's public reply waits (held in
-- the undo window, or scheduled for its sendAt) until `send_at`, when the
-- delivery pass marks it sent and records its comment.created; cancelled
-- ones are never delivered. Every comment written before is sent.
ALTER TABLE ticket_comments ADD COLUMN delivery_state TEXT NOT NULL DEFAULT 'sent'
    CHECK (delivery_state IN ('scheduled', 'held', 'sent', 'cancelled'));
ALTER TABLE ticket_comments ADD COLUMN send_at TIMESTAMPTZ;
CREATE INDEX ticket_comments_waiting ON ticket_comments (send_at)
    WHERE delivery_state IN ('scheduled', 'held');
