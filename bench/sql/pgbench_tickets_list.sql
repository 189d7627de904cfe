-- Baseline of scenario 2: what GET /tickets?status=OPEN&limit=20 runs
-- (src/tickets/store.rs `list`): the page with the assignee (one query) and
-- the total (one query), each on its own (no transaction), with the same
-- parameters bound. Auth and rate limit need no SQL (key cache, limiter).
-- Variables: company, mode.
\set limit 20
\set offset 0
SELECT t.id, t.ticket_number, t.subject, t.description, t.status, t.priority, t.entity_id,
       t.visitor_email, t.assigned_to_id, u.name AS assignee_name, u.email AS assignee_email,
       t.resolved_at, t.created_at, t.updated_at
FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id
WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status
ORDER BY t.created_at DESC, t.id DESC LIMIT :limit OFFSET :offset;
SELECT COUNT(*) FROM tickets t WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status;
