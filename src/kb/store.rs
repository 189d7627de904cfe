//! SQL of the knowledge base. Every query filters on the tenant (company and
//! mode). Search is the one place where the dialects differ: Postgres ranks
//! a weighted tsvector through its GIN index, SQLite an FTS5 index with bm25.

use uuid::Uuid;

use super::model::{
    Article, ArticleChanges, ArticleFilter, ArticleSummary, Category, CategoryRef, NewArticle,
    SearchHit, Status,
};
use super::search::TextQuery;
use super::text;
use crate::auth::Tenant;
use crate::db::{Backend, Db, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};
use crate::validate::Page;
use crate::{on_db, on_tx};

const ARTICLE_COLUMNS: &str = "id, entity_id, category_id, title, slug, content, excerpt, \
     excerpt_custom, is_published, helpful_count, not_helpful_count, created_at, updated_at";
const SUMMARY_COLUMNS: &str = "id, title, slug, excerpt, category_id, is_published, created_at";
/// Categories with their count of published articles (one indexed lookup each).
const CATEGORY_SELECT: &str = "SELECT c.id, c.entity_id, c.name, c.slug, c.created_at, \
     c.updated_at, (SELECT COUNT(*) FROM kb_articles a WHERE a.category_id = c.id \
     AND a.is_published = TRUE) AS article_count FROM kb_categories c";

/// How many times a create retries when a generated slug was taken by a
/// concurrent insert between the lookup and the insert.
const SLUG_ATTEMPTS: u32 = 4;

/// A bind value of a query whose SQL is assembled from optional filters.
enum Arg {
    Id(Uuid),
    Text(String),
    Int(i64),
}

/// Bind values in `$n` order; `push` returns the placeholder to write.
#[derive(Default)]
struct Args(Vec<Arg>);

impl Args {
    /// Starts with the tenant as `$1` (company) and `$2` (mode).
    fn tenant(tenant: &Tenant) -> Args {
        Args(vec![
            Arg::Id(tenant.company_id),
            Arg::Text(tenant.mode.as_str().to_string()),
        ])
    }

    fn push(&mut self, arg: Arg) -> String {
        self.0.push(arg);
        format!("${}", self.0.len())
    }
}

/// Binds every `Args` value onto a sqlx query, in order.
macro_rules! bind_all {
    ($query:expr, $args:expr) => {{
        let mut query = $query;
        for arg in &$args.0 {
            query = match arg {
                Arg::Id(v) => query.bind(*v),
                Arg::Text(v) => query.bind(v.clone()),
                Arg::Int(v) => query.bind(*v),
            };
        }
        query
    }};
}

fn slug_taken(err: StoreError) -> StoreError {
    match err {
        StoreError::Conflict(_) => StoreError::Conflict("slug".into()),
        other => other,
    }
}

fn invalid_category() -> StoreError {
    StoreError::InvalidReference {
        field: "categoryId".into(),
        message: "must be a category of the article's entity".into(),
    }
}

/// A foreign-key failure on insert/update means the category vanished
/// between the check and the write.
fn map_write_error(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) if db.is_foreign_key_violation() => invalid_category(),
        _ => slug_taken(StoreError::from(err)),
    }
}

// ---------------------------------------------------------------- articles

/// Creates an article. The entity must be the company's and the category
/// the same entity's (else InvalidReference, a 400); an explicit slug that
/// is taken is a Conflict; without one, a free slug is made from the title.
pub async fn create_article(
    db: &Db,
    tenant: &Tenant,
    new: NewArticle,
) -> Result<Article, StoreError> {
    crate::entities::store::ensure_belongs(db, tenant.company_id, new.entity_id, "entityId")
        .await?;
    let content_text = text::plain_text(&new.content);
    let (excerpt, excerpt_custom) = match &new.excerpt {
        Some(excerpt) => (excerpt.clone(), true),
        None => (text::excerpt_of(&content_text), false),
    };
    let base = text::slugify(&new.title, "article");
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut tx = db.begin().await?;
        if let Some(category) = new.category_id {
            ensure_category_in(&mut tx, tenant, Some(new.entity_id), category).await?;
        }
        let slug = match &new.slug {
            Some(slug) => slug.clone(),
            None => free_slug(&mut tx, "kb_articles", tenant, new.entity_id, &base).await?,
        };
        let now = Timestamp::now();
        let sql = format!(
            "INSERT INTO kb_articles (id, company_id, mode, entity_id, category_id, title, slug, \
             content, content_text, excerpt, excerpt_custom, is_published, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) \
             RETURNING {ARTICLE_COLUMNS}"
        );
        let inserted = on_tx!(&mut tx, c => sqlx::query_as::<_, Article>(sqlx::AssertSqlSafe(sql))
            .bind(new_id()).bind(tenant.company_id).bind(tenant.mode.as_str())
            .bind(new.entity_id).bind(new.category_id).bind(&new.title).bind(&slug)
            .bind(&new.content).bind(&content_text).bind(&excerpt).bind(excerpt_custom)
            .bind(new.is_published).bind(now)
            .fetch_one(c).await)
        .map_err(map_write_error);
        match inserted {
            Ok(article) => {
                tx.commit().await.map_err(slug_taken)?;
                return Ok(article);
            }
            // Another insert took the generated slug meanwhile: look again.
            Err(StoreError::Conflict(_)) if new.slug.is_none() && attempt < SLUG_ATTEMPTS => {
                continue;
            }
            Err(err) => return Err(err),
        }
    }
}

