-- Typed custom fields on tickets and chat sessions.
--
-- Definitions are per company and mode, keyed by their immutable `key`.
--
-- Values live twice, written in the same transaction:
-- - `custom_fields` on the record (an object keyed by field key) is what
--   every read returns: a list page reads its rows and nothing else, and the
--   JSON round-trips each value exactly as it was validated.
-- - `ticket_field_values` / `chat_session_field_values` hold one row per
--   value (one per option of a multiselect), typed into `text_value` (text,
--   boolean, date, datetime in fixed-width UTC, select options) or
--   `number_value`, so the list filters are index probes that compare
--   numbers as numbers and dates as fixed-width text, the same on both
--   backends (no JSON path expressions, which the two dialects spell
--   differently and index differently).

CREATE TABLE custom_field_definitions (
    company_id        BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode              TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key               TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 40),
    label             TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
    type              TEXT NOT NULL CHECK (type IN ('text', 'number', 'boolean', 'date',
                          'datetime', 'select', 'multiselect')),
    applies_to_ticket BOOLEAN NOT NULL,
    applies_to_chat   BOOLEAN NOT NULL,
    options           TEXT NOT NULL,
    required          BOOLEAN NOT NULL,
    visitor_writable  BOOLEAN NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    PRIMARY KEY (company_id, mode, key)
);

ALTER TABLE tickets ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';
ALTER TABLE chat_sessions ADD COLUMN custom_fields TEXT NOT NULL DEFAULT '{}';

CREATE TABLE ticket_field_values (
    ticket_id     BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    company_id    BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key           TEXT NOT NULL,
    text_value    TEXT,
    number_value  REAL,
    CHECK ((text_value IS NULL) <> (number_value IS NULL))
);
-- The per-record probe of a filter, and rewriting a record's values.
CREATE INDEX ticket_field_values_record ON ticket_field_values (ticket_id, key, text_value);
-- A selective filter read from the value side; a definition's in-use checks.
CREATE INDEX ticket_field_values_text ON ticket_field_values (company_id, mode, key, text_value);
CREATE INDEX ticket_field_values_number ON ticket_field_values (company_id, mode, key, number_value);

CREATE TABLE chat_session_field_values (
    session_id    BLOB NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    company_id    BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key           TEXT NOT NULL,
    text_value    TEXT,
    number_value  REAL,
    CHECK ((text_value IS NULL) <> (number_value IS NULL))
);
CREATE INDEX chat_session_field_values_record
    ON chat_session_field_values (session_id, key, text_value);
CREATE INDEX chat_session_field_values_text
    ON chat_session_field_values (company_id, mode, key, text_value);
CREATE INDEX chat_session_field_values_number
    ON chat_session_field_values (company_id, mode, key, number_value);

-- The timeline records custom field changes (`custom_fields_changed`).
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt.
CREATE TABLE ticket_activities_new (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    ticket_id   BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('created', 'status_changed', 'priority_changed',
                    'assignee_changed', 'escalated', 'commented', 'tags_changed',
                    'custom_fields_changed')),
    from_value  TEXT,
    to_value    TEXT,
    details     TEXT,
    created_at  TEXT NOT NULL
);
INSERT INTO ticket_activities_new (id, company_id, mode, ticket_id, kind, from_value, to_value,
    details, created_at)
    SELECT id, company_id, mode, ticket_id, kind, from_value, to_value, details, created_at
    FROM ticket_activities;
DROP TABLE ticket_activities;
ALTER TABLE ticket_activities_new RENAME TO ticket_activities;
CREATE INDEX ticket_activities_ticket ON ticket_activities (ticket_id, created_at, id);
CREATE INDEX ticket_activities_escalated ON ticket_activities (company_id, mode, created_at)
    WHERE kind = 'escalated';
