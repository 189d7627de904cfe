-- Cursor paging and cheap ticket totals.

-- The key that seals list cursors: one random secret for the service, so
-- every node opens every node's cursors with no configuration. The first
-- node to start inserts it (`ON CONFLICT DO NOTHING`, then every node reads
-- the one row back).
CREATE TABLE cursor_secret (
    id      SMALLINT PRIMARY KEY CHECK (id = 1),
    secret  BYTEA NOT NULL CHECK (length(secret) = 32)
);

-- Ticket counts per (company, mode, entity, status, priority, assignee),
-- for the exact `total` of GET /tickets: a filter on any subset of those
-- columns sums the matching rows. The cost depends on how many of these
-- combinations a company uses (bounded by entities x statuses x priorities
-- x agents, in practice tens to a few hundred rows), not on its ticket
-- count: a COUNT(*) over 1,000,000 matching tickets reads 1,000,000 index
-- entries, this reads the same few rows at 2,000 tickets or 2,000,000.
-- Measured on Postgres 15 with 1,000,000 tickets of one company (250,000
-- OPEN, 80 combinations): `COUNT(*) … status = 'OPEN'`, an index-only scan
-- of tickets_list_s, 126 ms and 2,340 buffers; the sum here 0.04 ms and 2
-- buffers.
--
-- Kept by triggers rather than by each store function: every way a ticket
-- row changes is covered in the same transaction, including those no store
-- function sees (a user deletion unassigning through ON DELETE SET NULL, a
-- company deletion cascading). Unassigned is the nil UUID, so the key can
-- be a primary key and the upsert has a conflict target. A row that drops
-- to zero stays (deleting it would race with a concurrent increment).
CREATE TABLE ticket_counts (
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL,
    entity_id   UUID NOT NULL,
    status      TEXT NOT NULL,
    priority    TEXT NOT NULL,
    assignee    UUID NOT NULL,
    tickets     BIGINT NOT NULL,
    PRIMARY KEY (company_id, mode, entity_id, status, priority, assignee)
);

CREATE FUNCTION ticket_counts_add(t tickets, delta BIGINT) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    who UUID := COALESCE(t.assigned_to_id, '00000000-0000-0000-0000-000000000000');
BEGIN
    IF delta > 0 THEN
        INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, tickets)
        VALUES (t.company_id, t.mode, t.entity_id, t.status, t.priority, who, delta)
        ON CONFLICT (company_id, mode, entity_id, status, priority, assignee)
        DO UPDATE SET tickets = ticket_counts.tickets + EXCLUDED.tickets;
    ELSE
        -- The row exists (the ticket was counted in it) unless its company
        -- is being deleted, which removes the counts anyway.
        UPDATE ticket_counts SET tickets = tickets + delta
        WHERE company_id = t.company_id AND mode = t.mode AND entity_id = t.entity_id
          AND status = t.status AND priority = t.priority AND assignee = who;
    END IF;
END $$;

CREATE FUNCTION ticket_counts_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM ticket_counts_add(NEW, 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM ticket_counts_add(OLD, -1);
    -- Two moves in opposite directions lock their two rows in the same
    -- order (the smaller key first), so they cannot deadlock.
    ELSIF (OLD.entity_id, OLD.status, OLD.priority,
           COALESCE(OLD.assigned_to_id, '00000000-0000-0000-0000-000000000000'))
        < (NEW.entity_id, NEW.status, NEW.priority,
           COALESCE(NEW.assigned_to_id, '00000000-0000-0000-0000-000000000000')) THEN
        PERFORM ticket_counts_add(OLD, -1);
        PERFORM ticket_counts_add(NEW, 1);
    ELSE
        PERFORM ticket_counts_add(NEW, 1);
        PERFORM ticket_counts_add(OLD, -1);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER ticket_counts_insert AFTER INSERT ON tickets
    FOR EACH ROW EXECUTE FUNCTION ticket_counts_follow();
CREATE TRIGGER ticket_counts_delete AFTER DELETE ON tickets
    FOR EACH ROW EXECUTE FUNCTION ticket_counts_follow();
CREATE TRIGGER ticket_counts_update AFTER UPDATE ON tickets
    FOR EACH ROW
    WHEN ((OLD.entity_id, OLD.status, OLD.priority, OLD.assigned_to_id)
          IS DISTINCT FROM (NEW.entity_id, NEW.status, NEW.priority, NEW.assigned_to_id))
    EXECUTE FUNCTION ticket_counts_follow();

-- The backfill runs after the triggers exist, in the migration's
-- transaction: CREATE TRIGGER locks out ticket writes until it commits, so
-- no write falls between the two.
INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, tickets)
SELECT company_id, mode, entity_id, status, priority,
       COALESCE(assigned_to_id, '00000000-0000-0000-0000-000000000000'), COUNT(*)
FROM tickets
GROUP BY company_id, mode, entity_id, status, priority,
         COALESCE(assigned_to_id, '00000000-0000-0000-0000-000000000000');
