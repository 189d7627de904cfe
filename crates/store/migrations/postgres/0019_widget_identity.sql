-- Verified visitor identity for the widget. Each entity may hold a secret
-- with which its own backend signs visitor identity tokens (the previous
-- secret keeps verifying during a rotation's grace period), and says
-- whether anonymous widget sessions are allowed. Sessions remember who the
-- visitor is, whether the widget proved it, and whether the email given
-- may receive mail (double opt-in for unproven addresses).

ALTER TABLE entities ADD COLUMN widget_identity TEXT NOT NULL DEFAULT 'optional'
    CHECK (widget_identity IN ('optional', 'required'));
ALTER TABLE entities ADD COLUMN widget_secret TEXT;
ALTER TABLE entities ADD COLUMN widget_previous_secret TEXT;
ALTER TABLE entities ADD COLUMN widget_previous_secret_expires_at TIMESTAMPTZ;

ALTER TABLE chat_sessions ADD COLUMN visitor_external_id TEXT;
ALTER TABLE chat_sessions ADD COLUMN visitor_verified BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE chat_sessions ADD COLUMN email_verified BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE chat_sessions ADD COLUMN email_confirmation_hash TEXT;

-- A verified visitor's earlier sessions, newest first.
CREATE INDEX chat_sessions_visitor ON chat_sessions
    (company_id, mode, entity_id, visitor_external_id, created_at DESC, id DESC)
    WHERE visitor_external_id IS NOT NULL;
CREATE UNIQUE INDEX chat_sessions_email_confirmation ON chat_sessions (email_confirmation_hash)
    WHERE email_confirmation_hash IS NOT NULL;
