-- Attachments: the stored bytes once per company and SHA-256
-- (`attachment_objects`), and one row per upload (`attachments`) that names
-- them. An upload belongs to at most one record; the row goes with its
-- record (ON DELETE CASCADE) and the sweeper removes bytes no row names.

CREATE TABLE attachment_objects (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
    size        INTEGER NOT NULL CHECK (size > 0),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (company_id, sha256)
);

CREATE TABLE attachments (
    id            BLOB PRIMARY KEY,
    company_id    BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    filename      TEXT NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type  TEXT NOT NULL,
    size          INTEGER NOT NULL CHECK (size > 0),
    sha256        TEXT NOT NULL,
    -- A visitor's upload may only go on that chat session's messages.
    session_id    BLOB REFERENCES chat_sessions (id) ON DELETE CASCADE,
    ticket_id     BLOB REFERENCES tickets (id) ON DELETE CASCADE,
    comment_id    BLOB REFERENCES ticket_comments (id) ON DELETE CASCADE,
    message_id    BLOB REFERENCES chat_messages (id) ON DELETE CASCADE,
    created_at    TEXT NOT NULL,
    FOREIGN KEY (company_id, sha256) REFERENCES attachment_objects (company_id, sha256)
);
CREATE INDEX attachments_object ON attachments (company_id, sha256);
CREATE INDEX attachments_ticket ON attachments (ticket_id) WHERE ticket_id IS NOT NULL;
CREATE INDEX attachments_comment ON attachments (comment_id) WHERE comment_id IS NOT NULL;
CREATE INDEX attachments_message ON attachments (message_id) WHERE message_id IS NOT NULL;
-- The sweeper's scan for uploads never attached to anything.
CREATE INDEX attachments_unattached ON attachments (created_at)
    WHERE ticket_id IS NULL AND comment_id IS NULL AND message_id IS NULL;
