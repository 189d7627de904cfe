-- Baseline of scenario 4: the two statements GET /kb/search?entityId=…
-- runs on Postgres, each on its own: the check that the entity is the
-- company's (src/db/reference.rs), then the search (src/kb/store/search.rs
-- `search_query`): words through websearch_to_tsquery AND
-- the last word as a prefix, ts_rank, the top 10, then the category and a
-- ts_headline snippet for those 10. The query text rotates over the same
-- terms as the service's run ({{WORDS}} / {{PREFIXES}} are filled in by
-- sdbench from its term list, the i-th element is one query).
-- Variables: company, entity, mode, terms (how many).
\set i random(1, :terms)
\set limit 10
SELECT id FROM entities WHERE id = :entity AND company_id = :company;
WITH hits AS (
  SELECT a.id, a.created_at,
         ts_rank('{0.1, 0.2, 0.4, 1.0}', a.search_vector,
                 (websearch_to_tsquery('english', (ARRAY[{{WORDS}}])[:i])
                  && to_tsquery('english', (ARRAY[{{PREFIXES}}])[:i]))) AS score
  FROM kb_articles a
  WHERE a.company_id = :company AND a.mode = :mode AND a.is_published = TRUE AND a.entity_id = :entity
    AND a.search_vector @@ (websearch_to_tsquery('english', (ARRAY[{{WORDS}}])[:i])
                            && to_tsquery('english', (ARRAY[{{PREFIXES}}])[:i]))
  ORDER BY score DESC, a.created_at DESC, a.id DESC LIMIT :limit)
SELECT a.id, a.title, a.slug, a.excerpt, c.name AS category_name, c.slug AS category_slug,
       ts_headline('english', a.content_text,
                   (websearch_to_tsquery('english', (ARRAY[{{WORDS}}])[:i])
                    && to_tsquery('english', (ARRAY[{{PREFIXES}}])[:i])),
                   E'StartSel=\x02, StopSel=\x03, MaxFragments=1, MaxWords=30, MinWords=12, ShortWord=2') AS snippet
FROM hits h JOIN kb_articles a ON a.id = h.id
LEFT JOIN kb_categories c ON c.id = a.category_id
ORDER BY h.score DESC, h.created_at DESC, h.id DESC;
