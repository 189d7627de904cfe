-- A person's data on request (issue 53): exports and erasures run as
-- background jobs whose state, progress and result a caller reads, and
-- audit entries a person's erasure can redact while the chain verifies.

CREATE TABLE contact_jobs (
    id            UUID PRIMARY KEY,
    company_id    UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    -- Not a reference: an erased contact is deleted, its job stays.
    contact_id    UUID NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('export', 'erase')),
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    -- Percent done, 0 to 100.
    progress      BIGINT NOT NULL DEFAULT 0,
    -- An export's archive (a zip) until it is downloaded.
    archive       BYTEA,
    downloaded_at TIMESTAMPTZ,
    error         TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX contact_jobs_of_contact ON contact_jobs (company_id, mode, contact_id, kind);

-- The canonical form an entry was sealed in (1: every field as stored;
-- 2: the fields that can name a person through their digest), and that
-- digest once an erasure replaced those fields.
ALTER TABLE audit_entries ADD COLUMN canon INTEGER NOT NULL DEFAULT 1;
ALTER TABLE audit_entries ADD COLUMN redacted_digest TEXT;
