-- Ticket counts in stripes, so that one company's ticket writes stop
-- waiting for each other's commits.
--
-- Until now every create of a company's tickets in one combination (say,
-- OPEN, HIGH, unassigned, no team) added 1 to the same `ticket_counts` row,
-- and the upsert's row lock is held until the ticket's transaction commits:
-- those creates ran one transaction at a time, whatever the pool size.
-- Now each combination is split over up to 16 rows (`stripe`), and a
-- trigger writes to the stripe of its connection, `pg_backend_pid() % 16`:
-- writes on different connections touch different rows. A total is the sum
-- over the stripes (the count query sums matching rows already), so a
-- combination costs the count at most 16 rows instead of one.
--
-- Subtractions (a ticket leaving a combination, or deleted) go to the
-- connection's own stripe as well, as an upsert of -1, whichever stripe
-- counted the ticket: a stripe may go below zero, only the sum means
-- anything. So no write waits for a row another connection holds, and no
-- write has to find "the" row that counted its ticket.
--
-- When a company is deleted, its tickets are deleted by the cascade and
-- their subtractions would insert rows for a company that is going away
-- (which the foreign key refuses): they are skipped, the cascade deletes
-- the company's counts anyway.
--
-- Existing rows become stripe 0. Ticket writes wait for this migration's
-- transaction: ALTER TABLE locks `ticket_counts`, which every ticket write
-- touches through its trigger.

ALTER TABLE ticket_counts ADD COLUMN stripe SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE ticket_counts DROP CONSTRAINT ticket_counts_pkey;
-- The stripe last: the count's filters (company, mode, then any of the
-- others) keep using the key's prefix.
ALTER TABLE ticket_counts
    ADD PRIMARY KEY (company_id, mode, entity_id, status, priority, assignee, team, stripe);

-- `ticket_counts_follow` (0022) keeps calling this with +1 and -1 in the
-- order that avoids deadlocks: two connections whose process ids share a
-- stripe still lock the same rows, in the same order as before.
CREATE OR REPLACE FUNCTION ticket_counts_add(t tickets, delta BIGINT) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF delta < 0 AND NOT EXISTS (SELECT 1 FROM companies WHERE id = t.company_id) THEN
        RETURN;
    END IF;
    INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, team,
                               stripe, tickets)
    VALUES (t.company_id, t.mode, t.entity_id, t.status, t.priority,
            COALESCE(t.assigned_to_id, '00000000-0000-0000-0000-000000000000'),
            COALESCE(t.team_id, '00000000-0000-0000-0000-000000000000'),
            pg_backend_pid() % 16, delta)
    ON CONFLICT (company_id, mode, entity_id, status, priority, assignee, team, stripe)
    DO UPDATE SET tickets = ticket_counts.tickets + EXCLUDED.tickets;
END $$;
