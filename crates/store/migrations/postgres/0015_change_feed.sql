-- The public change feed (`GET /changes`) reads the `events` table: a row
-- that names a record (type, id, op, snapshot) is a feed entry. Entries are
-- numbered per tenant, gap-free, in commit order: a deferred trigger runs at
-- COMMIT, takes the tenant's `changes` counter row (its lock is held until
-- the commit is visible) and gives each entry of the transaction the next
-- number. So when a reader sees number N, every entry numbered below N is
-- already visible to it.
ALTER TABLE events ADD COLUMN record_type TEXT;
ALTER TABLE events ADD COLUMN record_id UUID;
ALTER TABLE events ADD COLUMN op TEXT CHECK (op IN ('upsert', 'delete'));
ALTER TABLE events ADD COLUMN record JSONB;
ALTER TABLE events ADD COLUMN seq BIGINT;
CREATE UNIQUE INDEX events_feed ON events (company_id, mode, seq) WHERE seq IS NOT NULL;

CREATE FUNCTION events_assign_seq() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    next_seq BIGINT;
BEGIN
    INSERT INTO counters (company_id, mode, name, value)
    VALUES (NEW.company_id, NEW.mode, 'changes', 1)
    ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1
    RETURNING value INTO next_seq;
    UPDATE events SET seq = next_seq WHERE id = NEW.id;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER events_seq AFTER INSERT ON events
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.record_type IS NOT NULL)
    EXECUTE FUNCTION events_assign_seq();

-- The highest entry number the retention pass has deleted, per tenant: a
-- cursor below it may have missed entries (410 `cursor_expired`).
CREATE TABLE change_feed_watermarks (
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    seq         BIGINT NOT NULL,
    PRIMARY KEY (company_id, mode)
);
