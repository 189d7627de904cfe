-- The email channel's case grouping: a new message from a contact whose
-- open ticket changed within the channel's window opens its ticket with a
-- suggestion to merge it into that one, a link of its own kind
-- (`suggested_merge_into`, stored from the new ticket) that the merge removes.
ALTER TABLE email_channels ADD COLUMN case_grouping_hours INTEGER NOT NULL DEFAULT 72;

-- SQLite cannot change a CHECK, so the links are rebuilt with every column
-- and index of 0043.
CREATE TABLE ticket_links_0054 (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    from_id     BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    to_id       BLOB NOT NULL REFERENCES tickets (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('related', 'duplicate_of', 'parent_of',
                    'merged_into', 'split_from', 'suggested_merge_into')),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (from_id, to_id, kind),
    CHECK (from_id <> to_id)
);
INSERT INTO ticket_links_0054 (company_id, mode, from_id, to_id, kind, created_at)
SELECT company_id, mode, from_id, to_id, kind, created_at FROM ticket_links;
DROP TABLE ticket_links;
ALTER TABLE ticket_links_0054 RENAME TO ticket_links;
CREATE INDEX ticket_links_to ON ticket_links (to_id);
