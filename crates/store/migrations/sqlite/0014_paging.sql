-- Cursor paging and cheap ticket totals.

-- The key that seals list cursors: one random secret for the service, so
-- every node opens every node's cursors with no configuration. The first
-- node to start inserts it (`ON CONFLICT DO NOTHING`, then every node reads
-- the one row back).
CREATE TABLE cursor_secret (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    secret  BLOB NOT NULL CHECK (length(secret) = 32)
);

-- Ticket counts per (company, mode, entity, status, priority, assignee),
-- for the exact `total` of GET /tickets: a filter on any subset of those
-- columns sums the matching rows. The cost depends on how many of these
-- combinations a company uses (bounded by entities x statuses x priorities
-- x agents, in practice tens to a few hundred rows), not on its ticket
-- count: a COUNT(*) over 1,000,000 matching tickets reads 1,000,000 index
-- entries, this reads the same few rows at 2,000 tickets or 2,000,000.
--
-- Kept by triggers rather than by each store function: every way a ticket
-- row changes is covered in the same transaction, including those no store
-- function sees (a user deletion unassigning through ON DELETE SET NULL, a
-- company deletion cascading). Unassigned is the nil UUID (16 zero bytes,
-- as a UUID is stored here), so the key can be a primary key and the
-- upsert has a conflict target. A row that drops to zero stays.
--
-- A later migration that rebuilds `tickets` (the SQLite way to change a
-- CHECK: create, copy, drop, rename) drops these triggers with the old
-- table: it must create them again and rebuild the counts.
CREATE TABLE ticket_counts (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL,
    entity_id   BLOB NOT NULL,
    status      TEXT NOT NULL,
    priority    TEXT NOT NULL,
    assignee    BLOB NOT NULL,
    tickets     INTEGER NOT NULL,
    PRIMARY KEY (company_id, mode, entity_id, status, priority, assignee)
) WITHOUT ROWID;

CREATE TRIGGER ticket_counts_insert AFTER INSERT ON tickets
BEGIN
    INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, tickets)
    VALUES (NEW.company_id, NEW.mode, NEW.entity_id, NEW.status, NEW.priority,
            COALESCE(NEW.assigned_to_id, zeroblob(16)), 1)
    ON CONFLICT (company_id, mode, entity_id, status, priority, assignee)
    DO UPDATE SET tickets = tickets + 1;
END;

-- The row exists (the ticket was counted in it) unless its company is
-- being deleted, which removes the counts anyway.
CREATE TRIGGER ticket_counts_delete AFTER DELETE ON tickets
BEGIN
    UPDATE ticket_counts SET tickets = tickets - 1
    WHERE company_id = OLD.company_id AND mode = OLD.mode AND entity_id = OLD.entity_id
      AND status = OLD.status AND priority = OLD.priority
      AND assignee = COALESCE(OLD.assigned_to_id, zeroblob(16));
END;

-- SQLite has one writer at a time: no lock order to keep.
CREATE TRIGGER ticket_counts_update AFTER UPDATE ON tickets
WHEN OLD.entity_id IS NOT NEW.entity_id OR OLD.status IS NOT NEW.status
  OR OLD.priority IS NOT NEW.priority OR OLD.assigned_to_id IS NOT NEW.assigned_to_id
BEGIN
    UPDATE ticket_counts SET tickets = tickets - 1
    WHERE company_id = OLD.company_id AND mode = OLD.mode AND entity_id = OLD.entity_id
      AND status = OLD.status AND priority = OLD.priority
      AND assignee = COALESCE(OLD.assigned_to_id, zeroblob(16));
    INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, tickets)
    VALUES (NEW.company_id, NEW.mode, NEW.entity_id, NEW.status, NEW.priority,
            COALESCE(NEW.assigned_to_id, zeroblob(16)), 1)
    ON CONFLICT (company_id, mode, entity_id, status, priority, assignee)
    DO UPDATE SET tickets = tickets + 1;
END;

INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, tickets)
SELECT company_id, mode, entity_id, status, priority,
       COALESCE(assigned_to_id, zeroblob(16)), COUNT(*)
FROM tickets
GROUP BY company_id, mode, entity_id, status, priority, COALESCE(assigned_to_id, zeroblob(16));
