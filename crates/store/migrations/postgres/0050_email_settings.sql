-- The email channel, finished: whether a channel's customer replies reopen
-- RESOLVED tickets (on unless the channel turns it off), and where each
-- ticket was opened.
ALTER TABLE email_channels ADD COLUMN reopen_on_customer_reply BOOLEAN NOT NULL DEFAULT TRUE;

ALTER TABLE tickets ADD COLUMN channel TEXT NOT NULL DEFAULT 'api'
    CHECK (channel IN ('api', 'email', 'widget', 'chat'));
-- Tickets opened before: from a chat, or by an email (the message that
-- opened one is recorded without a comment).
UPDATE tickets SET channel = 'chat' WHERE chat_session_id IS NOT NULL;
UPDATE tickets SET channel = 'email' WHERE id IN (
    SELECT ticket_id FROM email_messages
    WHERE direction = 'in' AND comment_id IS NULL AND ticket_id IS NOT NULL);
