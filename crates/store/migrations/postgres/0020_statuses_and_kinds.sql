-- Statuses and timeline kinds that later features add.
--
-- Tickets gain the status PENDING (waiting on the customer), which SLA
-- clocks pause on. The timeline's kinds move from a CHECK list to a table of
-- kinds that a migration extends with one INSERT.

ALTER TABLE tickets DROP CONSTRAINT tickets_status_check;
ALTER TABLE tickets ADD CONSTRAINT tickets_status_check
    CHECK (status IN ('OPEN', 'IN_PROGRESS', 'PENDING', 'RESOLVED', 'CLOSED'));

CREATE TABLE ticket_activity_kinds (
    kind  TEXT PRIMARY KEY
);
INSERT INTO ticket_activity_kinds (kind) VALUES
    ('created'), ('status_changed'), ('priority_changed'), ('assignee_changed'),
    ('escalated'), ('commented'), ('tags_changed'), ('custom_fields_changed'),
    ('team_changed'), ('sla_warning'), ('sla_breached'), ('sla_fulfilled');

ALTER TABLE ticket_activities DROP CONSTRAINT ticket_activities_kind_check;
ALTER TABLE ticket_activities ADD CONSTRAINT ticket_activities_kind_fkey
    FOREIGN KEY (kind) REFERENCES ticket_activity_kinds (kind);
