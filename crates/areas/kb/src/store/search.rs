//! Ranked full-text search over published articles: Postgres through its
//! weighted tsvector and GIN index, SQLite through FTS5 with bm25.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Backend, Db, Query, Table, ensure_reference};
use crate::error::StoreError;
use crate::model::{CategoryRef, SearchHit};
use crate::search::{TextQuery, postgres_tsquery};
use crate::text;

#[derive(sqlx::FromRow)]
pub(super) struct SearchRow {
    id: Uuid,
    title: String,
    slug: String,
    excerpt: String,
    category_name: Option<String>,
    category_slug: Option<String>,
    snippet: Option<String>,
}

/// Marks around matched words in snippets: control characters that plain
/// text never holds, so their presence proves a match in the content.
const MARK_START: char = '\u{2}';
const MARK_END: char = '\u{3}';
const HEADLINE_OPTIONS: &str =
    "StartSel=\u{2}, StopSel=\u{3}, MaxFragments=1, MaxWords=30, MinWords=12, ShortWord=2";

impl SearchRow {
    pub(super) fn into_hit(self) -> SearchHit {
        let passage = self
            .snippet
            .filter(|s| s.contains(MARK_START))
            .map(|s| text::collapse_whitespace(&s.replace([MARK_START, MARK_END], "")))
            .filter(|s| !s.is_empty());
        SearchHit {
            id: self.id,
            title: self.title,
            slug: self.slug,
            excerpt: passage.unwrap_or(self.excerpt),
            category: match (self.category_name, self.category_slug) {
                (Some(name), Some(slug)) => Some(CategoryRef { name, slug }),
                _ => None,
            },
        }
    }
}

/// Ranked full-text search over the published articles of a tenant, or of
/// one entity of it (which must be the company's: a 400 on `entityId`
/// otherwise): every word must match (stemmed), the last one also as a
/// prefix; title matches rank above content matches. This is what the
/// public widget search reuses with the entity of its widget key.
pub async fn search(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    text: &str,
    limit: i64,
) -> Result<Vec<SearchHit>, StoreError> {
    if let Some(entity) = entity_id {
        ensure_reference(db, tenant.company_id, Table::Entities, entity, "entityId").await?;
    }
    let query = TextQuery::parse(text);
    if query.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<SearchRow> = search_query(db.backend(), tenant, entity_id, &query, limit)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(SearchRow::into_hit).collect())
}

/// The plan of [`search`]'s query for these arguments (Postgres `EXPLAIN`,
/// SQLite `EXPLAIN QUERY PLAN` details), one line each: proof that search
/// is one indexed query.
pub async fn explain_search(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    text: &str,
    limit: i64,
) -> Result<Vec<String>, StoreError> {
    let query = search_query(
        db.backend(),
        tenant,
        entity_id,
        &TextQuery::parse(text),
        limit,
    );
    Ok(match db.backend() {
        Backend::Postgres => query.prefixed("EXPLAIN ").fetch_column(db).await?,
        Backend::Sqlite => {
            let rows: Vec<(i64, i64, i64, String)> =
                query.prefixed("EXPLAIN QUERY PLAN ").fetch_all(db).await?;
            rows.into_iter().map(|(_, _, _, detail)| detail).collect()
        }
    })
}

fn search_query(
    backend: Backend,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    text: &TextQuery,
    limit: i64,
) -> Query {
    ranked(backend, tenant, entity_id, text, limit, Snippets::Made)
}

/// Which published articles a ranked query keeps: its match condition on
/// each backend. The one thing search and suggestions do differently.
pub(super) trait Matching {
    /// The Postgres tsquery, its values bound to `query`.
    fn tsquery(&self, query: &mut Query) -> String;
    /// The FTS5 MATCH expression.
    fn fts5(&self) -> String;
}

impl Matching for TextQuery {
    fn tsquery(&self, query: &mut Query) -> String {
        postgres_tsquery(query, self)
    }

    fn fts5(&self) -> String {
        self.fts5_match()
    }
}

/// Whether a ranked query cuts a passage around the match from each hit's
/// content (search) or leaves the excerpt (suggestions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Snippets {
    Made,
    Left,
}

/// The published articles of the tenant, or of one entity of it, that
/// `matching` keeps, best first (title matches above content matches), at
/// most `limit`, with their categories: the query of search and of
/// suggestions alike.
pub(super) fn ranked(
    backend: Backend,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    matching: &dyn Matching,
    limit: i64,
    snippets: Snippets,
) -> Query {
    // The text uses the tsquery more than once, so values are bound first
    // and the SQL written after with their placeholders.
    let mut query = Query::new("").bind_tenant(tenant);
    let entity = match entity_id {
        Some(entity) => format!(" AND a.entity_id = {}", query.placeholder_for(entity)),
        None => String::new(),
    };
    let sql = match backend {
        Backend::Postgres => {
            let tsquery = matching.tsquery(&mut query);
            let limit = query.placeholder_for(limit);
            let snippet = match snippets {
                Snippets::Made => {
                    let options = query.placeholder_for(HEADLINE_OPTIONS);
                    format!("ts_headline('english', a.content_text, {tsquery}, {options})")
                }
                Snippets::Left => "NULL::text".to_string(),
            };
            format!(
                "WITH hits AS (\
                   SELECT a.id, a.created_at, \
                     ts_rank('{{0.1, 0.2, 0.4, 1.0}}', a.search_vector, {tsquery}) AS score \
                   FROM kb_articles a \
                   WHERE a.company_id = $1 AND a.mode = $2 AND a.is_published = TRUE{entity} \
                     AND a.search_vector @@ {tsquery} \
                   ORDER BY score DESC, a.created_at DESC, a.id DESC LIMIT {limit}) \
                 SELECT a.id, a.title, a.slug, a.excerpt, c.name AS category_name, \
                   c.slug AS category_slug, {snippet} AS snippet \
                 FROM hits h JOIN kb_articles a ON a.id = h.id \
                 LEFT JOIN kb_categories c ON c.id = a.category_id \
                 ORDER BY h.score DESC, h.created_at DESC, h.id DESC"
            )
        }
        Backend::Sqlite => {
            let matching = query.placeholder_for(matching.fts5());
            let limit = query.placeholder_for(limit);
            let snippet = match snippets {
                Snippets::Made => "snippet(kb_articles_fts, 1, char(2), char(3), '…', 24)",
                Snippets::Left => "NULL",
            };
            // FTS5 drives the join in rank order (bm25, title weighted 10:1),
            // so LIMIT stops it early and snippets are made only for the hits.
            format!(
                "SELECT a.id, a.title, a.slug, a.excerpt, c.name AS category_name, \
                   c.slug AS category_slug, {snippet} AS snippet \
                 FROM kb_articles_fts \
                 CROSS JOIN kb_articles a ON a.seq = kb_articles_fts.rowid \
                 LEFT JOIN kb_categories c ON c.id = a.category_id \
                 WHERE kb_articles_fts MATCH {matching} \
                   AND kb_articles_fts.rank MATCH 'bm25(10.0, 1.0)' \
                   AND a.company_id = $1 AND a.mode = $2 AND a.is_published = TRUE{entity} \
                 ORDER BY kb_articles_fts.rank LIMIT {limit}"
            )
        }
    };
    query.push(&sql)
}
