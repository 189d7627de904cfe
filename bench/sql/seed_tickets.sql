-- 100,000 tickets across the 50 companies (2,000 each, live mode), with
-- their `created` timeline entries and `ticket.created` events, and the
-- ticket counters at 2,000 so the API continues the numbering.
-- Variables: company (the benchmark company; half its tickets are assigned
-- to its agents, the other companies have no users).
-- Status mix: 25% OPEN, 25% IN_PROGRESS, 30% RESOLVED, 20% CLOSED.
-- Tags: about 2 per ticket from ten tags with a skew (billing on 45%, vip on
-- 8%), drawn independently of the status. Custom fields: every company
-- defines a `plan` select (free / pro / enterprise) for tickets; 85% of the
-- tickets hold a value (45% free, 30% pro, 10% enterprise), written as the
-- service writes one: in the `custom_fields` column and as a
-- `ticket_field_values` row. The created timeline entry and event carry the
-- tags and values as the service's do.

SELECT setseed(0.18) AS seeded \gset

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
       now() - (2001 - n) * interval '90 minutes' - (random() * interval '60 minutes') AS created_at,
       random() AS plan_draw
FROM companies AS c
JOIN LATERAL (SELECT id FROM entities WHERE company_id = c.id ORDER BY created_at LIMIT 1) AS e ON TRUE
CROSS JOIN generate_series(1, 2000) AS n;

ALTER TABLE seed_tickets ADD COLUMN plan TEXT, ADD COLUMN custom_fields JSONB,
    ADD COLUMN tags JSONB;
UPDATE seed_tickets SET plan = CASE WHEN plan_draw < 0.45 THEN 'free' WHEN plan_draw < 0.75 THEN 'pro'
                                    WHEN plan_draw < 0.85 THEN 'enterprise' END;
UPDATE seed_tickets SET custom_fields = CASE WHEN plan IS NULL THEN '{}'::jsonb
                                             ELSE jsonb_build_object('plan', plan) END;

CREATE TEMP TABLE seed_tag_shares (tag TEXT, share DOUBLE PRECISION);
INSERT INTO seed_tag_shares VALUES
    ('billing', 0.45), ('bug', 0.35), ('question', 0.30), ('login', 0.25), ('mobile', 0.20),
    ('refund', 0.15), ('feature-request', 0.12), ('api', 0.10), ('vip', 0.08),
    ('escalated-by-phone', 0.05);
CREATE TEMP TABLE seed_ticket_tags AS
SELECT t.id AS ticket_id, t.company_id, s.tag
FROM seed_tickets t CROSS JOIN seed_tag_shares s
-- `t.n` keeps the draw per (ticket, tag): a condition on `s` alone would be
-- pushed down to the ten rows of seed_tag_shares and drawn once per tag.
WHERE random() < s.share + 0 * t.n;
ANALYZE seed_tickets;
ANALYZE seed_ticket_tags;
UPDATE seed_tickets t SET tags = g.tags
FROM (SELECT ticket_id, jsonb_agg(tag ORDER BY tag) AS tags FROM seed_ticket_tags GROUP BY ticket_id) AS g
WHERE g.ticket_id = t.id;
UPDATE seed_tickets SET tags = '[]' WHERE tags IS NULL;

INSERT INTO custom_field_definitions (company_id, mode, key, label, type, applies_to_ticket,
                                      applies_to_chat, options, required, visitor_writable,
                                      created_at, updated_at)
SELECT id, 'live', 'plan', 'Plan', 'select', TRUE, FALSE, '["free", "pro", "enterprise"]',
       FALSE, FALSE, now() - interval '200 days', now() - interval '200 days'
FROM companies;

INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, description, status,
                     priority, assigned_to_id, visitor_email, custom_fields, resolved_at,
                     created_at, updated_at)
SELECT id, company_id, 'live', entity_id, 'TKT-' || lpad(n::text, 6, '0'), subject,
       'The customer reports: ' || subject || '. Steps to reproduce and screenshots are attached.',
       status, priority, assigned_to_id,
       CASE WHEN n % 3 = 0 THEN 'visitor' || n || '@example.com' END,
       custom_fields,
       CASE WHEN status = 'RESOLVED' THEN created_at + interval '1 day' END,
       created_at, created_at
FROM seed_tickets
ORDER BY created_at;

INSERT INTO ticket_tags (ticket_id, company_id, mode, tag)
SELECT ticket_id, company_id, 'live', tag FROM seed_ticket_tags;

INSERT INTO ticket_field_values (ticket_id, company_id, mode, key, text_value, number_value)
SELECT id, company_id, 'live', 'plan', plan, NULL FROM seed_tickets WHERE plan IS NOT NULL;

INSERT INTO ticket_activities (id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at)
SELECT gen_random_uuid(), company_id, 'live', id, 'created', NULL, 'OPEN',
       jsonb_build_object('ticketNumber', 'TKT-' || lpad(n::text, 6, '0'), 'priority', priority,
                          'tags', tags, 'customFields', custom_fields),
       created_at
FROM seed_tickets;

INSERT INTO events (id, company_id, mode, name, data, created_at)
SELECT gen_random_uuid(), company_id, 'live', 'ticket.created',
       jsonb_build_object('id', id, 'ticketNumber', 'TKT-' || lpad(n::text, 6, '0'),
                          'subject', subject, 'status', 'OPEN', 'priority', priority,
                          'entityId', entity_id, 'tags', tags, 'customFields', custom_fields,
                          'createdAt', created_at),
       created_at
FROM seed_tickets;

INSERT INTO counters (company_id, mode, name, value)
SELECT id, 'live', 'ticket', 2000 FROM companies
ON CONFLICT (company_id, mode, name) DO UPDATE SET value = EXCLUDED.value;
