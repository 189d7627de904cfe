-- Scenario 10's large tenant: 1,000,000 tickets of one company (:company,
-- its entity :entity, live mode), inserted as the service's writes leave
-- them, so the triggers fill the search documents and the ticket counts.
-- Only the ticket rows: the list and search requests the scenario measures
-- read nothing else (no timeline entries, events, tags or field values).
--
-- Status mix as the 2,000-ticket companies of seed_tickets.sql: 25% OPEN,
-- 25% IN_PROGRESS, 30% RESOLVED, 20% CLOSED; unassigned. Subjects cycle
-- through ten phrases with the ticket's number (`#123456`), so a search
-- for a common word (`refund`) matches 10% of the tickets and one for a
-- number matches one. Creation times span ten years, newest last.
-- Variables: company, entity, tickets (how many; 1000000).
--
-- The ticket counts are summed once at the end instead of by their
-- per-row trigger: a million increments of the same few dozen rows in one
-- transaction leave each row a chain of a million dead versions that every
-- next increment walks (the insert ran for over 20 minutes). Nothing else
-- writes while the benchmark seeds. The sums go to stripe 0 (the column's
-- default): a total adds up every stripe of a combination.

ALTER TABLE tickets DISABLE TRIGGER ticket_counts_insert;

INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, description, status,
                     priority, visitor_email, custom_fields, resolved_at, created_at, updated_at)
SELECT gen_random_uuid(), :'company', 'live', :'entity', 'TKT-' || lpad(n::text, 7, '0'),
       subject, 'The customer reports: ' || subject || '. Steps to reproduce are attached.',
       status, priority, CASE WHEN n % 3 = 0 THEN 'visitor' || n || '@example.com' END,
       '{}', CASE WHEN status = 'RESOLVED' THEN created_at + interval '1 day' END,
       created_at, created_at
FROM (
    SELECT n,
           (ARRAY['Cannot log in', 'Refund for order', 'Invoice is wrong', 'App crashes on start',
                  'Password reset email missing', 'Shipping delayed', 'Change billing address',
                  'Export my data', 'Two-factor code rejected', 'Cancel subscription'])[1 + n % 10]
             || ' #' || n AS subject,
           CASE WHEN n % 20 < 5 THEN 'OPEN' WHEN n % 20 < 10 THEN 'IN_PROGRESS'
                WHEN n % 20 < 16 THEN 'RESOLVED' ELSE 'CLOSED' END AS status,
           (ARRAY['LOW', 'MEDIUM', 'MEDIUM', 'HIGH', 'URGENT'])[1 + (n * 7) % 5] AS priority,
           now() - (:tickets + 1 - n) * interval '5 minutes' AS created_at
    FROM generate_series(1, :tickets) AS n
) AS seed
ORDER BY created_at;

ALTER TABLE tickets ENABLE TRIGGER ticket_counts_insert;

INSERT INTO ticket_counts (company_id, mode, entity_id, status, priority, assignee, team, tickets)
SELECT company_id, mode, entity_id, status, priority,
       COALESCE(assigned_to_id, '00000000-0000-0000-0000-000000000000'),
       COALESCE(team_id, '00000000-0000-0000-0000-000000000000'), count(*)
FROM tickets
WHERE company_id = :'company'
GROUP BY company_id, mode, entity_id, status, priority, assigned_to_id, team_id
ON CONFLICT (company_id, mode, entity_id, status, priority, assignee, team, stripe)
DO UPDATE SET tickets = ticket_counts.tickets + EXCLUDED.tickets;

INSERT INTO counters (company_id, mode, name, value)
VALUES (:'company', 'live', 'ticket', :tickets)
ON CONFLICT (company_id, mode, name) DO UPDATE SET value = EXCLUDED.value;
