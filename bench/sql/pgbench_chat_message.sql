-- Baseline of scenario 6: the transaction POST /chat/sessions/:id/messages
-- runs for a visitor message (src/chat/store.rs `create_message`), run by
-- pgbench at the same rate as the service's run (--rate), so its p99 shows
-- what the database's commit alone costs on this machine.
-- Variables: company, mode, session.
BEGIN;
UPDATE chat_sessions SET updated_at = now() WHERE id = :session AND company_id = :company AND mode = :mode
RETURNING id, entity_id, status, visitor_name, visitor_email, created_at, updated_at, closed_at;
INSERT INTO chat_messages (id, session_id, company_id, mode, body, sender_type, sender_id, created_at)
VALUES (bench_uuid7(), :session, :company, :mode,
        'bench-00000000-Hello, I need help with my order: the tracking page shows no update since Monday.',
        'visitor', NULL, now());
END;
