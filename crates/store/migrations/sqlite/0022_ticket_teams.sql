-- Tickets in teams: the team becomes a dimension of the ticket totals and
-- of the list indexes, and routing keeps a rotation of its own for tickets.
--
-- `ticket_counts` gains `team` (no team is the nil UUID, 16 zero bytes, as
-- for the assignee), so a `teamId` filter alone or with any other keeps an
-- exact total read from a few rows. A team is one slice of the desk (its
-- entities, its agents), so the extra dimension adds few combinations.
-- SQLite cannot change a primary key in place: the table and its triggers
-- are made again and the counts rebuilt, in this migration's transaction.
--
-- List indexes: one per filter combination would double the 16 of
-- 0004_tickets.sql to 32, and every ticket write would pay for all of
-- them. A team's views are its queue and its members' work: team alone,
-- with a status, with an assignee, and with both. Entity and priority
-- within a team are filtered while reading one of these in order (a
-- team's tickets are a small share of the company's), never sorted.

DROP TRIGGER ticket_counts_insert;
DROP TRIGGER ticket_counts_delete;
DROP TRIGGER ticket_counts_update;
DROP TABLE ticket_counts;

CREATE TABLE ticket_counts (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL,
    entity_id   BLOB NOT NULL,
    status      TEXT NOT NULL,
    priority    TEXT NOT NULL,
    assignee    BLOB NOT NULL,
    team        BLOB NOT NULL,
    tickets     INTEGER NOT NULL,
    PRIMARY KEY (company_id, mode, entity_id, status, priority, assignee, team)
) WITHOUT ROWID;

CREATE TRIGGER ticket_counts_insert AFTER INSERT ON tickets
BEGIN
    INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, team, tickets)
    VALUES (NEW.company_id, NEW.mode, NEW.entity_id, NEW.status, NEW.priority,
            COALESCE(NEW.assigned_to_id, zeroblob(16)), COALESCE(NEW.team_id, zeroblob(16)), 1)
    ON CONFLICT (company_id, mode, entity_id, status, priority, assignee, team)
    DO UPDATE SET tickets = tickets + 1;
END;

CREATE TRIGGER ticket_counts_delete AFTER DELETE ON tickets
BEGIN
    UPDATE ticket_counts SET tickets = tickets - 1
    WHERE company_id = OLD.company_id AND mode = OLD.mode AND entity_id = OLD.entity_id
      AND status = OLD.status AND priority = OLD.priority
      AND assignee = COALESCE(OLD.assigned_to_id, zeroblob(16))
      AND team = COALESCE(OLD.team_id, zeroblob(16));
END;

CREATE TRIGGER ticket_counts_update AFTER UPDATE ON tickets
WHEN OLD.entity_id IS NOT NEW.entity_id OR OLD.status IS NOT NEW.status
  OR OLD.priority IS NOT NEW.priority OR OLD.assigned_to_id IS NOT NEW.assigned_to_id
  OR OLD.team_id IS NOT NEW.team_id
BEGIN
    UPDATE ticket_counts SET tickets = tickets - 1
    WHERE company_id = OLD.company_id AND mode = OLD.mode AND entity_id = OLD.entity_id
      AND status = OLD.status AND priority = OLD.priority
      AND assignee = COALESCE(OLD.assigned_to_id, zeroblob(16))
      AND team = COALESCE(OLD.team_id, zeroblob(16));
    INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, team, tickets)
    VALUES (NEW.company_id, NEW.mode, NEW.entity_id, NEW.status, NEW.priority,
            COALESCE(NEW.assigned_to_id, zeroblob(16)), COALESCE(NEW.team_id, zeroblob(16)), 1)
    ON CONFLICT (company_id, mode, entity_id, status, priority, assignee, team)
    DO UPDATE SET tickets = tickets + 1;
END;

INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, team, tickets)
SELECT company_id, mode, entity_id, status, priority,
       COALESCE(assigned_to_id, zeroblob(16)), COALESCE(team_id, zeroblob(16)), COUNT(*)
FROM tickets
GROUP BY company_id, mode, entity_id, status, priority,
         COALESCE(assigned_to_id, zeroblob(16)), COALESCE(team_id, zeroblob(16));

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
ALTER TABLE teams ADD COLUMN last_ticket_assignee_id BLOB;

-- Escalation rules may send a ticket to a team (and its routing) instead of,
-- or beside, a person: `escalate_to_id` becomes optional. SQLite changes a
-- NOT NULL by rebuilding the table; dropping the old one deletes its
-- firings (ON DELETE CASCADE), so they are kept aside and put back. A
-- deleted team leaves its rules without that target; a rule left with no
-- target at all does not fire.
CREATE TABLE escalation_rules_new (
    id                   BLOB PRIMARY KEY,
    company_id           BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode                 TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    position             INTEGER NOT NULL,
    name                 TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    enabled              INTEGER NOT NULL,
    conditions           TEXT NOT NULL,
    escalate_to_id       BLOB REFERENCES users (id),
    escalate_to_team_id  BLOB REFERENCES teams (id) ON DELETE SET NULL,
    reason               TEXT CHECK (length(reason) <= 1000),
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
INSERT INTO escalation_rules_new (id, company_id, mode, position, name, enabled, conditions,
    escalate_to_id, reason, created_at, updated_at)
    SELECT id, company_id, mode, position, name, enabled, conditions, escalate_to_id, reason,
           created_at, updated_at FROM escalation_rules;
CREATE TEMP TABLE escalation_rule_firings_kept AS SELECT * FROM escalation_rule_firings;
DROP TABLE escalation_rules;
ALTER TABLE escalation_rules_new RENAME TO escalation_rules;
INSERT INTO escalation_rule_firings (rule_id, ticket_id, fired_at)
    SELECT rule_id, ticket_id, fired_at FROM escalation_rule_firings_kept;
DROP TABLE escalation_rule_firings_kept;
CREATE INDEX escalation_rules_tenant ON escalation_rules (company_id, mode, position);
CREATE INDEX escalation_rules_enabled ON escalation_rules (company_id, mode, position) WHERE enabled;
