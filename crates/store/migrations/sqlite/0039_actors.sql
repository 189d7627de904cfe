-- Who made each change: `{"type", "id", "name"}` as the API shows it.
-- Null on rows written before changes named their actor (the API shows
-- null there: who made them was not recorded).
ALTER TABLE events ADD COLUMN actor TEXT;
ALTER TABLE ticket_activities ADD COLUMN actor TEXT;
