-- Change-feed entries are numbered after their write has committed, by a
-- short transaction of their own (`number_committed` in
-- src/changes/store.rs, run by every feed read and by a worker each
-- second), no longer by the deferred trigger of 0015. That trigger took
-- the tenant's `changes` counter row at COMMIT and held it through the WAL
-- flush, so one tenant's writes committed one at a time.
--
-- An entry is written with `seq` NULL. The numbering transaction locks the
-- counter row, numbers the committed unnumbered entries in the order they
-- were written, and raises the counter, so numbers stay gap-free per
-- tenant and a reader that sees number N sees every entry up to N.
DROP TRIGGER events_seq ON events;
DROP FUNCTION events_assign_seq();

-- The order entries were written in, from one sequence for every node: two
-- changes of one record are written one after the other (the second waits
-- for the first's row lock), so their entries are numbered in that order
-- whatever the nodes' clocks say. Rows written before this migration keep
-- NULL; they are all numbered already.
CREATE SEQUENCE events_written;
ALTER TABLE events ADD COLUMN written BIGINT;
ALTER TABLE events ALTER COLUMN written SET DEFAULT nextval('events_written');
ALTER SEQUENCE events_written OWNED BY events.written;

-- What the numbering looks for: a tenant's entries still without a number.
CREATE INDEX events_unnumbered ON events (company_id, mode, written)
    WHERE record_type IS NOT NULL AND seq IS NULL;
