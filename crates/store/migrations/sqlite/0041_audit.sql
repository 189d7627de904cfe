-- The audit log (issue 51): who did what to a company's security and admin
-- records, written in the transaction of the change it records. An entry
-- is written unsealed (seq, hash and prev_hash NULL); the sealer gives the
-- company's committed entries the next numbers of its hash chain after
-- they commit, so sealing never holds up a company's writes.

CREATE TABLE audit_entries (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    actor_type  TEXT NOT NULL
        CHECK (actor_type IN ('agent', 'key', 'visitor', 'system', 'automation', 'ai')),
    actor_id    BLOB,
    actor_name  TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN (
        'api_key.created', 'api_key.updated', 'api_key.revoked', 'user.created',
        'user.invited', 'user.updated', 'user.deactivated', 'role.created',
        'role.updated', 'role.deleted', 'auth.signed_in', 'auth.sign_in_failed',
        'totp.enabled', 'totp.disabled', 'session.ended', 'settings.updated',
        'webhook.created', 'webhook.updated', 'webhook.deleted',
        'webhook.secret_rotated', 'company.suspended', 'company.reactivated',
        'team.created', 'team.updated', 'team.deleted', 'ticket.deleted'
    )),
    target_type TEXT NOT NULL
        CHECK (target_type IN (
            'api_key', 'user', 'role', 'session', 'settings', 'webhook', 'company', 'team',
            'ticket'
        )),
    target_id   BLOB,
    -- JSON text, hashed as it is stored: {"before": {…}, "after": {…}}
    -- and, when a secret changed, {"secret": "rotated"} and the like.
    changes     TEXT NOT NULL,
    request_id  TEXT,
    ip          TEXT,
    user_agent  TEXT,
    seq         BIGINT,
    hash        TEXT,
    prev_hash   TEXT
);
-- The list, newest first, and the chain in order.
CREATE INDEX audit_entries_list ON audit_entries (company_id, created_at, id);
CREATE UNIQUE INDEX audit_entries_chain ON audit_entries (company_id, seq) WHERE seq IS NOT NULL;
-- What the sealer has still to seal (a probe per pass).
CREATE INDEX audit_entries_unsealed ON audit_entries (company_id, created_at, id) WHERE seq IS NULL;

-- Each company's chain: its head (the last sealed entry) and its start
-- (where the retention pass left it: the first entry kept and the hash
-- before it, the checkpoint the rest verifies from). The sealer locks the
-- row, so two nodes take turns and make one chain.
CREATE TABLE audit_chains (
    company_id  BLOB PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    head_seq    BIGINT NOT NULL,
    head_hash   TEXT NOT NULL,
    start_seq   BIGINT NOT NULL,
    start_hash  TEXT NOT NULL,
    pruned_at   TEXT
);
