-- Baseline of scenario 9: what GET /tickets?tag=billing&cf.plan=pro&status=OPEN&limit=20
-- runs, each statement on its own (no transaction), with the same parameters bound:
-- the company's custom field definitions (a `cf.` filter is typed by its
-- definition: src/custom_fields/routes `definitions_for_filters`), the page
-- with the assignee and one row more than the page (src/tickets/store
-- `list_query`; the tag and the field are EXISTS probes, tags before fields),
-- the total counted up to the cap of 10,000 (`count`, `capped_count`: no
-- counter follows tags), and the tags of the page's rows (src/tags/store
-- `of_each`, the 21 ids the page query read). Auth and rate limit need no
-- SQL (key cache, limiter).
-- Variables: company, mode, status, tag, cf_key, cf_value, page_id_1 … page_id_21.
\set limit 21
\set offset 0
\set cap 10001
SELECT key, label, type, applies_to_ticket, applies_to_chat, options, required, visitor_writable,
       created_at, updated_at
FROM custom_field_definitions WHERE company_id = :company AND mode = :mode;
SELECT t.id, t.ticket_number, t.subject, t.description, t.status, t.priority, t.entity_id,
       t.visitor_email, t.assigned_to_id, u.name AS assignee_name, u.email AS assignee_email,
       t.custom_fields, t.resolved_at, t.created_at, t.updated_at
FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id
WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status
  AND EXISTS (SELECT 1 FROM ticket_tags x WHERE x.ticket_id = t.id AND x.tag = :tag)
  AND EXISTS (SELECT 1 FROM ticket_field_values v WHERE v.ticket_id = t.id AND v.key = :cf_key
              AND v.text_value = :cf_value)
ORDER BY t.created_at DESC, t.id DESC LIMIT :limit OFFSET :offset;
SELECT COUNT(*) FROM (SELECT 1 FROM tickets t
WHERE t.company_id = :company AND t.mode = :mode AND t.status = :status
  AND EXISTS (SELECT 1 FROM ticket_tags x WHERE x.ticket_id = t.id AND x.tag = :tag)
  AND EXISTS (SELECT 1 FROM ticket_field_values v WHERE v.ticket_id = t.id AND v.key = :cf_key
              AND v.text_value = :cf_value)
LIMIT :cap) capped;
SELECT ticket_id, tag FROM ticket_tags
WHERE ticket_id IN (:page_id_1, :page_id_2, :page_id_3, :page_id_4, :page_id_5, :page_id_6,
                    :page_id_7, :page_id_8, :page_id_9, :page_id_10, :page_id_11, :page_id_12,
                    :page_id_13, :page_id_14, :page_id_15, :page_id_16, :page_id_17,
                    :page_id_18, :page_id_19, :page_id_20, :page_id_21);
