-- Core seed, run by bench/run.sh through psql after the service migrated the
-- schema and its CLI created the benchmark company (:company) with its
-- entity (:entity) and key. Variables: company, entity.

-- 49 further companies, one entity each: 50 tenants in all.
INSERT INTO companies (id, name, status, created_at, updated_at)
SELECT gen_random_uuid(), 'Bench company ' || g, 'active', now(), now()
FROM generate_series(2, 50) AS g;

INSERT INTO entities (id, company_id, name, widget_key_test, widget_key_live, created_at, updated_at)
SELECT gen_random_uuid(), c.id, c.name || ' entity',
       'wk_test_' || md5(random()::text), 'wk_live_' || md5(random()::text), now(), now()
FROM companies AS c
WHERE c.id <> :'company';

-- 10,000 agents of the benchmark company: the presence scenario heartbeats them.
INSERT INTO users (id, company_id, name, email, role, created_at, updated_at)
SELECT gen_random_uuid(), :'company', 'Agent ' || g, 'agent' || g || '@bench.example', 'AGENT',
       now() - interval '1 day', now() - interval '1 day'
FROM generate_series(1, 10000) AS g;

-- Time-ordered ids for the pgbench baselines, as the service's UUIDv7 (a
-- random v4 id would scatter index inserts and handicap the baseline).
CREATE OR REPLACE FUNCTION bench_uuid7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
          || '7' || substr(md5(random()::text), 1, 19))::uuid
$$;

-- The ticket numbers of scenario 1's plain-sequence baseline
-- (pgbench_tickets_create_sequence.sql; `SEQ-` numbers, apart from the
-- service's `TKT-` ones).
CREATE SEQUENCE bench_ticket_numbers;

ANALYZE;
