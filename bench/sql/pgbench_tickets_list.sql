-- Baseline of scenario 2: what GET /tickets?status=OPEN&limit=20 runs
-- (src/tickets/store `list`): the page with the assignee (one query, one row
-- more than the page: it says whether a next page exists) and the total
-- (one query over the ticket_counts rows), each on its own (no transaction), with the same
-- parameters bound. Auth and rate limit need no SQL (key cache, limiter).
-- Variables: company, mode.
\set limit 21
\set offset 0
SELECT t.id, t.ticket_number, t.subject, t.description, t.status, t.priority, t.entity_id,
       t.visitor_email, t.assigned_to_id, u.name AS assignee_name, u.email AS assignee_email,
       t.resolved_at, t.created_at, t.updated_at
FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id
WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status
ORDER BY t.created_at DESC, t.id DESC LIMIT :limit OFFSET :offset;
SELECT CAST(COALESCE(SUM(c.tickets), 0) AS BIGINT) FROM ticket_counts c
WHERE c.company_id = :company AND c.mode = :mode AND c.status = :status;
