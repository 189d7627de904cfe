-- Each agent's open chats (ACTIVE sessions assigned to them) and when they
-- were last given one, kept by triggers on chat_sessions in the transaction
-- that changes a session's status or assignee (every path, including cascaded
-- deletes), so routing's claim reads one row per member instead of counting
-- every member's sessions, and takes capacity by locking one row.
CREATE TABLE agent_loads (
    user_id           UUID PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    open_chats        BIGINT NOT NULL DEFAULT 0,
    last_assigned_at  TIMESTAMPTZ
);

INSERT INTO agent_loads (user_id, open_chats, last_assigned_at)
SELECT assignee_id, COUNT(*) FILTER (WHERE status = 'ACTIVE'), MAX(assigned_at)
FROM chat_sessions WHERE assignee_id IS NOT NULL
GROUP BY assignee_id;

CREATE FUNCTION agent_load_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'ACTIVE' AND OLD.assignee_id IS NOT NULL THEN
        UPDATE agent_loads SET open_chats = open_chats - 1 WHERE user_id = OLD.assignee_id;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION agent_load_take() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status = 'ACTIVE' AND NEW.assignee_id IS NOT NULL THEN
        INSERT INTO agent_loads (user_id, open_chats, last_assigned_at)
        VALUES (NEW.assignee_id, 1, NEW.assigned_at)
        ON CONFLICT (user_id) DO UPDATE SET open_chats = agent_loads.open_chats + 1,
            last_assigned_at = GREATEST(agent_loads.last_assigned_at, EXCLUDED.last_assigned_at);
    END IF;
    RETURN NULL;
END $$;

-- A reassignment touches two agents' rows: both are locked first in id
-- order, so two opposite reassignments cannot deadlock.
CREATE FUNCTION agent_load_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM agent_loads WHERE user_id IN (OLD.assignee_id, NEW.assignee_id)
        ORDER BY user_id FOR NO KEY UPDATE;
    IF OLD.status = 'ACTIVE' AND OLD.assignee_id IS NOT NULL THEN
        UPDATE agent_loads SET open_chats = open_chats - 1 WHERE user_id = OLD.assignee_id;
    END IF;
    IF NEW.status = 'ACTIVE' AND NEW.assignee_id IS NOT NULL THEN
        INSERT INTO agent_loads (user_id, open_chats, last_assigned_at)
        VALUES (NEW.assignee_id, 1, NEW.assigned_at)
        ON CONFLICT (user_id) DO UPDATE SET open_chats = agent_loads.open_chats + 1,
            last_assigned_at = GREATEST(agent_loads.last_assigned_at, EXCLUDED.last_assigned_at);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER chat_sessions_load_insert AFTER INSERT ON chat_sessions
    FOR EACH ROW EXECUTE FUNCTION agent_load_take();
CREATE TRIGGER chat_sessions_load_delete AFTER DELETE ON chat_sessions
    FOR EACH ROW EXECUTE FUNCTION agent_load_release();
CREATE TRIGGER chat_sessions_load_update AFTER UPDATE OF status, assignee_id ON chat_sessions
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
        OR OLD.assignee_id IS DISTINCT FROM NEW.assignee_id)
    EXECUTE FUNCTION agent_load_move();
