-- Links between tickets, snoozing and merging.
--
-- A snoozed ticket wakes at `snoozed_until`: the wake pass reads the partial
-- index of the due times, so it costs nothing while no ticket is snoozed.
-- `merged_into` names the ticket a merged one now lives on.
ALTER TABLE tickets ADD COLUMN snoozed_until TEXT;
ALTER TABLE tickets ADD COLUMN merged_into BLOB REFERENCES tickets (id) ON DELETE SET NULL;
CREATE INDEX tickets_snoozed_due ON tickets (snoozed_until) WHERE snoozed_until IS NOT NULL;

-- One row per link, stored once: `related` from the smaller id, `parent_of`
-- from the parent, `duplicate_of` from the duplicate, `merged_into` from the
-- merged ticket, `split_from` from the new ticket. Each side reads it with
-- its own kind (the other side the inverse).
CREATE TABLE ticket_links (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    from_id     BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    to_id       BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('related', 'duplicate_of', 'parent_of',
                    'merged_into', 'split_from')),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (from_id, to_id, kind),
    CHECK (from_id <> to_id)
);
CREATE INDEX ticket_links_to ON ticket_links (to_id);

-- What a merge moved, so that an undo within its window puts it back.
CREATE TABLE ticket_merges (
    id                  BLOB PRIMARY KEY,
    company_id          BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode                TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    source_id           BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    target_id           BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    source_status       TEXT NOT NULL,
    source_resolved_at  TEXT,
    comment_ids         TEXT NOT NULL,
    attachment_ids      TEXT NOT NULL,
    tags_added          TEXT NOT NULL,
    merged_at           TEXT NOT NULL,
    undone_at           TEXT
);
CREATE INDEX ticket_merges_source ON ticket_merges (source_id, merged_at DESC);

INSERT INTO ticket_activity_kinds (kind) VALUES
    ('linked'), ('unlinked'), ('snoozed'), ('unsnoozed'), ('merged'), ('merge_undone'),
    ('split');
