-- The public change feed (`GET /changes`) reads the `events` table: a row
-- that names a record (type, id, op, snapshot) is a feed entry. Entries are
-- numbered per tenant, gap-free, in commit order: SQLite has one writer at
-- a time, so the store takes the next number of the tenant's `changes`
-- counter when it writes the entry.
ALTER TABLE events ADD COLUMN record_type TEXT;
ALTER TABLE events ADD COLUMN record_id BLOB;
ALTER TABLE events ADD COLUMN op TEXT CHECK (op IN ('upsert', 'delete'));
ALTER TABLE events ADD COLUMN record TEXT;
ALTER TABLE events ADD COLUMN seq INTEGER;
CREATE UNIQUE INDEX events_feed ON events (company_id, mode, seq) WHERE seq IS NOT NULL;

-- The highest entry number the retention pass has deleted, per tenant: a
-- cursor below it may have missed entries (410 `cursor_expired`).
CREATE TABLE change_feed_watermarks (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    seq         INTEGER NOT NULL,
    PRIMARY KEY (company_id, mode)
);
