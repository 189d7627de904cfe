//! Articles: create (with a free slug), read, list, edit, delete, vote.

use uuid::Uuid;

use super::categories::ensure_category;
use super::{SLUG_ATTEMPTS, free_slug};
use crate::auth::Tenant;
use crate::db::{Backend, Db, Query, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::events;
use crate::events::{RecordChange, RecordType};
use crate::model::{Article, ArticleChanges, ArticleFilter, ArticleSummary, NewArticle, Status};
use crate::paging::{After, Order, push_after};
use crate::text;
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

const ARTICLE_COLUMNS: &str = "id, entity_id, category_id, title, slug, content, excerpt, \
     excerpt_custom, is_published, helpful_count, not_helpful_count, created_at, updated_at";
const SUMMARY_COLUMNS: &str = "id, title, slug, excerpt, category_id, is_published, created_at";

/// A category that vanished between the check and the write.
const CATEGORY_FIELD: &str = "categoryId";
const CATEGORY_REQUIREMENT: &str = "must be a category of the article's entity";

/// `SELECT … FROM kb_articles WHERE id = $1 AND` the tenant's.
fn by_id(select: &str, tenant: &Tenant, id: Uuid) -> Query {
    Query::new(format!("{select} FROM kb_articles WHERE id = "))
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "")
}

