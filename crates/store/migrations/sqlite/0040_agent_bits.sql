-- The agent who handled a rated chat or ticket: its assignee when the
-- visitor first rated it (kept when the rating changes).
ALTER TABLE ratings ADD COLUMN agent_id BLOB REFERENCES users (id) ON DELETE SET NULL;

-- A personal key belongs to the agent who minted it and dies with them
-- (null: a company key, as before).
ALTER TABLE api_keys ADD COLUMN user_id BLOB REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX api_keys_user ON api_keys (user_id) WHERE user_id IS NOT NULL;
