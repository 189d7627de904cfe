-- The retention pass finds chats closed before its cutoff, and deleting a
-- chat session deletes its visitor's uploads by their session.
CREATE INDEX chat_sessions_closed ON chat_sessions (closed_at) WHERE status = 'CLOSED';
CREATE INDEX attachments_session ON attachments (session_id) WHERE session_id IS NOT NULL;
