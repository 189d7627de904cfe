-- Baseline of scenario 1: the statements POST /tickets runs
-- (src/tickets/store.rs `create`, src/events.rs `emit`, the webhooks'
-- `queue_deliveries`), the same parameters, the writes in one transaction.
-- Auth and rate limit need no SQL (key cache, limiter); no webhook is
-- subscribed and no visitorEmail is given, as in the service's run, so no
-- delivery or email row is written on either side.
-- Variables: company, entity, mode. Lines `--@if-table T ` are kept only
-- when table T exists (areas merged later).
-- entities::store::ensure_belongs (outside the transaction)
SELECT id, company_id, parent_id, name, widget_key_test, widget_key_live, created_at, updated_at
FROM entities WHERE id = :entity AND company_id = :company;
BEGIN;
INSERT INTO counters (company_id, mode, name, value) VALUES (:company, :mode, 'ticket', 1)
ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1
RETURNING value AS number \gset
INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, description,
                     status, priority, visitor_email, created_at, updated_at)
VALUES (bench_uuid7(), :company, :mode, :entity, 'TKT-' || lpad(:number::text, 6, '0'),
        'Bench ticket: cannot log in',
        'The login page answers with an error after the password step. Steps: open the app, enter the e-mail, enter the password.',
        'OPEN', 'HIGH', NULL, now(), now())
RETURNING id AS ticket \gset
INSERT INTO ticket_activities (id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at)
VALUES (bench_uuid7(), :company, :mode, :ticket, 'created', NULL, 'OPEN',
        jsonb_build_object('ticketNumber', 'TKT-' || lpad(:number::text, 6, '0'), 'priority', 'HIGH'), now());
SELECT t.id, t.ticket_number, t.subject, t.description, t.status, t.priority, t.entity_id,
       t.visitor_email, t.assigned_to_id, u.name AS assignee_name, u.email AS assignee_email,
       t.resolved_at, t.created_at, t.updated_at
FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id
WHERE t.id = :ticket AND t.company_id = :company AND t.mode = :mode;
INSERT INTO events (id, company_id, mode, name, data, created_at)
VALUES (bench_uuid7(), :company, :mode, 'ticket.created',
        jsonb_build_object('id', :ticket::text, 'ticketNumber', 'TKT-' || lpad(:number::text, 6, '0'),
          'subject', 'Bench ticket: cannot log in',
          'description', 'The login page answers with an error after the password step. Steps: open the app, enter the e-mail, enter the password.',
          'status', 'OPEN', 'priority', 'HIGH', 'entityId', :entity::text, 'visitorEmail', NULL,
          'assignedToId', NULL, 'assignedTo', NULL, 'resolvedAt', NULL,
          'createdAt', now(), 'updatedAt', now()),
        now());
--@if-table webhooks SELECT id, events FROM webhooks WHERE company_id = :company AND mode = :mode AND is_active;
END;
