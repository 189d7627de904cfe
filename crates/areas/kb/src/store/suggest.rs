//! Retrieval tuned for questions (`GET /kb/suggest`, the widget's
//! suggestions): the question's words without stop words, each grouped with
//! its company's synonyms ([`crate::question`]). Articles that match every
//! group rank first, by the backend's rank; then those that match any term.
//! Published articles of the tenant only: search's ranked query
//! (`search::ranked`), with the question's match.

use uuid::Uuid;

use super::search::{self, Matching, SearchRow, Snippets};
use super::synonyms::synonym_groups;
use crate::auth::Tenant;
use crate::db::{Backend, Db, Query, Table, ensure_reference};
use crate::error::StoreError;
use crate::model::SearchHit;
use crate::question::{Question, Synonyms, Term, expand};

/// The best published articles for `question`, of one entity of the
/// tenant or of all of them: at most `limit`.
pub async fn suggest(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    question: &str,
    limit: i64,
) -> Result<Vec<SearchHit>, StoreError> {
    if let Some(entity) = entity_id {
        ensure_reference(db, tenant.company_id, Table::Entities, entity, "entityId").await?;
    }
    let synonyms = Synonyms::new(&synonym_groups(db, tenant).await?);
    let question = expand(question, &synonyms);
    if question.is_empty() {
        return Ok(Vec::new());
    }
    let backend = db.backend();
    let all: Vec<SearchRow> = ranked(backend, tenant, entity_id, &Match::All(&question), limit)
        .fetch_all(db)
        .await?;
    let mut hits: Vec<SearchHit> = all.into_iter().map(SearchRow::into_hit).collect();
    // With one group "all" and "any" are the same match.
    if question.groups.len() > 1 && (hits.len() as i64) < limit {
        let any: Vec<SearchRow> = ranked(backend, tenant, entity_id, &Match::Any(&question), limit)
            .fetch_all(db)
            .await?;
        for hit in any.into_iter().map(SearchRow::into_hit) {
            if (hits.len() as i64) < limit && !hits.iter().any(|h| h.id == hit.id) {
                hits.push(hit);
            }
        }
    }
    Ok(hits)
}

/// Which articles a query keeps.
enum Match<'a> {
    /// Each group matched by one of its terms.
    All(&'a Question),
    /// Any term of any group.
    Any(&'a Question),
}

impl Matching for Match<'_> {
    fn tsquery(&self, query: &mut Query) -> String {
        postgres(query, self)
    }

    fn fts5(&self) -> String {
        fts5(self)
    }
}

/// Search's ranked query with the question's match, without snippets.
fn ranked(
    backend: Backend,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    matching: &Match,
    limit: i64,
) -> Query {
    search::ranked(backend, tenant, entity_id, matching, limit, Snippets::Left).planned_per_call()
}

/// The Postgres tsquery of a match, its values bound to `query`.
fn postgres(query: &mut Query, matching: &Match) -> String {
    let mut term = |t: &Term| {
        let (whole, prefix) = match t.prefix {
            true => t.words.split_at(t.words.len() - 1),
            false => (&t.words[..], &[][..]),
        };
        let mut parts = Vec::new();
        if !whole.is_empty() {
            let text = query.placeholder_for(whole.join(" "));
            parts.push(format!("websearch_to_tsquery('english', {text})"));
        }
        if let Some(last) = prefix.first() {
            let text = query.placeholder_for(format!("{last}:*"));
            parts.push(format!("to_tsquery('english', {text})"));
        }
        format!("({})", parts.join(" && "))
    };
    match matching {
        Match::All(q) => {
            let groups: Vec<String> = q
                .groups
                .iter()
                .map(|g| {
                    format!(
                        "({})",
                        g.iter().map(&mut term).collect::<Vec<_>>().join(" || ")
                    )
                })
                .collect();
            format!("({})", groups.join(" && "))
        }
        Match::Any(q) => {
            let terms: Vec<String> = q.all_terms().into_iter().map(term).collect();
            format!("({})", terms.join(" || "))
        }
    }
}

/// An FTS5 MATCH expression of a match: each word a quoted string (never
/// an operator; only letters and digits reach here).
fn fts5(matching: &Match) -> String {
    let term = |t: &Term| {
        let last = t.words.len() - 1;
        let words: Vec<String> = t
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let star = if t.prefix && i == last { "*" } else { "" };
                format!("\"{}\"{star}", w.replace('"', "\"\""))
            })
            .collect();
        format!("({})", words.join(" AND "))
    };
    match matching {
        Match::All(q) => q
            .groups
            .iter()
            .map(|g| format!("({})", g.iter().map(term).collect::<Vec<_>>().join(" OR ")))
            .collect::<Vec<_>>()
            .join(" AND "),
        Match::Any(q) => q
            .all_terms()
            .into_iter()
            .map(term)
            .collect::<Vec<_>>()
            .join(" OR "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(text: &str) -> Question {
        let groups = vec![vec!["refund".to_string(), "money back".to_string()]];
        expand(text, &Synonyms::new(&groups))
    }

    #[test]
    fn fts5_all_needs_each_group_and_any_one_term() {
        let q = question("refund for a broken lid");
        assert_eq!(
            fts5(&Match::All(&q)),
            "((\"refund\") OR (\"money\" AND \"back\")) AND ((\"broken\")) AND ((\"lid\"*))"
        );
        assert_eq!(
            fts5(&Match::Any(&q)),
            "(\"refund\") OR (\"money\" AND \"back\") OR (\"broken\") OR (\"lid\"*)"
        );
    }

    #[test]
    fn postgres_terms_are_bound_never_written() {
        let q = question("money back on a lid");
        let mut query =
            Query::new("").bind_tenant(&Tenant::new(Uuid::nil(), crate::auth::Mode::Test));
        let sql = postgres(&mut query, &Match::All(&q));
        assert_eq!(
            sql,
            "(((websearch_to_tsquery('english', $3)) || (websearch_to_tsquery('english', $4))) \
             && ((to_tsquery('english', $5))))"
        );
    }
}
