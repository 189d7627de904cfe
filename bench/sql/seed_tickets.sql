-- 100,000 tickets across the 50 companies (2,000 each, live mode), with
-- their `created` timeline entries and `ticket.created` events, and the
-- ticket counters at 2,000 so the API continues the numbering.
-- Variables: company (the benchmark company; half its tickets are assigned
-- to its agents, the other companies have no users).
-- Status mix: 25% OPEN, 25% IN_PROGRESS, 30% RESOLVED, 20% CLOSED.

CREATE TEMP TABLE seed_agents AS
SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE company_id = :'company';

CREATE TEMP TABLE seed_tickets AS
SELECT gen_random_uuid() AS id,
       c.id AS company_id,
       e.id AS entity_id,
       n,
       (ARRAY['Cannot log in', 'Refund for order', 'Invoice is wrong', 'App crashes on start',
              'Password reset email missing', 'Shipping delayed', 'Change billing address',
              'Export my data', 'Two-factor code rejected', 'Cancel subscription'])[1 + n % 10]
         || ' #' || n AS subject,
       CASE WHEN n % 20 < 5 THEN 'OPEN' WHEN n % 20 < 10 THEN 'IN_PROGRESS'
            WHEN n % 20 < 16 THEN 'RESOLVED' ELSE 'CLOSED' END AS status,
       (ARRAY['LOW', 'MEDIUM', 'MEDIUM', 'HIGH', 'URGENT'])[1 + (n * 7) % 5] AS priority,
       CASE WHEN c.id = :'company' AND n % 2 = 0
            THEN (SELECT ids[1 + (n * 13) % array_length(ids, 1)] FROM seed_agents) END AS assigned_to_id,
       now() - (2001 - n) * interval '90 minutes' - (random() * interval '60 minutes') AS created_at
FROM companies AS c
JOIN LATERAL (SELECT id FROM entities WHERE company_id = c.id ORDER BY created_at LIMIT 1) AS e ON TRUE
CROSS JOIN generate_series(1, 2000) AS n;

INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, description, status,
                     priority, assigned_to_id, visitor_email, resolved_at, created_at, updated_at)
SELECT id, company_id, 'live', entity_id, 'TKT-' || lpad(n::text, 6, '0'), subject,
       'The customer reports: ' || subject || '. Steps to reproduce and screenshots are attached.',
       status, priority, assigned_to_id,
       CASE WHEN n % 3 = 0 THEN 'visitor' || n || '@example.com' END,
       CASE WHEN status = 'RESOLVED' THEN created_at + interval '1 day' END,
       created_at, created_at
FROM seed_tickets
ORDER BY created_at;

INSERT INTO ticket_activities (id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at)
SELECT gen_random_uuid(), company_id, 'live', id, 'created', NULL, 'OPEN',
       jsonb_build_object('ticketNumber', 'TKT-' || lpad(n::text, 6, '0'), 'priority', priority),
       created_at
FROM seed_tickets;

INSERT INTO events (id, company_id, mode, name, data, created_at)
SELECT gen_random_uuid(), company_id, 'live', 'ticket.created',
       jsonb_build_object('id', id, 'ticketNumber', 'TKT-' || lpad(n::text, 6, '0'),
                          'subject', subject, 'status', 'OPEN', 'priority', priority,
                          'entityId', entity_id, 'createdAt', created_at),
       created_at
FROM seed_tickets;

INSERT INTO counters (company_id, mode, name, value)
SELECT id, 'live', 'ticket', 2000 FROM companies
ON CONFLICT (company_id, mode, name) DO UPDATE SET value = EXCLUDED.value;
