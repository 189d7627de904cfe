-- The quotas on visitors' unattached uploads sum, per company and per chat
-- session, the sizes of uploads no record names yet.
CREATE INDEX attachments_visitor_unattached ON attachments (company_id, session_id, size)
    WHERE session_id IS NOT NULL AND ticket_id IS NULL AND comment_id IS NULL
    AND message_id IS NULL;
