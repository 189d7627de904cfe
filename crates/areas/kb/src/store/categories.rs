//! Categories: list (with their published article counts), create (with a
//! free slug), rename, delete, and the check that an article's category is
//! its entity's.

use uuid::Uuid;

use super::{SLUG_ATTEMPTS, free_slug};
use crate::auth::Tenant;
use crate::db::{Db, On, Query, Table, ensure_reference};
use crate::error::StoreError;
use crate::model::Category;
use crate::text;
use crate::time::{Timestamp, new_id};

/// Categories with their count of published articles (one indexed lookup each).
const CATEGORY_SELECT: &str = "SELECT c.id, c.entity_id, c.name, c.slug, c.created_at, \
     c.updated_at, (SELECT COUNT(*) FROM kb_articles a WHERE a.category_id = c.id \
     AND a.is_published = TRUE) AS article_count FROM kb_categories c";

/// Categories of the tenant (of one entity if given, which must be the
/// company's: a 400 on `entityId` otherwise), by name.
pub async fn list_categories(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
) -> Result<Vec<Category>, StoreError> {
    let mut query = Query::new(CATEGORY_SELECT)
        .push(" WHERE ")
        .push_tenant(tenant, "c");
    if let Some(entity) = entity_id {
        ensure_reference(db, tenant.company_id, Table::Entities, entity, "entityId").await?;
        query = query.push(" AND c.entity_id = ").push_bind(entity);
    }
    query.push(" ORDER BY c.name, c.id").fetch_all(db).await
}

pub async fn find_category(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Category, StoreError> {
    Query::new(CATEGORY_SELECT)
        .push(" WHERE c.id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "c")
        .fetch_one(db)
        .await
}

/// Creates a category of an entity of the company; the slug is given
/// (taken → Conflict) or made free from the name.
pub async fn create_category(
    db: &Db,
    tenant: &Tenant,
    entity_id: Uuid,
    name: &str,
    slug: Option<&str>,
    now: Timestamp,
) -> Result<Category, StoreError> {
    let base = text::slugify(name, "category");
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut tx = db.begin().await?;
        let company = tenant.company_id;
        ensure_reference(&mut tx, company, Table::Entities, entity_id, "entityId").await?;
        let chosen = match slug {
            Some(slug) => slug.to_string(),
            None => free_slug(&mut tx, "kb_categories", tenant, entity_id, &base).await?,
        };
        let id = new_id();
        let inserted = Query::new(
            "INSERT INTO kb_categories (id, company_id, mode, entity_id, name, slug, \
             created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
        )
        .bind(id)
        .bind_tenant(tenant)
        .bind(entity_id)
        .bind(name)
        .bind(chosen)
        .bind(now)
        .unique_field("slug")
        .execute(&mut tx)
        .await;
        match inserted {
            Ok(()) => {
                tx.commit().await?;
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
    now: Timestamp,
) -> Result<Category, StoreError> {
    Query::new(
        "UPDATE kb_categories SET name = COALESCE($4, name), slug = COALESCE($5, slug), \
         updated_at = $6 WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(name)
    .bind(slug)
    .bind(now)
    .unique_field("slug")
    .execute_or_not_found(db)
    .await?;
    find_category(db, tenant, id).await
}

/// Deletes a category; its articles become uncategorised (ON DELETE SET
/// NULL), which the change feed records for each.
pub async fn delete_category(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let articles: Vec<Uuid> = Query::new("SELECT a.id FROM kb_articles a WHERE a.category_id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "a")
        .push(" ORDER BY a.id")
        .fetch_column(&mut tx)
        .await?;
    Query::new("DELETE FROM kb_categories WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(&mut tx)
        .await?;
    super::articles::record_articles(&mut tx, tenant, &articles, now).await?;
    tx.commit().await
}

/// Checks that `category_id` (a filter or body field) names a category of
/// the tenant, and of `entity_id` when given: InvalidReference otherwise.
pub(super) async fn ensure_category<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    category_id: Uuid,
) -> Result<(), StoreError> {
    let found: Option<Uuid> = Query::new("SELECT entity_id FROM kb_categories WHERE id = ")
        .push_bind(category_id)
        .push(" AND ")
        .push_tenant(tenant, "")
        .fetch_column(on)
        .await?
        .into_iter()
        .next();
    match (found, entity_id) {
        (Some(actual), Some(expected)) if actual != expected => Err(invalid_category()),
        (Some(_), _) => Ok(()),
        (None, _) => Err(invalid_category()),
    }
}

fn invalid_category() -> StoreError {
    StoreError::InvalidReference {
        field: "categoryId".into(),
        message: "must be a category of the article's entity".into(),
    }
}
