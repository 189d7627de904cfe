-- The email channel (issue 54): a desk address with its inbound source
-- and outbound identity, every Message-ID received or sent (threading and
-- de-duplication), each email ticket's reply token and copies, and the
-- addresses mail can no longer be delivered to.

CREATE TABLE email_channels (
    id            BLOB PRIMARY KEY,
    company_id    BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    -- Lower-cased: one channel per address of the tenant.
    address       TEXT NOT NULL CHECK (length(address) BETWEEN 3 AND 255),
    name          TEXT CHECK (length(name) <= 255),
    entity_id     BLOB NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    inbound_kind  TEXT NOT NULL
        CHECK (inbound_kind IN ('imap', 'postmark', 'mailgun', 'sendgrid', 'ses')),
    -- The inbound settings that are not secret (IMAP host, port, folder...).
    inbound       TEXT NOT NULL DEFAULT '{}',
    -- Sealed (infra `sealed`): the IMAP password, the webhook secret or
    -- the Mailgun signing key.
    inbound_secret TEXT,
    -- The SMTP identity that is not secret (host, port, tls, username).
    smtp          TEXT,
    smtp_password TEXT,
    dkim_selector TEXT,
    dkim_key      TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (company_id, mode, address)
);

-- Every Message-ID the tenant received or sent, once: a message seen again
-- is a duplicate, and a reply's In-Reply-To/References find their ticket.
CREATE TABLE email_messages (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL,
    message_id  TEXT NOT NULL CHECK (length(message_id) <= 998),
    channel_id  BLOB REFERENCES email_channels (id) ON DELETE SET NULL,
    ticket_id   BLOB REFERENCES tickets (id) ON DELETE CASCADE,
    comment_id  BLOB,
    direction   TEXT NOT NULL CHECK (direction IN ('in', 'out', 'ignored')),
    -- The sender, lower-cased (rate limits count by it).
    sender      TEXT,
    -- The message's HTML, sanitised for display (received messages).
    html        TEXT,
    -- The start of its new text: what a reply quotes.
    excerpt     TEXT,
    -- The headers a comment shows: {messageId, from, to[], cc[]}.
    envelope    TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL,
    PRIMARY KEY (company_id, mode, message_id)
);
CREATE INDEX email_messages_of_ticket ON email_messages (ticket_id, created_at);
CREATE INDEX email_messages_of_comment ON email_messages (comment_id);
CREATE INDEX email_messages_by_sender ON email_messages (company_id, mode, sender, created_at);
CREATE INDEX email_messages_by_channel ON email_messages (channel_id, created_at);

-- A ticket that talks by email: its reply token (the `+token` of the
-- address replies go to), the channel and the copied addresses.
CREATE TABLE email_tickets (
    ticket_id   BLOB PRIMARY KEY REFERENCES tickets (id) ON DELETE CASCADE,
    company_id  BLOB NOT NULL,
    mode        TEXT NOT NULL,
    channel_id  BLOB REFERENCES email_channels (id) ON DELETE SET NULL,
    reply_token TEXT NOT NULL UNIQUE,
    cc          TEXT NOT NULL DEFAULT '[]'
);

-- Addresses that bounced: never mailed again.
CREATE TABLE email_undeliverable (
    company_id  BLOB NOT NULL,
    mode        TEXT NOT NULL,
    address     TEXT NOT NULL,
    reason      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (company_id, mode, address)
);
