-- Second baseline of scenario 1, the yardstick "POST /tickets of one
-- company against pgbench inserting the same row with a plain sequence":
-- the ticket row of pgbench_tickets_create.sql alone, in a transaction of
-- its own, numbered by `nextval` of a sequence (bench_ticket_numbers,
-- seed_core.sql), which holds no lock until commit. The row's triggers run
-- as for the service (ticket counts, search document). No activity,
-- event or read-back.
-- Variables: company, entity, mode.
INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, description,
                     status, priority, visitor_email, created_at, updated_at)
VALUES (bench_uuid7(), :company, :mode, :entity, 'SEQ-' || nextval('bench_ticket_numbers'),
        'Bench ticket: cannot log in',
        'The login page answers with an error after the password step. Steps: open the app, enter the e-mail, enter the password.',
        'OPEN', 'HIGH', NULL, now(), now());
