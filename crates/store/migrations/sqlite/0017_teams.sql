-- Teams and their routing: who is in a team, which entities it serves, the
-- default team of an entity's new chats (per mode, as teams are), and the
-- team and assignee of chat sessions and tickets. A chat session of a team
-- with no assignee is queued: the queue is those rows in arrival order, so
-- it needs no table of its own and cannot disagree with the sessions.

CREATE TABLE teams (
    id               BLOB PRIMARY KEY,
    company_id       BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode             TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name             TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    routing_mode     TEXT NOT NULL DEFAULT 'manual'
                     CHECK (routing_mode IN ('manual', 'round_robin', 'least_busy')),
    chat_capacity    INTEGER NOT NULL DEFAULT 3 CHECK (chat_capacity BETWEEN 0 AND 1000),
    ticket_capacity  INTEGER NOT NULL DEFAULT 20 CHECK (ticket_capacity BETWEEN 0 AND 100000),
    include_tickets  INTEGER NOT NULL DEFAULT 0,
    -- round_robin: the member who got the last assignment; the next one
    -- follows in member id order (a row, so the rotation survives restarts).
    last_assigned_id BLOB,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX teams_tenant ON teams (company_id, mode, created_at DESC, id DESC);

CREATE TABLE team_members (
    team_id  BLOB NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id  BLOB NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE team_entities (
    team_id    BLOB NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    entity_id  BLOB NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, entity_id)
);

CREATE TABLE entity_default_teams (
    entity_id  BLOB NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    mode       TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    team_id    BLOB NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, mode)
);

ALTER TABLE chat_sessions ADD COLUMN team_id BLOB REFERENCES teams (id) ON DELETE SET NULL;
ALTER TABLE chat_sessions ADD COLUMN assignee_id BLOB REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE chat_sessions ADD COLUMN assigned_at TEXT;
-- Who decided the assignee: routing's own choices may be requeued when the
-- agent goes offline, a person's choice never is.
ALTER TABLE chat_sessions ADD COLUMN assignment_reason TEXT
    CHECK (assignment_reason IN ('routing', 'manual', 'requeue'));
-- The queue (unassigned, active, in arrival order) and an agent's load.
CREATE INDEX chat_sessions_team_queue ON chat_sessions (team_id, created_at, id)
    WHERE status = 'ACTIVE' AND assignee_id IS NULL;
CREATE INDEX chat_sessions_assignee ON chat_sessions (assignee_id) WHERE status = 'ACTIVE';

ALTER TABLE tickets ADD COLUMN team_id BLOB REFERENCES teams (id) ON DELETE SET NULL;
CREATE INDEX tickets_team ON tickets (team_id, created_at) WHERE team_id IS NOT NULL;

-- Agents whose presence ended, and since when: after the grace period their
-- unanswered routed chats go back to the queue. A heartbeat deletes the row.
CREATE TABLE agents_away (
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    user_id     BLOB NOT NULL,
    since       TEXT NOT NULL,
    PRIMARY KEY (company_id, mode, user_id)
);
