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
    company_id        UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode              TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key               TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 40),
    label             TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 255),
    type              TEXT NOT NULL CHECK (type IN ('text', 'number', 'boolean', 'date',
                          'datetime', 'select', 'multiselect')),
    applies_to_ticket BOOLEAN NOT NULL,
    applies_to_chat   BOOLEAN NOT NULL,
    options           JSONB NOT NULL,
    required          BOOLEAN NOT NULL,
    visitor_writable  BOOLEAN NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (company_id, mode, key)
);

ALTER TABLE tickets ADD COLUMN custom_fields JSONB NOT NULL DEFAULT '{}';
ALTER TABLE chat_sessions ADD COLUMN custom_fields JSONB NOT NULL DEFAULT '{}';

CREATE TABLE ticket_field_values (
    ticket_id     UUID NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    company_id    UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key           TEXT NOT NULL,
    text_value    TEXT,
    number_value  DOUBLE PRECISION,
    CHECK ((text_value IS NULL) <> (number_value IS NULL))
);
-- The per-record probe of a filter, and rewriting a record's values.
CREATE INDEX ticket_field_values_record ON ticket_field_values (ticket_id, key, text_value);
-- A selective filter read from the value side; a definition's in-use checks.
CREATE INDEX ticket_field_values_text ON ticket_field_values (company_id, mode, key, text_value);
CREATE INDEX ticket_field_values_number ON ticket_field_values (company_id, mode, key, number_value);

CREATE TABLE chat_session_field_values (
    session_id    UUID NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    company_id    UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    key           TEXT NOT NULL,
    text_value    TEXT,
    number_value  DOUBLE PRECISION,
    CHECK ((text_value IS NULL) <> (number_value IS NULL))
);
CREATE INDEX chat_session_field_values_record
    ON chat_session_field_values (session_id, key, text_value);
CREATE INDEX chat_session_field_values_text
    ON chat_session_field_values (company_id, mode, key, text_value);
CREATE INDEX chat_session_field_values_number
    ON chat_session_field_values (company_id, mode, key, number_value);

-- The timeline records custom field changes (`custom_fields_changed`).
ALTER TABLE ticket_activities DROP CONSTRAINT ticket_activities_kind_check;
ALTER TABLE ticket_activities ADD CONSTRAINT ticket_activities_kind_check
    CHECK (kind IN ('created', 'status_changed', 'priority_changed', 'assignee_changed',
                    'escalated', 'commented', 'tags_changed', 'custom_fields_changed'));
