-- Visitor tokens carry their session's nonce and are refused once it has
-- changed: revoking a session's tokens increments it. Email continue links
-- carry the link epoch as well, which each exchange of a link increments,
-- so a link works once and retires every link mailed before it.
ALTER TABLE chat_sessions ADD COLUMN token_nonce INTEGER NOT NULL DEFAULT 0;
ALTER TABLE chat_sessions ADD COLUMN link_epoch INTEGER NOT NULL DEFAULT 0;
