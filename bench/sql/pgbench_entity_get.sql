-- Baseline of scenario 3 (the database's share): the one query
-- GET /api/v1/entities/{id} runs (src/entities/store.rs `find`).
-- Variables: company, entity.
SELECT id, company_id, parent_id, name, widget_key_test, widget_key_live, created_at, updated_at
FROM entities WHERE id = :entity AND company_id = :company;