/// Creates an article. The entity must be the company's and the category
/// the same entity's (else InvalidReference, a 400); an explicit slug that
/// is taken is a Conflict; without one, a free slug is made from the title.
pub async fn create_article(
    db: &Db,
    tenant: &Tenant,
    new: NewArticle,
    now: Timestamp,
) -> Result<Article, StoreError> {
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
        let company = tenant.company_id;
        ensure_reference(&mut tx, company, Table::Entities, new.entity_id, "entityId").await?;
        if let Some(category) = new.category_id {
            ensure_category(&mut tx, tenant, Some(new.entity_id), category).await?;
        }
        let slug = match &new.slug {
            Some(slug) => slug.clone(),
            None => free_slug(&mut tx, "kb_articles", tenant, new.entity_id, &base).await?,
        };
        let inserted = Query::new(format!(
            "INSERT INTO kb_articles (id, company_id, mode, entity_id, category_id, title, slug, \
             content, content_text, excerpt, excerpt_custom, is_published, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) \
             RETURNING {ARTICLE_COLUMNS}"
        ))
        .bind(new_id())
        .bind_tenant(tenant)
        .bind(new.entity_id)
        .bind(new.category_id)
        .bind(&new.title)
        .bind(slug)
        .bind(&new.content)
        .bind(&content_text)
        .bind(&excerpt)
        .bind(excerpt_custom)
        .bind(new.is_published)
        .bind(now)
        .unique_field("slug")
        .foreign_key_field(CATEGORY_FIELD, CATEGORY_REQUIREMENT)
        .fetch_one(&mut tx)
        .await;
        match inserted {
            Ok(article) => {
                record_article(&mut tx, tenant, &article, now).await?;
                tx.commit().await?;
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
    by_id(&format!("SELECT {ARTICLE_COLUMNS}"), tenant, id)
        .push(published)
        .fetch_one(db)
        .await
}

/// A page of articles, newest first, read with one row more than
/// `page.limit`, and the total matching the filter.
/// The entity and category filters must name the tenant's (a 400 on the
/// field otherwise), the category one of the entity when both are given.
pub async fn list_articles(
    db: &Db,
    tenant: &Tenant,
    filter: ArticleFilter,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<ArticleSummary>, i64), StoreError> {
    if let Some(entity) = filter.entity_id {
        ensure_reference(db, tenant.company_id, Table::Entities, entity, "entityId").await?;
    }
    if let Some(category) = filter.category_id {
        ensure_category(db, tenant, filter.entity_id, category).await?;
    }
    let matching = |select: &str| {
        let mut query =
            Query::new(format!("{select} FROM kb_articles WHERE ")).push_tenant(tenant, "");
        if let Some(entity) = filter.entity_id {
            query = query.push(" AND entity_id = ").push_bind(entity);
        }
        if let Some(category) = filter.category_id {
            query = query.push(" AND category_id = ").push_bind(category);
        }
        match filter.status {
            Status::Published => query.push(" AND is_published = TRUE"),
            Status::Draft => query.push(" AND is_published = FALSE"),
            Status::All => query,
        }
    };
    let total = matching("SELECT COUNT(*)").fetch_scalar(db).await?;
    let page_query = matching(&format!("SELECT {SUMMARY_COLUMNS}"));
    let rows = push_after(page_query, "", after, Order::NewestFirst)
        .push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(page.limit + 1)
        .push(" OFFSET ")
        .push_bind(page.offset)
        .fetch_all(db)
        .await?;
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
    now: Timestamp,
) -> Result<Article, StoreError> {
    let mut tx = db.begin().await?;
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let current: Article = by_id(&format!("SELECT {ARTICLE_COLUMNS}"), tenant, id)
        .push(lock)
        .fetch_one(&mut tx)
        .await?;
    if let Some(Some(category)) = changes.category_id {
        ensure_category(&mut tx, tenant, Some(current.entity_id), category).await?;
    }
    let content_text = changes.content.as_deref().map(text::plain_text);
    let (excerpt, excerpt_custom) = match (&changes.excerpt, &content_text) {
        (Some(Some(given)), _) => (given.clone(), true),
        (Some(None), Some(plain)) => (text::excerpt_of(plain), false),
        (Some(None), None) => (text::excerpt_of(&text::plain_text(&current.content)), false),
        (None, Some(plain)) if !current.excerpt_custom => (text::excerpt_of(plain), false),
        (None, _) => (current.excerpt.clone(), current.excerpt_custom),
    };
    let article = Query::new(format!(
        "UPDATE kb_articles SET title = $4, slug = $5, content = $6, \
         content_text = COALESCE($7, content_text), excerpt = $8, excerpt_custom = $9, \
         category_id = $10, is_published = $11, updated_at = $12 \
         WHERE id = $1 AND company_id = $2 AND mode = $3 RETURNING {ARTICLE_COLUMNS}"
    ))
    .bind(id)
    .bind_tenant(tenant)
    .bind(changes.title.unwrap_or(current.title))
    .bind(changes.slug.unwrap_or(current.slug))
    .bind(changes.content.unwrap_or(current.content))
    .bind(content_text)
    .bind(excerpt)
    .bind(excerpt_custom)
    .bind(changes.category_id.unwrap_or(current.category_id))
    .bind(changes.is_published.unwrap_or(current.is_published))
    .bind(now)
    .unique_field("slug")
    .foreign_key_field(CATEGORY_FIELD, CATEGORY_REQUIREMENT)
    .fetch_one(&mut tx)
    .await?;
    record_article(&mut tx, tenant, &article, now).await?;
    tx.commit().await?;
    Ok(article)
}

/// The change feed's entry for the article as `tx` now holds it, at `now`.
pub(super) async fn record_article(
    tx: &mut Tx,
    tenant: &Tenant,
    article: &Article,
    now: Timestamp,
) -> Result<(), StoreError> {
    let change = RecordChange::upsert(RecordType::KbArticle, article.id, article)?;
    events::record_change(tx, tenant, &change, now).await
}

pub async fn delete_article(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    Query::new("DELETE FROM kb_articles WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(&mut tx)
        .await?;
    let change = RecordChange::delete(RecordType::KbArticle, id);
    events::record_change(&mut tx, tenant, &change, now).await?;
    tx.commit().await
}

/// Records a helpful / not-helpful vote: one atomic counter increment, so
/// concurrent votes are all counted. Drafts only when `include_drafts`.
pub async fn vote(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    helpful: bool,
    include_drafts: bool,
    now: Timestamp,
) -> Result<(), StoreError> {
    let published = if include_drafts {
        ""
    } else {
        " AND is_published = TRUE"
    };
    let (yes, no): (i64, i64) = if helpful { (1, 0) } else { (0, 1) };
    // In a transaction so that an idempotent request's record commits
    // with the vote (see `db::CommitHook`).
    let mut tx = db.begin().await?;
    let article: Article = Query::new(format!(
        "UPDATE kb_articles SET helpful_count = helpful_count + $4, \
         not_helpful_count = not_helpful_count + $5 \
         WHERE id = $1 AND company_id = $2 AND mode = $3{published} RETURNING {ARTICLE_COLUMNS}"
    ))
    .bind(id)
    .bind_tenant(tenant)
    .bind(yes)
    .bind(no)
    .fetch_one(&mut tx)
    .await?;
    record_article(&mut tx, tenant, &article, now).await?;
    tx.commit().await
}

/// Records, for the change feed, the articles `ids` as `tx` now holds them
/// (a deleted category left them uncategorised).
pub(super) async fn record_articles(
    tx: &mut Tx,
    tenant: &Tenant,
    ids: &[Uuid],
    now: Timestamp,
) -> Result<(), StoreError> {
    for id in ids {
        let article: Article = by_id(&format!("SELECT {ARTICLE_COLUMNS}"), tenant, *id)
            .fetch_one(&mut *tx)
            .await?;
        record_article(tx, tenant, &article, now).await?;
    }
    Ok(())
}