/// The article `id`; drafts only when `include_drafts`.
pub async fn find_article(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    include_drafts: bool,
) -> Result<Article, StoreError> {
    let published = if include_drafts {
        ""
    } else {
        " AND is_published = TRUE"
    };
    let sql = format!(
        "SELECT {ARTICLE_COLUMNS} FROM kb_articles \
         WHERE id = $1 AND company_id = $2 AND mode = $3{published}"
    );
    on_db!(db, c => sqlx::query_as::<_, Article>(sqlx::AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_optional(c).await?)
    .ok_or(StoreError::NotFound)
}

/// A page of articles, newest first, and the total matching the filter.
pub async fn list_articles(
    db: &Db,
    tenant: &Tenant,
    filter: ArticleFilter,
    page: Page,
) -> Result<(Vec<ArticleSummary>, i64), StoreError> {
    let mut args = Args::tenant(tenant);
    let mut conditions = vec!["company_id = $1".to_string(), "mode = $2".to_string()];
    if let Some(entity) = filter.entity_id {
        conditions.push(format!("entity_id = {}", args.push(Arg::Id(entity))));
    }
    if let Some(category) = filter.category_id {
        conditions.push(format!("category_id = {}", args.push(Arg::Id(category))));
    }
    match filter.status {
        Status::Published => conditions.push("is_published = TRUE".into()),
        Status::Draft => conditions.push("is_published = FALSE".into()),
        Status::All => {}
    }
    let condition = conditions.join(" AND ");
    let count_sql = format!("SELECT COUNT(*) FROM kb_articles WHERE {condition}");
    let (total,): (i64,) = on_db!(db, c => bind_all!(
        sqlx::query_as::<_, (i64,)>(sqlx::AssertSqlSafe(count_sql)), args)
        .fetch_one(c).await?);
    let limit = args.push(Arg::Int(page.limit));
    let offset = args.push(Arg::Int(page.offset));
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS} FROM kb_articles WHERE {condition} \
         ORDER BY created_at DESC, id DESC LIMIT {limit} OFFSET {offset}"
    );
    let rows = on_db!(db, c => bind_all!(
        sqlx::query_as::<_, ArticleSummary>(sqlx::AssertSqlSafe(sql)), args)
        .fetch_all(c).await?);
    Ok((rows, total))
}

