-- One job queue: webhook deliveries are sent by outbox jobs, one per
-- delivery with the delivery's id, and `webhook_deliveries` stays the
-- delivery log the API shows (its rows move only when a job's attempt ends).

-- Deliveries still pending become jobs, keeping their attempt count, due
-- time and any lease a worker of the previous version holds.
INSERT INTO outbox_jobs (id, kind, company_id, mode, payload, status, attempts, run_at,
                         locked_until, last_error, created_at, updated_at)
SELECT id, 'webhook.delivery', company_id, mode, '{}'::jsonb, 'pending', attempts,
       COALESCE(next_attempt_at, created_at), locked_until, last_error, created_at, updated_at
FROM webhook_deliveries
WHERE status = 'pending';

-- Only the deliveries' own lease used these.
DROP INDEX webhook_deliveries_due;
ALTER TABLE webhook_deliveries DROP COLUMN locked_until;

-- Jobs are always claimed by kind (outbox_jobs_kind_due).
DROP INDEX outbox_jobs_due;
