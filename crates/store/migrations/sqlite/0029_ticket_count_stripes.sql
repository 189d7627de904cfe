-- Ticket counts in stripes: on Postgres each combination of `ticket_counts`
-- is split over up to 16 rows, one per group of connections, so that
-- concurrent ticket writes do not wait for each other's commits. SQLite
-- has one writer at a time, so nothing waits here: every count stays in
-- stripe 0, one row per combination as before, and the triggers of 0022
-- stay as they are (the row a subtraction updates always exists). The
-- column gives the table the same columns on both backends, so a query
-- over it (the total sums the matching rows of every stripe) is one text.
ALTER TABLE ticket_counts ADD COLUMN stripe INTEGER NOT NULL DEFAULT 0 CHECK (stripe = 0);
