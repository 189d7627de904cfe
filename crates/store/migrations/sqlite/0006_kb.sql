-- Knowledge base: categories and articles of an entity, per company and mode.
-- Search: an FTS5 index (porter stemming, unicode61) over the title and the
-- plain-text content, kept in sync by triggers. It is an external-content
-- table keyed by `seq`, a stable integer alias of the rowid (a plain rowid
-- may change on VACUUM); `id` stays the article's public key.

CREATE TABLE kb_categories (
    id          BLOB PRIMARY KEY,
    company_id  BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id   BLOB NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    CONSTRAINT kb_categories_slug UNIQUE (entity_id, mode, slug)
);
CREATE INDEX kb_categories_tenant ON kb_categories (company_id, mode, entity_id, name);

CREATE TABLE kb_articles (
    seq                INTEGER PRIMARY KEY,
    id                 BLOB NOT NULL UNIQUE,
    company_id         BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode               TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    entity_id          BLOB NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    category_id        BLOB REFERENCES kb_categories (id) ON DELETE SET NULL,
    title              TEXT NOT NULL,
    slug               TEXT NOT NULL,
    content            TEXT NOT NULL DEFAULT '',
    content_text       TEXT NOT NULL DEFAULT '',
    excerpt            TEXT NOT NULL DEFAULT '',
    excerpt_custom     INTEGER NOT NULL DEFAULT 0,
    is_published       INTEGER NOT NULL DEFAULT 0,
    helpful_count      INTEGER NOT NULL DEFAULT 0,
    not_helpful_count  INTEGER NOT NULL DEFAULT 0,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    CONSTRAINT kb_articles_slug UNIQUE (entity_id, mode, slug)
);
CREATE INDEX kb_articles_tenant ON kb_articles (company_id, mode, created_at DESC, id DESC);
CREATE INDEX kb_articles_entity ON kb_articles (company_id, mode, entity_id, created_at DESC, id DESC);
CREATE INDEX kb_articles_category ON kb_articles (category_id, is_published);

CREATE VIRTUAL TABLE kb_articles_fts USING fts5 (
    title,
    content_text,
    content = 'kb_articles',
    content_rowid = 'seq',
    tokenize = 'porter unicode61',
    prefix = '2 3'
);

CREATE TRIGGER kb_articles_fts_insert AFTER INSERT ON kb_articles BEGIN
    INSERT INTO kb_articles_fts (rowid, title, content_text)
    VALUES (new.seq, new.title, new.content_text);
END;

CREATE TRIGGER kb_articles_fts_delete AFTER DELETE ON kb_articles BEGIN
    INSERT INTO kb_articles_fts (kb_articles_fts, rowid, title, content_text)
    VALUES ('delete', old.seq, old.title, old.content_text);
END;

CREATE TRIGGER kb_articles_fts_update AFTER UPDATE OF title, content_text ON kb_articles
WHEN old.title IS NOT new.title OR old.content_text IS NOT new.content_text BEGIN
    INSERT INTO kb_articles_fts (kb_articles_fts, rowid, title, content_text)
    VALUES ('delete', old.seq, old.title, old.content_text);
    INSERT INTO kb_articles_fts (rowid, title, content_text)
    VALUES (new.seq, new.title, new.content_text);
END;
