-- Baseline of scenario 2: the one statement GET /tickets?status=OPEN&limit=20
-- runs (src/tickets/store `list`, `list_query`): the page with the assignee,
-- each row's tags and whether it has attachments or SLA clocks, one row
-- more than the page (it says whether a next page exists), and the total
-- from the ticket_counts rows in the same statement, with the same
-- parameters bound. Auth and rate limit need no SQL (key cache, limiter);
-- the seeded tickets have no attachments or clocks, so the service reads
-- neither afterwards.
-- Variables: company, mode, status.
\set limit 21
\set offset 0
SELECT t.id, t.ticket_number, t.subject, t.description, t.status, t.priority, t.entity_id,
       t.visitor_email, t.chat_session_id, t.visitor_external_id, t.visitor_name,
       t.visitor_verified, t.assigned_to_id, u.name AS assignee_name, u.email AS assignee_email,
       t.team_id, t.custom_fields, t.resolved_at, t.created_at, t.updated_at, t.sla_policy_id,
       (SELECT string_agg(g.tag, ' ') FROM ticket_tags g WHERE g.ticket_id = t.id) AS tag_list,
       EXISTS (SELECT 1 FROM attachments a WHERE a.ticket_id = t.id AND a.comment_id IS NULL)
         AS has_attachments,
       EXISTS (SELECT 1 FROM ticket_sla c WHERE c.ticket_id = t.id) AS has_sla_clocks,
       (SELECT CAST(COALESCE(SUM(c.tickets), 0) AS BIGINT) FROM ticket_counts c
        WHERE c.company_id = :company AND c.mode = :mode AND c.status = :status) AS list_total
FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id
WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status
ORDER BY t.created_at DESC, t.id DESC LIMIT :limit OFFSET :offset;
