-- Versions: a ticket's and a chat session's `version` grows with every
-- change, in the change's transaction, so a write sent with `If-Match` on
-- an older one is refused. A timeline entry keeps the version its change
-- made, so a refusal can list what changed since (entries written before
-- versions read as 1).
ALTER TABLE tickets ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE chat_sessions ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE ticket_activities ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

-- Macros: a named set of changes and replies an agent applies to a ticket
-- in one step. A personal macro belongs to its agent (owner_id) and only
-- they see it; a shared one is the tenant's.
CREATE TABLE macros (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    description TEXT,
    visibility  TEXT NOT NULL CHECK (visibility IN ('personal', 'shared')),
    owner_id    UUID REFERENCES users (id) ON DELETE CASCADE,
    -- {status, priority, assignedToId, teamId, addTags, removeTags,
    -- customFields, reply, note}: validated on write, read whole.
    actions     JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    CHECK ((visibility = 'personal') = (owner_id IS NOT NULL))
);
CREATE INDEX macros_tenant ON macros (company_id, mode, name, id);
CREATE INDEX macros_owner ON macros (owner_id) WHERE owner_id IS NOT NULL;
