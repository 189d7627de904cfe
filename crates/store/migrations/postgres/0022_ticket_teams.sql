-- Tickets in teams: the team becomes a dimension of the ticket totals and
-- of the list indexes, and routing keeps a rotation of its own for tickets.
--
-- `ticket_counts` gains `team` (no team is the nil UUID, as for the
-- assignee), so a `teamId` filter alone or with any other keeps an exact
-- total read from a few rows. A team is one slice of the desk (its
-- entities, its agents), so the extra dimension adds few combinations.
-- Ticket writes are locked out while the key changes and the counts are
-- rebuilt, in this migration's transaction.
--
-- List indexes: one per filter combination would double the 16 of
-- 0004_tickets.sql to 32, and every ticket write would pay for all of
-- them. A team's views are its queue and its members' work: team alone,
-- with a status, with an assignee, and with both. Entity and priority
-- within a team are filtered while reading one of these in order (a
-- team's tickets are a small share of the company's), never sorted.

LOCK TABLE tickets IN SHARE ROW EXCLUSIVE MODE;

DROP TRIGGER ticket_counts_update ON tickets;
ALTER TABLE ticket_counts ADD COLUMN team UUID NOT NULL
    DEFAULT '00000000-0000-0000-0000-000000000000';
ALTER TABLE ticket_counts ALTER COLUMN team DROP DEFAULT;
ALTER TABLE ticket_counts DROP CONSTRAINT ticket_counts_pkey;
ALTER TABLE ticket_counts
    ADD PRIMARY KEY (company_id, mode, entity_id, status, priority, assignee, team);

CREATE OR REPLACE FUNCTION ticket_counts_add(t tickets, delta BIGINT) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    who UUID := COALESCE(t.assigned_to_id, '00000000-0000-0000-0000-000000000000');
    which_team UUID := COALESCE(t.team_id, '00000000-0000-0000-0000-000000000000');
BEGIN
    IF delta > 0 THEN
        INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, team, tickets)
        VALUES (t.company_id, t.mode, t.entity_id, t.status, t.priority, who, which_team, delta)
        ON CONFLICT (company_id, mode, entity_id, status, priority, assignee, team)
        DO UPDATE SET tickets = ticket_counts.tickets + EXCLUDED.tickets;
    ELSE
        -- The row exists (the ticket was counted in it) unless its company
        -- is being deleted, which removes the counts anyway.
        UPDATE ticket_counts SET tickets = tickets + delta
        WHERE company_id = t.company_id AND mode = t.mode AND entity_id = t.entity_id
          AND status = t.status AND priority = t.priority AND assignee = who
          AND team = which_team;
    END IF;
END $$;

CREATE OR REPLACE FUNCTION ticket_counts_follow() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM ticket_counts_add(NEW, 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM ticket_counts_add(OLD, -1);
    -- Two moves in opposite directions lock their two rows in the same
    -- order (the smaller key first), so they cannot deadlock.
    ELSIF (OLD.entity_id, OLD.status, OLD.priority,
           COALESCE(OLD.assigned_to_id, '00000000-0000-0000-0000-000000000000'),
           COALESCE(OLD.team_id, '00000000-0000-0000-0000-000000000000'))
        < (NEW.entity_id, NEW.status, NEW.priority,
           COALESCE(NEW.assigned_to_id, '00000000-0000-0000-0000-000000000000'),
           COALESCE(NEW.team_id, '00000000-0000-0000-0000-000000000000')) THEN
        PERFORM ticket_counts_add(OLD, -1);
        PERFORM ticket_counts_add(NEW, 1);
    ELSE
        PERFORM ticket_counts_add(NEW, 1);
        PERFORM ticket_counts_add(OLD, -1);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER ticket_counts_update AFTER UPDATE ON tickets
    FOR EACH ROW
    WHEN ((OLD.entity_id, OLD.status, OLD.priority, OLD.assigned_to_id, OLD.team_id)
          IS DISTINCT FROM (NEW.entity_id, NEW.status, NEW.priority, NEW.assigned_to_id,
                            NEW.team_id))
    EXECUTE FUNCTION ticket_counts_follow();

DELETE FROM ticket_counts;
INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, team, tickets)
SELECT company_id, mode, entity_id, status, priority,
       COALESCE(assigned_to_id, '00000000-0000-0000-0000-000000000000'),
       COALESCE(team_id, '00000000-0000-0000-0000-000000000000'), COUNT(*)
FROM tickets
GROUP BY company_id, mode, entity_id, status, priority,
         COALESCE(assigned_to_id, '00000000-0000-0000-0000-000000000000'),
         COALESCE(team_id, '00000000-0000-0000-0000-000000000000');

CREATE INDEX tickets_list_t ON tickets (company_id, mode, team_id, created_at DESC, id DESC)
    WHERE team_id IS NOT NULL;
CREATE INDEX tickets_list_ts ON tickets (company_id, mode, team_id, status, created_at DESC, id DESC)
    WHERE team_id IS NOT NULL;
CREATE INDEX tickets_list_ta ON tickets (company_id, mode, team_id, assigned_to_id, created_at DESC, id DESC)
    WHERE team_id IS NOT NULL AND assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_tsa ON tickets (company_id, mode, team_id, status, assigned_to_id, created_at DESC, id DESC)
    WHERE team_id IS NOT NULL AND assigned_to_id IS NOT NULL;

-- round_robin over tickets: the member who got the team's last routed
-- ticket (chats keep their own rotation in last_assigned_id).
ALTER TABLE teams ADD COLUMN last_ticket_assignee_id UUID;

-- Escalation rules may send a ticket to a team (and its routing) instead of,
-- or beside, a person: `escalate_to_id` becomes optional. A deleted team
-- leaves its rules without that target; a rule left with no target at all
-- does not fire.
ALTER TABLE escalation_rules ALTER COLUMN escalate_to_id DROP NOT NULL;
ALTER TABLE escalation_rules
    ADD COLUMN escalate_to_team_id UUID REFERENCES teams (id) ON DELETE SET NULL;
