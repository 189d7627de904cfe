-- Duplicate-free chat sends, and the indexes the retention pass deletes by.

-- The sender's own id for a message: a resend with the same id in the same
-- session is the same message. NULLs never collide, so messages sent
-- without one are unaffected.
ALTER TABLE chat_messages ADD COLUMN client_message_id TEXT;
CREATE UNIQUE INDEX chat_messages_client_id ON chat_messages (session_id, client_message_id);

-- The retention pass deletes finished rows oldest first, in small batches.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';
CREATE INDEX outbox_jobs_finished ON outbox_jobs (updated_at) WHERE status <> 'pending';
CREATE INDEX events_created ON events (created_at);
