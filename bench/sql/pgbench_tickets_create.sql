-- Baseline of scenario 1: the statements POST /tickets runs
-- (src/tickets/store `create`), in the service's two round trips and
-- two transactions, with the same parameters. Auth and rate limit need no
-- SQL (key cache, limiter); no webhook is subscribed, no SLA policy
-- matches and no visitorEmail is given, as in the service's run, so no
-- delivery, clock or email row is written on either side.
-- Variables: company, entity, mode.
--
-- 1. The ticket number, reserved and committed at once with an
--    asynchronous commit (a rolled-back create leaves a gap), so creates of
--    one company do not wait on each other's commits; it travels to the
--    next statement in a session setting.
\startpipeline
SELECT set_config('synchronous_commit', 'off', true);
WITH reserved AS (
  INSERT INTO counters (company_id, mode, name, value) VALUES (:company, :mode, 'ticket', 1)
  ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1
  RETURNING value)
SELECT set_config('supportdesk.ticket_number',
                  'TKT-' || lpad(value::text, greatest(6, length(value::text)), '0'), false)
FROM reserved;
\endpipeline
-- 2. In one statement that commits by itself: the ticket (only if the
--    entity is the company's and no webhook subscribes to ticket.created,
--    which would need a delivery row written with it), its `created`
--    activity, its change-feed event with the ticket as the API shows it,
--    and whether a webhook subscribes (none).
WITH inserted AS (
  INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, description,
                       status, priority, visitor_email, team_id, created_at, updated_at,
                       chat_session_id, visitor_external_id, visitor_name, visitor_verified,
                       sla_policy_id)
  SELECT bench_uuid7(), :company, :mode, :entity,
         COALESCE(NULL, current_setting('supportdesk.ticket_number')),
         'Bench ticket 1: cannot log in',
         'The login page answers with an error after the password step. Steps: open the app, enter the e-mail, enter the password.',
         'OPEN', 'HIGH', NULL, NULL, now(), now(), NULL, NULL, NULL, false, NULL
  FROM entities e WHERE e.id = :entity AND e.company_id = :company
    AND NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.company_id = :company AND w.mode = :mode
                    AND w.is_active AND w.events @> '["ticket.created"]')
  RETURNING id, ticket_number),
activity AS (
  INSERT INTO ticket_activities (id, company_id, mode, ticket_id, kind, from_value, to_value,
                                 details, created_at)
  SELECT bench_uuid7(), :company, :mode, inserted.id, 'created', NULL, 'OPEN',
         jsonb_set('{"tags": [], "teamId": null, "priority": "HIGH", "customFields": {}}',
                   '{ticketNumber}', to_jsonb(inserted.ticket_number)), now()
  FROM inserted),
written AS (
  INSERT INTO events (id, company_id, mode, name, data, created_at, record_type, record_id, op,
                      record)
  SELECT bench_uuid7(), :company, :mode, 'ticket.created',
         jsonb_set(ticket.json, '{ticketNumber}', to_jsonb(inserted.ticket_number)), now(),
         'ticket', inserted.id, 'upsert',
         jsonb_set(ticket.json, '{ticketNumber}', to_jsonb(inserted.ticket_number))
  FROM inserted, (SELECT jsonb_build_object(
    'id', bench_uuid7()::text, 'sla', NULL, 'tags', '[]'::jsonb, 'status', 'OPEN',
    'teamId', NULL, 'subject', 'Bench ticket 1: cannot log in', 'visitor', NULL,
    'entityId', :entity::text, 'priority', 'HIGH', 'createdAt', now(), 'updatedAt', now(),
    'assignedTo', NULL, 'resolvedAt', NULL, 'attachments', '[]'::jsonb,
    'description', 'The login page answers with an error after the password step. Steps: open the app, enter the e-mail, enter the password.',
    'assignedToId', NULL, 'customFields', '{}'::jsonb, 'ticketNumber', '',
    'visitorEmail', NULL, 'chatSessionId', NULL) AS json) ticket)
SELECT inserted.ticket_number,
       EXISTS (SELECT 1 FROM webhooks w WHERE w.company_id = :company AND w.mode = :mode
               AND w.is_active AND w.events @> '["ticket.created"]') AS subscribed
FROM (VALUES (1)) AS one (x) LEFT JOIN inserted ON TRUE;
