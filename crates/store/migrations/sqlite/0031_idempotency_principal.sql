-- Who sent the request a key names (an API key, a visitor's chat session,
-- a rating link, or for a chat start the client's address): its answer is
-- replayed to that sender only. Rows written before this column have none
-- (''), which matches no sender: their repeats are refused, never replayed.
ALTER TABLE idempotency_keys ADD COLUMN principal TEXT NOT NULL DEFAULT '';
