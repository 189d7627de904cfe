-- Access: the keys API lists a tenant's keys (company and mode), newest first.
CREATE INDEX api_keys_tenant ON api_keys (company_id, mode, created_at DESC, id DESC);
