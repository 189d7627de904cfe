-- Knowledge base: categories and articles of an entity, per company and mode.
-- Search: a stored tsvector (title weight A, plain-text content weight B,
-- english config) with a GIN index.

CREATE TABLE kb_categories (
    id          UUID PRIMARY KEY,
    company_id  UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id   UUID NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    CONSTRAINT kb_categories_slug UNIQUE (entity_id, mode, slug)
);
CREATE INDEX kb_categories_tenant ON kb_categories (company_id, mode, entity_id, name);

CREATE TABLE kb_articles (
    id                 UUID PRIMARY KEY,
    company_id         UUID NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode               TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id          UUID NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    category_id        UUID REFERENCES kb_categories (id) ON DELETE SET NULL,
    title              TEXT NOT NULL,
    slug               TEXT NOT NULL,
    -- Markdown as given, and its plain text (what search and snippets read).
    content            TEXT NOT NULL DEFAULT '',
    content_text       TEXT NOT NULL DEFAULT '',
    excerpt            TEXT NOT NULL DEFAULT '',
    -- False while the excerpt is derived from the content (kept in step with it).
    excerpt_custom     BOOLEAN NOT NULL DEFAULT FALSE,
    is_published       BOOLEAN NOT NULL DEFAULT FALSE,
    helpful_count      BIGINT NOT NULL DEFAULT 0,
    not_helpful_count  BIGINT NOT NULL DEFAULT 0,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    search_vector      TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A')
        || setweight(to_tsvector('english', content_text), 'B')
    ) STORED,
    CONSTRAINT kb_articles_slug UNIQUE (entity_id, mode, slug)
);
CREATE INDEX kb_articles_tenant ON kb_articles (company_id, mode, created_at DESC, id DESC);
CREATE INDEX kb_articles_entity ON kb_articles (company_id, mode, entity_id, created_at DESC, id DESC);
CREATE INDEX kb_articles_category ON kb_articles (category_id, is_published);
CREATE INDEX kb_articles_search ON kb_articles USING GIN (search_vector);
