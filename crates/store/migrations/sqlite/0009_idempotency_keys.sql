-- One row per idempotency key a tenant (company + mode) has used on a POST:
-- the request it names (method, path, SHA-256 of the body) and, once the
-- request is answered, the answer to replay. `state` moves running →
-- applied (set inside the transaction of the request's change) → completed
-- (the answer stored). `claim_token` names the request that holds the row;
-- `lease_until` is when another request may take over a row still running.
CREATE TABLE idempotency_keys (
    company_id             BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode                   TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    idempotency_key        TEXT NOT NULL,
    method                 TEXT NOT NULL,
    path                   TEXT NOT NULL,
    fingerprint            TEXT NOT NULL,
    state                  TEXT NOT NULL CHECK (state IN ('running', 'applied', 'completed')),
    claim_token            BLOB NOT NULL,
    lease_until            TEXT NOT NULL,
    response_status        INTEGER,
    response_content_type  TEXT,
    response_body          BLOB,
    created_at             TEXT NOT NULL,
    -- After this the key may be used again; the retention worker deletes
    -- rows past it.
    expires_at             TEXT NOT NULL,
    PRIMARY KEY (company_id, mode, idempotency_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
