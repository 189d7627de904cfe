-- Baseline of scenario 6: the transaction POST /chat/sessions/:id/messages
-- runs for a visitor message (src/chat/store/send.rs `create_message`), each
-- statement a round trip as in the service, run by pgbench at the same rate
-- as the service's run (--rate), so its p99 shows what the database's
-- commit alone costs on this machine: the session touched and read back,
-- its tags, the message (idempotent on a client message id; none given),
-- the message's attachments (none: the probe of an id without any, which is
-- the same index lookup), and the two change-feed events with their records.
-- Variables: company, mode, session.
BEGIN;
UPDATE chat_sessions SET updated_at = now() WHERE id = :session AND company_id = :company AND mode = :mode
RETURNING id, entity_id, status, visitor_name, visitor_email, created_at, updated_at, closed_at,
          custom_fields, team_id, assignee_id, assigned_at, visitor_external_id, visitor_verified,
          email_verified;
SELECT tag FROM chat_session_tags WHERE session_id = :session;
INSERT INTO chat_messages (id, session_id, company_id, mode, body, sender_type, sender_id,
                           client_message_id, created_at)
VALUES (bench_uuid7(), :session, :company, :mode,
        'bench-00000000-Hello, I need help with my order: the tracking page shows no update since Monday.',
        'visitor', NULL, NULL, now())
ON CONFLICT (session_id, client_message_id) DO NOTHING;
SELECT message_id AS owner, id, filename, content_type, size FROM attachments
WHERE message_id IN (:session) ORDER BY created_at, id;
INSERT INTO events (id, company_id, mode, name, data, created_at, record_type, record_id, op, record, seq)
VALUES (bench_uuid7(), :company, :mode, 'chat_session.upsert',
        jsonb_build_object('id', :session::text), now(), 'chat_session', :session, 'upsert',
        jsonb_build_object('id', :session::text, 'tags', '[]'::jsonb, 'status', 'ACTIVE',
          'teamId', NULL, 'visitor', jsonb_build_object('name', 'Bench visitor', 'email', NULL,
            'verified', false, 'externalId', NULL),
          'closedAt', NULL, 'entityId', '00000000-0000-0000-0000-000000000000',
          'createdAt', now(), 'updatedAt', now(), 'assignedAt', NULL, 'assigneeId', NULL,
          'visitorName', 'Bench visitor', 'customFields', '{}'::jsonb, 'visitorEmail', NULL,
          'emailVerified', true),
        NULL);
INSERT INTO events (id, company_id, mode, name, data, created_at, record_type, record_id, op, record, seq)
VALUES (bench_uuid7(), :company, :mode, 'chat_message.upsert',
        jsonb_build_object('id', :session::text), now(), 'chat_message', bench_uuid7(), 'upsert',
        jsonb_build_object('id', :session::text,
          'body', 'bench-00000000-Hello, I need help with my order: the tracking page shows no update since Monday.',
          'senderId', NULL, 'createdAt', now(), 'sessionId', :session::text,
          'senderType', 'visitor', 'attachments', '[]'::jsonb),
        NULL);
END;
