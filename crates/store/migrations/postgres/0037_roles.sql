-- Roles (issue 50): a company's custom roles (named sets of scopes; the
-- built-in owner, admin, agent and viewer are not rows, their scopes are
-- fixed by the build), and the role each user holds, with whether the user
-- is active.

CREATE TABLE roles (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    -- Scope names separated by spaces, as api_keys.scopes.
    scopes      TEXT NOT NULL,
    teams_only  BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
-- Names are unique per company whatever their case; lists go in this order.
CREATE UNIQUE INDEX roles_name ON roles (company_id, lower(name));

-- A user holds a built-in role (role_name) or a custom one (role_id), never
-- both. A custom role is held by id: renaming it keeps its holders, and the
-- reference (NO ACTION) refuses to delete a role someone holds. The default
-- is for rows an older node inserts during a rolling deploy.
ALTER TABLE users ADD COLUMN role_name TEXT DEFAULT 'agent'
    CHECK (role_name IN ('owner', 'admin', 'agent', 'viewer'));
UPDATE users SET role_name = CASE role WHEN 'ADMIN' THEN 'admin' ELSE 'agent' END;
ALTER TABLE users ADD COLUMN role_id UUID REFERENCES roles (id);
ALTER TABLE users ADD CONSTRAINT users_one_role CHECK ((role_name IS NULL) <> (role_id IS NULL));
CREATE INDEX users_role ON users (role_id) WHERE role_id IS NOT NULL;
ALTER TABLE users ADD COLUMN is_active BOOLEAN NOT NULL DEFAULT TRUE;
