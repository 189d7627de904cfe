-- The email channel's case grouping: a new message from a contact whose
-- open ticket changed within the channel's window opens its ticket with a
-- suggestion to merge it into that one, a link of its own kind
-- (`suggested_merge_into`, stored from the new ticket) that the merge removes.
ALTER TABLE email_channels ADD COLUMN case_grouping_hours BIGINT NOT NULL DEFAULT 72;

ALTER TABLE ticket_links DROP CONSTRAINT ticket_links_kind_check;
ALTER TABLE ticket_links ADD CONSTRAINT ticket_links_kind_check CHECK (kind IN ('related',
    'duplicate_of', 'parent_of', 'merged_into', 'split_from', 'suggested_merge_into'));