/// Applies `changes` to the article `id`. A content change re-derives an
/// excerpt that was not given explicitly. Vote counters are left alone, so
/// an edit never loses concurrent votes.
pub async fn update_article(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    changes: ArticleChanges,
) -> Result<Article, StoreError> {
    let mut tx = db.begin().await?;
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {ARTICLE_COLUMNS} FROM kb_articles \
         WHERE id = $1 AND company_id = $2 AND mode = $3{lock}"
    );
    let current = on_tx!(&mut tx, c => sqlx::query_as::<_, Article>(sqlx::AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_optional(c).await?)
    .ok_or(StoreError::NotFound)?;
    if let Some(Some(category)) = changes.category_id {
        ensure_category_in(&mut tx, tenant, Some(current.entity_id), category).await?;
    }
    let content_text = changes.content.as_deref().map(text::plain_text);
    let (excerpt, excerpt_custom) = match (&changes.excerpt, &content_text) {
        (Some(Some(given)), _) => (given.clone(), true),
        (Some(None), Some(plain)) => (text::excerpt_of(plain), false),
        (Some(None), None) => (text::excerpt_of(&text::plain_text(&current.content)), false),
        (None, Some(plain)) if !current.excerpt_custom => (text::excerpt_of(plain), false),
        (None, _) => (current.excerpt.clone(), current.excerpt_custom),
    };
    let title = changes.title.unwrap_or(current.title);
    let slug = changes.slug.unwrap_or(current.slug);
    let content = changes.content.unwrap_or(current.content);
    let category = changes.category_id.unwrap_or(current.category_id);
    let published = changes.is_published.unwrap_or(current.is_published);
    let sql = format!(
        "UPDATE kb_articles SET title = $4, slug = $5, content = $6, \
         content_text = COALESCE($7, content_text), excerpt = $8, excerpt_custom = $9, \
         category_id = $10, is_published = $11, updated_at = $12 \
         WHERE id = $1 AND company_id = $2 AND mode = $3 RETURNING {ARTICLE_COLUMNS}"
    );
    let now = Timestamp::now();
    let article = on_tx!(&mut tx, c => sqlx::query_as::<_, Article>(sqlx::AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .bind(&title).bind(&slug).bind(&content).bind(&content_text)
        .bind(&excerpt).bind(excerpt_custom).bind(category).bind(published).bind(now)
        .fetch_one(c).await)
    .map_err(map_write_error)?;
    tx.commit().await.map_err(slug_taken)?;
    Ok(article)
}

pub async fn delete_article(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    let deleted = on_db!(db, c => sqlx::query(
        "DELETE FROM kb_articles WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .execute(c).await?.rows_affected());
    if deleted == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Records a helpful / not-helpful vote: one atomic counter increment, so
/// concurrent votes are all counted. Drafts only when `include_drafts`.
pub async fn vote(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    helpful: bool,
    include_drafts: bool,
) -> Result<(), StoreError> {
    let published = if include_drafts {
        ""
    } else {
        " AND is_published = TRUE"
    };
    let sql = format!(
        "UPDATE kb_articles SET helpful_count = helpful_count + $4, \
         not_helpful_count = not_helpful_count + $5 \
         WHERE id = $1 AND company_id = $2 AND mode = $3{published}"
    );
    let (yes, no): (i64, i64) = if helpful { (1, 0) } else { (0, 1) };
    let updated = on_db!(db, c => sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str()).bind(yes).bind(no)
        .execute(c).await?.rows_affected());
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

// -------------------------------------------------------------- categories

/// Categories of the tenant (of one entity if given), by name.
pub async fn list_categories(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
) -> Result<Vec<Category>, StoreError> {
    let mut args = Args::tenant(tenant);
    let entity = match entity_id {
        Some(entity) => format!(" AND c.entity_id = {}", args.push(Arg::Id(entity))),
        None => String::new(),
    };
    let sql = format!(
        "{CATEGORY_SELECT} WHERE c.company_id = $1 AND c.mode = $2{entity} \
         ORDER BY c.name, c.id"
    );
    Ok(on_db!(db, c => bind_all!(
        sqlx::query_as::<_, Category>(sqlx::AssertSqlSafe(sql)), args)
        .fetch_all(c).await?))
}

pub async fn find_category(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Category, StoreError> {
    let sql = format!("{CATEGORY_SELECT} WHERE c.id = $1 AND c.company_id = $2 AND c.mode = $3");
    on_db!(db, c => sqlx::query_as::<_, Category>(sqlx::AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_optional(c).await?)
    .ok_or(StoreError::NotFound)
}

/// Creates a category of an entity of the company; the slug is given
/// (taken → Conflict) or made free from the name.
pub async fn create_category(
    db: &Db,
    tenant: &Tenant,
    entity_id: Uuid,
    name: &str,
    slug: Option<&str>,
) -> Result<Category, StoreError> {
    crate::entities::store::ensure_belongs(db, tenant.company_id, entity_id, "entityId").await?;
    let base = text::slugify(name, "category");
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut tx = db.begin().await?;
        let chosen = match slug {
            Some(slug) => slug.to_string(),
            None => free_slug(&mut tx, "kb_categories", tenant, entity_id, &base).await?,
        };
        let id = new_id();
        let now = Timestamp::now();
        let inserted = on_tx!(&mut tx, c => sqlx::query(
            "INSERT INTO kb_categories (id, company_id, mode, entity_id, name, slug, \
             created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)")
            .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str()).bind(entity_id)
            .bind(name).bind(&chosen).bind(now)
            .execute(c).await.map(|r| r.rows_affected()))
        .map_err(|e| slug_taken(e.into()));
        match inserted {
            Ok(_) => {
                tx.commit().await.map_err(slug_taken)?;
                return find_category(db, tenant, id).await;
            }
            Err(StoreError::Conflict(_)) if slug.is_none() && attempt < SLUG_ATTEMPTS => continue,
            Err(err) => return Err(err),
        }
    }
}

/// Renames a category and/or changes its slug (taken → Conflict).
pub async fn update_category(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    name: Option<&str>,
    slug: Option<&str>,
) -> Result<Category, StoreError> {
    let updated = on_db!(db, c => sqlx::query(
        "UPDATE kb_categories SET name = COALESCE($4, name), slug = COALESCE($5, slug), \
         updated_at = $6 WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .bind(name).bind(slug).bind(Timestamp::now())
        .execute(c).await.map(|r| r.rows_affected()))
    .map_err(|e| slug_taken(e.into()))?;
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    find_category(db, tenant, id).await
}

/// Deletes a category; its articles become uncategorised (ON DELETE SET NULL).
pub async fn delete_category(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    let deleted = on_db!(db, c => sqlx::query(
        "DELETE FROM kb_categories WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .execute(c).await?.rows_affected());
    if deleted == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Checks that `category_id` (a filter or body field) names a category of
/// the tenant, and of `entity_id` when given: InvalidReference otherwise.
pub async fn ensure_category(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    category_id: Uuid,
) -> Result<(), StoreError> {
    let found: Option<(Uuid,)> = on_db!(db, c => sqlx::query_as(
        "SELECT entity_id FROM kb_categories WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(category_id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_optional(c).await?);
    category_matches(found, entity_id)
}

async fn ensure_category_in(
    tx: &mut Tx,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    category_id: Uuid,
) -> Result<(), StoreError> {
    let found: Option<(Uuid,)> = on_tx!(tx, c => sqlx::query_as(
        "SELECT entity_id FROM kb_categories WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(category_id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_optional(c).await?);
    category_matches(found, entity_id)
}

fn category_matches(found: Option<(Uuid,)>, entity_id: Option<Uuid>) -> Result<(), StoreError> {
    match (found, entity_id) {
        (Some((actual,)), Some(expected)) if actual != expected => Err(invalid_category()),
        (Some(_), _) => Ok(()),
        (None, _) => Err(invalid_category()),
    }
}

/// `base`, or `base-2`, `base-3`… : the first slug of `table` not used in
/// the entity and mode. Runs in the insert's transaction.
async fn free_slug(
    tx: &mut Tx,
    table: &'static str,
    tenant: &Tenant,
    entity_id: Uuid,
    base: &str,
) -> Result<String, StoreError> {
    // Every candidate starts with this (suffixes up to 6 characters).
    let stem = text::truncate_slug(base, text::SLUG_MAX - 6);
    if tx.backend() == Backend::Postgres {
        // Creates of the same base slug in one entity take turns, so they
        // do not pick the same free slug (SQLite's write lock does this).
        let lock = format!("{table}:{entity_id}:{}:{stem}", tenant.mode.as_str());
        on_tx!(tx, c => sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(lock).execute(c).await.map(|r| r.rows_affected()))?;
    }
    let sql =
        format!("SELECT slug FROM {table} WHERE entity_id = $1 AND mode = $2 AND slug LIKE $3");
    let taken: Vec<(String,)> = on_tx!(tx, c => sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(entity_id).bind(tenant.mode.as_str()).bind(format!("{stem}%"))
        .fetch_all(c).await?);
    let taken: std::collections::HashSet<String> = taken.into_iter().map(|(s,)| s).collect();
    if !taken.contains(base) {
        return Ok(base.to_string());
    }
    let mut n = 2;
    loop {
        let candidate = text::with_suffix(base, n);
        if !taken.contains(&candidate) {
            return Ok(candidate);
        }
        n += 1;
    }
}

// ------------------------------------------------------------------ search

#[derive(sqlx::FromRow)]
struct SearchRow {
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
    fn into_hit(self) -> SearchHit {
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
/// one entity of it: every word must match (stemmed), the last one also as
/// a prefix; title matches rank above content matches. This is what the
/// public widget search reuses with the entity of its widget key.
pub async fn search(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    text: &str,
    limit: i64,
) -> Result<Vec<SearchHit>, StoreError> {
    let query = TextQuery::parse(text);
    if query.is_empty() {
        return Ok(Vec::new());
    }
    let (sql, args) = search_sql(db.backend(), tenant, entity_id, &query, limit);
    let rows = on_db!(db, c => bind_all!(
        sqlx::query_as::<_, SearchRow>(sqlx::AssertSqlSafe(sql)), args)
        .fetch_all(c).await?);
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
    let query = TextQuery::parse(text);
    let (sql, args) = search_sql(db.backend(), tenant, entity_id, &query, limit);
    Ok(match db {
        Db::Postgres(c) => bind_all!(
            sqlx::query_as::<_, (String,)>(sqlx::AssertSqlSafe(format!("EXPLAIN {sql}"))),
            args
        )
        .fetch_all(c)
        .await?
        .into_iter()
        .map(|(line,)| line)
        .collect(),
        Db::Sqlite(c) => bind_all!(
            sqlx::query_as::<_, (i64, i64, i64, String)>(sqlx::AssertSqlSafe(format!(
                "EXPLAIN QUERY PLAN {sql}"
            ))),
            args
        )
        .fetch_all(c)
        .await?
        .into_iter()
        .map(|(_, _, _, detail)| detail)
        .collect(),
    })
}

fn search_sql(
    backend: Backend,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    query: &TextQuery,
    limit: i64,
) -> (String, Args) {
    let mut args = Args::tenant(tenant);
    let entity = match entity_id {
        Some(entity) => format!(" AND a.entity_id = {}", args.push(Arg::Id(entity))),
        None => String::new(),
    };
    match backend {
        Backend::Postgres => {
            let words = query.postgres_words().map(|w| {
                format!(
                    "websearch_to_tsquery('english', {})",
                    args.push(Arg::Text(w))
                )
            });
            let prefix = query
                .postgres_prefix()
                .map(|p| format!("to_tsquery('english', {})", args.push(Arg::Text(p))));
            let tsquery = match (words, prefix) {
                (Some(w), Some(p)) => format!("({w} && {p})"),
                (Some(one), None) | (None, Some(one)) => one,
                // An empty query matches nothing (search() never gets here).
                (None, None) => "''::tsquery".to_string(),
            };
            let limit = args.push(Arg::Int(limit));
            let options = args.push(Arg::Text(HEADLINE_OPTIONS.to_string()));
            let sql = format!(
                "WITH hits AS (\
                   SELECT a.id, a.created_at, \
                     ts_rank('{{0.1, 0.2, 0.4, 1.0}}', a.search_vector, {tsquery}) AS score \
                   FROM kb_articles a \
                   WHERE a.company_id = $1 AND a.mode = $2 AND a.is_published = TRUE{entity} \
                     AND a.search_vector @@ {tsquery} \
                   ORDER BY score DESC, a.created_at DESC, a.id DESC LIMIT {limit}) \
                 SELECT a.id, a.title, a.slug, a.excerpt, c.name AS category_name, \
                   c.slug AS category_slug, \
                   ts_headline('english', a.content_text, {tsquery}, {options}) AS snippet \
                 FROM hits h JOIN kb_articles a ON a.id = h.id \
                 LEFT JOIN kb_categories c ON c.id = a.category_id \
                 ORDER BY h.score DESC, h.created_at DESC, h.id DESC"
            );
            (sql, args)
        }
        Backend::Sqlite => {
            let matching = args.push(Arg::Text(query.fts5_match()));
            let limit = args.push(Arg::Int(limit));
            // FTS5 drives the join in rank order (bm25, title weighted 10:1),
            // so LIMIT stops it early and snippets are made only for the hits.
            let sql = format!(
                "SELECT a.id, a.title, a.slug, a.excerpt, c.name AS category_name, \
                   c.slug AS category_slug, \
                   snippet(kb_articles_fts, 1, char(2), char(3), '…', 24) AS snippet \
                 FROM kb_articles_fts \
                 CROSS JOIN kb_articles a ON a.seq = kb_articles_fts.rowid \
                 LEFT JOIN kb_categories c ON c.id = a.category_id \
                 WHERE kb_articles_fts MATCH {matching} \
                   AND kb_articles_fts.rank MATCH 'bm25(10.0, 1.0)' \
                   AND a.company_id = $1 AND a.mode = $2 AND a.is_published = TRUE{entity} \
                 ORDER BY kb_articles_fts.rank LIMIT {limit}"
            );
            (sql, args)
        }
    }
}
