-- no-transaction
-- Statuses and timeline kinds that later features add.
--
-- Tickets gain the status PENDING (waiting on the customer), which SLA
-- clocks pause on. SQLite cannot change a CHECK constraint in place, so
-- `tickets` is rebuilt the way SQLite documents it: foreign keys off (a DROP
-- with them on would cascade into every comment and activity), copy, drop,
-- rename, then the indexes and triggers again. That needs the PRAGMA outside
-- a transaction, hence `no-transaction` and the explicit BEGIN/COMMIT.
--
-- The timeline's kinds move from a CHECK list (a rebuild for every new kind)
-- to a table of kinds that a migration extends with one INSERT.

PRAGMA foreign_keys = OFF;
BEGIN;

CREATE TABLE tickets_new (
    id              BLOB PRIMARY KEY,
    company_id      BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id       BLOB NOT NULL REFERENCES entities (id),
    -- `TKT-000001`, from the `counters` row (company_id, mode, 'ticket').
    ticket_number   TEXT NOT NULL,
    subject         TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    description     TEXT CHECK (length(description) <= 50000),
    status          TEXT NOT NULL
                    CHECK (status IN ('OPEN', 'IN_PROGRESS', 'PENDING', 'RESOLVED', 'CLOSED')),
    priority        TEXT NOT NULL CHECK (priority IN ('LOW', 'MEDIUM', 'HIGH', 'URGENT')),
    assigned_to_id  BLOB REFERENCES users (id) ON DELETE SET NULL,
    visitor_email   TEXT CHECK (length(visitor_email) <= 255),
    -- Set when the status becomes RESOLVED, cleared when it is reopened.
    resolved_at     TEXT,
    created_at      TEXT NOT NULL,
    -- Last change or comment (escalation rules read "since last activity").
    updated_at      TEXT NOT NULL,
    custom_fields   TEXT NOT NULL DEFAULT '{}',
    team_id         BLOB REFERENCES teams (id) ON DELETE SET NULL,
    UNIQUE (company_id, mode, ticket_number)
);
INSERT INTO tickets_new (id, company_id, mode, entity_id, ticket_number, subject, description, status, priority, assigned_to_id, visitor_email, resolved_at, created_at, updated_at, custom_fields, team_id)
    SELECT id, company_id, mode, entity_id, ticket_number, subject, description, status, priority, assigned_to_id, visitor_email, resolved_at, created_at, updated_at, custom_fields, team_id FROM tickets;
DROP TABLE tickets;
ALTER TABLE tickets_new RENAME TO tickets;

CREATE INDEX tickets_list ON tickets (company_id, mode, created_at DESC, id DESC);
CREATE INDEX tickets_list_e ON tickets (company_id, mode, entity_id, created_at DESC, id DESC);
CREATE INDEX tickets_list_s ON tickets (company_id, mode, status, created_at DESC, id DESC);
CREATE INDEX tickets_list_p ON tickets (company_id, mode, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_a ON tickets (company_id, mode, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_es ON tickets (company_id, mode, entity_id, status, created_at DESC, id DESC);
CREATE INDEX tickets_list_ep ON tickets (company_id, mode, entity_id, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_ea ON tickets (company_id, mode, entity_id, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_sp ON tickets (company_id, mode, status, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_sa ON tickets (company_id, mode, status, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_pa ON tickets (company_id, mode, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_esp ON tickets (company_id, mode, entity_id, status, priority, created_at DESC, id DESC);
CREATE INDEX tickets_list_esa ON tickets (company_id, mode, entity_id, status, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_epa ON tickets (company_id, mode, entity_id, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_spa ON tickets (company_id, mode, status, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_list_espa ON tickets (company_id, mode, entity_id, status, priority, assigned_to_id, created_at DESC, id DESC)
    WHERE assigned_to_id IS NOT NULL;
CREATE INDEX tickets_resolved ON tickets (company_id, mode, resolved_at)
    WHERE resolved_at IS NOT NULL;
CREATE INDEX tickets_resolved_e ON tickets (company_id, mode, entity_id, resolved_at)
    WHERE resolved_at IS NOT NULL;
CREATE TRIGGER tickets_search_insert AFTER INSERT ON tickets BEGIN
    INSERT INTO ticket_search (ticket_id, subject, description)
    VALUES (new.id, new.subject, coalesce(new.description, ''));
END;
CREATE TRIGGER tickets_search_update AFTER UPDATE OF subject, description ON tickets
WHEN old.subject IS NOT new.subject OR old.description IS NOT new.description BEGIN
    UPDATE ticket_search SET subject = new.subject, description = coalesce(new.description, '')
    WHERE ticket_id = new.id;
END;
CREATE TRIGGER ticket_counts_insert AFTER INSERT ON tickets
BEGIN
    INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, tickets)
    VALUES (NEW.company_id, NEW.mode, NEW.entity_id, NEW.status, NEW.priority,
            COALESCE(NEW.assigned_to_id, zeroblob(16)), 1)
    ON CONFLICT (company_id, mode, entity_id, status, priority, assignee)
    DO UPDATE SET tickets = tickets + 1;
END;
CREATE TRIGGER ticket_counts_delete AFTER DELETE ON tickets
BEGIN
    UPDATE ticket_counts SET tickets = tickets - 1
    WHERE company_id = OLD.company_id AND mode = OLD.mode AND entity_id = OLD.entity_id
      AND status = OLD.status AND priority = OLD.priority
      AND assignee = COALESCE(OLD.assigned_to_id, zeroblob(16));
END;
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
CREATE INDEX tickets_team ON tickets (team_id, created_at) WHERE team_id IS NOT NULL;

CREATE TABLE ticket_activity_kinds (
    kind  TEXT PRIMARY KEY
);
INSERT INTO ticket_activity_kinds (kind) VALUES
    ('created'), ('status_changed'), ('priority_changed'), ('assignee_changed'),
    ('escalated'), ('commented'), ('tags_changed'), ('custom_fields_changed'),
    ('team_changed'), ('sla_warning'), ('sla_breached'), ('sla_fulfilled');

CREATE TABLE ticket_activities_new (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    ticket_id   BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL REFERENCES ticket_activity_kinds (kind),
    from_value  TEXT,
    to_value    TEXT,
    details     TEXT,
    created_at  TEXT NOT NULL
);
INSERT INTO ticket_activities_new (id, company_id, mode, ticket_id, kind, from_value, to_value,
    details, created_at)
    SELECT id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at
    FROM ticket_activities;
DROP TABLE ticket_activities;
ALTER TABLE ticket_activities_new RENAME TO ticket_activities;
CREATE INDEX ticket_activities_ticket ON ticket_activities (ticket_id, created_at, id);
CREATE INDEX ticket_activities_escalated ON ticket_activities (company_id, mode, created_at)
    WHERE kind = 'escalated';

COMMIT;
PRAGMA foreign_keys = ON;
