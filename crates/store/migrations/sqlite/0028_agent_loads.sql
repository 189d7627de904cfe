-- Each agent's open chats (ACTIVE sessions assigned to them) and when they
-- were last given one, kept by triggers on chat_sessions in the transaction
-- that changes a session's status or assignee (every path, including cascaded
-- deletes), so routing's claim reads one row per member instead of counting
-- every member's sessions.
CREATE TABLE agent_loads (
    user_id           BLOB PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    open_chats        INTEGER NOT NULL DEFAULT 0,
    last_assigned_at  TEXT
);

INSERT INTO agent_loads (user_id, open_chats, last_assigned_at)
SELECT assignee_id, SUM(CASE WHEN status = 'ACTIVE' THEN 1 ELSE 0 END), MAX(assigned_at)
FROM chat_sessions WHERE assignee_id IS NOT NULL
GROUP BY assignee_id;

CREATE TRIGGER chat_sessions_load_insert AFTER INSERT ON chat_sessions
    WHEN new.status = 'ACTIVE' AND new.assignee_id IS NOT NULL
BEGIN
    INSERT INTO agent_loads (user_id, open_chats, last_assigned_at)
    VALUES (new.assignee_id, 1, new.assigned_at)
    ON CONFLICT (user_id) DO UPDATE SET open_chats = open_chats + 1,
        last_assigned_at = max(coalesce(last_assigned_at, excluded.last_assigned_at),
            coalesce(excluded.last_assigned_at, last_assigned_at));
END;

CREATE TRIGGER chat_sessions_load_delete AFTER DELETE ON chat_sessions
    WHEN old.status = 'ACTIVE' AND old.assignee_id IS NOT NULL
BEGIN
    UPDATE agent_loads SET open_chats = open_chats - 1 WHERE user_id = old.assignee_id;
END;

CREATE TRIGGER chat_sessions_load_update AFTER UPDATE OF status, assignee_id ON chat_sessions
    WHEN old.status IS NOT new.status OR old.assignee_id IS NOT new.assignee_id
BEGIN
    UPDATE agent_loads SET open_chats = open_chats - 1
    WHERE user_id = old.assignee_id AND old.status = 'ACTIVE';
    INSERT INTO agent_loads (user_id, open_chats, last_assigned_at)
    SELECT new.assignee_id, 1, new.assigned_at
    WHERE new.status = 'ACTIVE' AND new.assignee_id IS NOT NULL
    ON CONFLICT (user_id) DO UPDATE SET open_chats = open_chats + 1,
        last_assigned_at = max(coalesce(last_assigned_at, excluded.last_assigned_at),
            coalesce(excluded.last_assigned_at, last_assigned_at));
END;
