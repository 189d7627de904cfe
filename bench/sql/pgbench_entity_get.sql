-- Baseline of scenario 3 (the database's share): the one query
-- GET /api/v1/entities/{id} runs (src/entities/store.rs `find_in`): the
-- entity's columns and, in the same SELECT, its default team in the key's
-- mode. Variables: company, entity, mode.
SELECT id, company_id, parent_id, name, widget_key_test, widget_key_live,
       widget_identity, csat, widget_secret IS NOT NULL AS widget_secret_set,
       created_at, updated_at,
       (SELECT d.team_id FROM entity_default_teams d JOIN teams t ON t.id = d.team_id
        WHERE d.entity_id = entities.id AND d.mode = :mode
        AND t.company_id = entities.company_id) AS default_team_id
FROM entities WHERE id = :entity AND company_id = :company;
