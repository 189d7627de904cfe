//! SQL of the knowledge base: articles, categories and search. Every query
//! filters on the tenant (company and mode). Search is the one place where
//! the dialects differ: Postgres ranks a weighted tsvector through its GIN
//! index, SQLite an FTS5 index with bm25.

mod articles;
mod categories;
mod search;
mod suggest;
mod suggestions;
mod synonyms;

pub use articles::{
    create_article, delete_article, find_article, list_articles, update_article, vote,
};
pub use categories::{
    create_category, delete_category, find_category, list_categories, update_category,
};
pub use search::{explain_search, search};
pub use suggest::suggest;
pub(crate) use suggestions::TICKET_QUESTION_MAX;
pub use suggestions::{erase_suggestion_mentions, erase_suggestions_of_records};
pub use suggestions::{keep_suggestion, record_suggestion, suggestions_of, ticket_suggestion};
pub use synonyms::{set_synonym_groups, synonym_groups};

use std::collections::HashSet;

use uuid::Uuid;

use super::text;
use crate::auth::Tenant;
use crate::db::{Backend, Query, Tx};
use crate::error::StoreError;

/// How many times a create retries when a generated slug was taken by a
/// concurrent insert between the lookup and the insert.
const SLUG_ATTEMPTS: u32 = 4;

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
        let lock = format!("{table}:{entity_id}:{}:{stem}", tenant.mode.as_api());
        Query::new("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(lock)
            .execute(&mut *tx)
            .await?;
    }
    let taken: Vec<String> = Query::new(format!("SELECT slug FROM {table} WHERE entity_id = "))
        .push_bind(entity_id)
        .push(" AND ")
        .push_tenant(tenant, "")
        .push(" AND slug LIKE ")
        .push_bind(format!("{stem}%"))
        .fetch_column(tx)
        .await?;
    let taken: HashSet<String> = taken.into_iter().collect();
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
