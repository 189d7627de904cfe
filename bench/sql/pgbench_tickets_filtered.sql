-- Baseline of scenario 9: the two statements
-- GET /tickets?tag=billing&cf.plan=pro&status=OPEN&limit=20 runs, each on
-- its own (no transaction), with the same parameters bound: the total
-- counted up to the cap of 10,000 (src/tickets/store `count`: no counter
-- follows tags), then the page (`list_query`: the tag and the field are
-- EXISTS probes, tags before fields; each row's tags and whether it has
-- attachments or SLA clocks in the same statement). The `cf.` filter is
-- typed by the company's field definitions, which the service reads from a
-- per-node snapshot rather than per request; auth and rate limit need no
-- SQL (key cache, limiter).
-- Variables: company, mode, status, tag, cf_key, cf_value.
\set limit 21
\set offset 0
\set cap 10001
SELECT COUNT(*) FROM (SELECT 1 FROM tickets t
WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status
  AND EXISTS (SELECT 1 FROM ticket_tags x WHERE x.ticket_id = t.id AND x.tag = :tag)
  AND EXISTS (SELECT 1 FROM ticket_field_values v WHERE v.ticket_id = t.id AND v.key = :cf_key
              AND v.text_value = :cf_value)
LIMIT :cap) capped;
SELECT t.id, t.ticket_number, t.subject, t.description, t.status, t.priority, t.entity_id,
       t.visitor_email, t.chat_session_id, t.visitor_external_id, t.visitor_name,
       t.visitor_verified, t.assigned_to_id, u.name AS assignee_name, u.email AS assignee_email,
       t.team_id, t.custom_fields, t.resolved_at, t.created_at, t.updated_at, t.sla_policy_id,
       (SELECT string_agg(g.tag, ' ') FROM ticket_tags g WHERE g.ticket_id = t.id) AS tag_list,
       EXISTS (SELECT 1 FROM attachments a WHERE a.ticket_id = t.id AND a.comment_id IS NULL)
         AS has_attachments,
       EXISTS (SELECT 1 FROM ticket_sla c WHERE c.ticket_id = t.id) AS has_sla_clocks
FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id
WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status
  AND EXISTS (SELECT 1 FROM ticket_tags x WHERE x.ticket_id = t.id AND x.tag = :tag)
  AND EXISTS (SELECT 1 FROM ticket_field_values v WHERE v.ticket_id = t.id AND v.key = :cf_key
              AND v.text_value = :cf_value)
ORDER BY t.created_at DESC, t.id DESC LIMIT :limit OFFSET :offset;
