//! Ranked full-text search shared by the knowledge base, tickets and chat
//! sessions: the search text reduced alike for both backends
//! ([`TextQuery`]), and the SQL that matches and ranks a document table
//! with it (Postgres: a weighted tsvector with a GIN index; SQLite: FTS5).

mod query;

pub use query::{MAX_WORD_CHARS, MAX_WORDS, TextQuery};

use crate::auth::Tenant;
use crate::db::{Backend, Query};
use crate::error::FieldError;
use crate::validate::optional_text;

/// Longest search text, in characters (a 400 on `q` beyond).
pub const QUERY_MAX: usize = 500;

/// The `q` parameter of a list: `None` (no search) when absent or blank,
/// else its words; longer than [`QUERY_MAX`] is a problem on `q`.
pub fn optional_query(q: Option<&str>) -> Result<Option<TextQuery>, FieldError> {
    optional_text("q", q, QUERY_MAX).map(|text| text.as_deref().map(TextQuery::parse))
}

/// The Postgres tsquery of `text`, its values bound to `query`: every whole
/// word (stemmed) and the last word as a prefix. The returned SQL may be
/// used more than once in the statement (it names its placeholders).
pub fn postgres_tsquery(query: &mut Query, text: &TextQuery) -> String {
    let words = text.postgres_words().map(|w| {
        format!(
            "websearch_to_tsquery('english', {})",
            query.placeholder_for(w)
        )
    });
    let prefix = text
        .postgres_prefix()
        .map(|p| format!("to_tsquery('english', {})", query.placeholder_for(p)));
    match (words, prefix) {
        (Some(w), Some(p)) => format!("({w} && {p})"),
        (Some(one), None) | (None, Some(one)) => one,
        // An empty query matches nothing (callers check before).
        (None, None) => "''::tsquery".to_string(),
    }
}

/// A table of search documents, one per row of the table it indexes
/// (kept in step by triggers, see the migration that creates it).
#[derive(Debug)]
pub struct Index {
    /// The document table: `search_vector` on Postgres, `seq` (the FTS5
    /// rowid) on SQLite.
    pub documents: &'static str,
    /// Its column holding the indexed row's id.
    pub key: &'static str,
    /// The FTS5 table over the documents (SQLite).
    pub fts: &'static str,
    /// `ts_rank` weights of D, C, B and A.
    pub ts_rank_weights: &'static str,
    /// `bm25` weights of the FTS5 columns, in their order.
    pub bm25_weights: &'static str,
}

/// The part of a document a caller may match, when not all of it.
#[derive(Debug)]
pub struct Visible {
    /// Postgres: the weight labels kept (`ts_filter`), e.g. `{a,b,c}`.
    pub labels: &'static str,
    /// Postgres: `ts_rank` weights with the hidden labels at zero.
    pub ts_rank_weights: &'static str,
    /// SQLite: the FTS5 columns matched, space-separated.
    pub fts_columns: &'static str,
}

/// One search: what to match, where, and what the caller may see.
#[derive(Debug, Clone, Copy)]
pub struct Search<'a> {
    pub index: &'static Index,
    pub text: &'a TextQuery,
    pub visible: Option<&'static Visible>,
}

/// The alias of the document table in the SQL of [`Search`].
const DOC: &str = "search_doc";

impl Search<'_> {
    /// Joins the document of `row_id` (the indexed row's id, e.g. `t.id`):
    /// goes after the FROM clause.
    pub fn join(&self, backend: Backend, row_id: &str) -> String {
        let Index {
            documents,
            key,
            fts,
            ..
        } = self.index;
        match backend {
            Backend::Postgres => format!(" JOIN {documents} {DOC} ON {DOC}.{key} = {row_id}"),
            Backend::Sqlite => format!(
                " JOIN {documents} {DOC} ON {DOC}.{key} = {row_id} \
                 JOIN {fts} ON {fts}.rowid = {DOC}.seq"
            ),
        }
    }

    /// `FROM` the documents alone (with their FTS5 index on SQLite), for a
    /// search without other filters: the documents carry the tenant.
    pub fn from_documents(&self, backend: Backend) -> String {
        let Index { documents, fts, .. } = self.index;
        match backend {
            Backend::Postgres => format!(" FROM {documents} {DOC}"),
            Backend::Sqlite => {
                format!(" FROM {documents} {DOC} JOIN {fts} ON {fts}.rowid = {DOC}.seq")
            }
        }
    }

    /// Appends ` AND` the match condition to `query` (after its WHERE):
    /// the tenant's documents that match (the tenant leads the Postgres
    /// index, so a search reads its own company's matches only), and
    /// answers how to rank them. A text with no searchable word matches
    /// nothing.
    pub fn push_match(&self, query: Query, backend: Backend, tenant: &Tenant) -> (Query, Rank) {
        if self.text.is_empty() {
            return (query.push(" AND 1 = 0"), Rank::none());
        }
        let mut query = query.push(" AND ").push_tenant(tenant, DOC);
        let index = self.index;
        match backend {
            Backend::Postgres => {
                let tsquery = postgres_tsquery(&mut query, self.text);
                let mut condition = format!(" AND {DOC}.search_vector @@ {tsquery}");
                let mut weights = index.ts_rank_weights;
                if let Some(visible) = self.visible {
                    // The GIN index finds candidates on the whole vector;
                    // the filter drops those that match only hidden text.
                    condition.push_str(&format!(
                        " AND ts_filter({DOC}.search_vector, '{}') @@ {tsquery}",
                        visible.labels
                    ));
                    weights = visible.ts_rank_weights;
                }
                let rank = Rank {
                    expression: format!("ts_rank('{weights}', {DOC}.search_vector, {tsquery})"),
                    best_first: "DESC",
                };
                // The GIN index or the tenant's rows first: only the values
                // (a company's size, a word's frequency) tell which is cheap.
                (query.push(&condition).planned_per_call(), rank)
            }
            Backend::Sqlite => {
                let fts = index.fts;
                let expression = match self.visible {
                    Some(visible) => self.text.fts5_match_in(visible.fts_columns),
                    None => self.text.fts5_match(),
                };
                let matching = query.placeholder_for(expression);
                let rank = Rank {
                    expression: format!("bm25({fts}, {})", index.bm25_weights),
                    best_first: "ASC",
                };
                (query.push(&format!(" AND {fts} MATCH {matching}")), rank)
            }
        }
    }
}

/// How a search ranks its matches: an SQL expression over the matched
/// document (valid in the statement that matched it) and the direction
/// that puts the best match first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rank {
    pub expression: String,
    pub best_first: &'static str,
}

impl Rank {
    /// The rank of a search that matches nothing.
    pub fn none() -> Self {
        Rank {
            expression: "1".to_string(),
            best_first: "ASC",
        }
    }

    /// The ORDER BY term, best match first.
    pub fn order_term(&self) -> String {
        format!("{} {}", self.expression, self.best_first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Mode;

    fn tenant() -> Tenant {
        Tenant::new(uuid::Uuid::nil(), Mode::Test)
    }

    static INDEX: Index = Index {
        documents: "docs",
        key: "row_id",
        fts: "docs_fts",
        ts_rank_weights: "{0.1, 0.2, 0.4, 1.0}",
        bm25_weights: "10.0, 1.0",
    };
    static PUBLIC: Visible = Visible {
        labels: "{a}",
        ts_rank_weights: "{0, 0, 0, 1.0}",
        fts_columns: "title",
    };

    fn rendered(backend: Backend, visible: Option<&'static Visible>) -> (String, String) {
        let text = TextQuery::parse("reset passw");
        let search = Search {
            index: &INDEX,
            text: &text,
            visible,
        };
        let select = format!(
            "SELECT r.id FROM rows r{} WHERE",
            search.join(backend, "r.id")
        );
        let (query, rank) = search.push_match(Query::new(select).push(" TRUE"), backend, &tenant());
        (query.sql().to_string(), rank.order_term())
    }

    #[test]
    fn hidden_text_is_filtered_out_on_postgres() {
        let (sql, rank) = rendered(Backend::Postgres, Some(&PUBLIC));
        let tsquery = "(websearch_to_tsquery('english', $3) && to_tsquery('english', $4))";
        assert_eq!(
            sql,
            format!(
                "SELECT r.id FROM rows r JOIN docs search_doc ON search_doc.row_id = r.id \
                 WHERE TRUE AND search_doc.company_id = $1 AND search_doc.mode = $2 \
                 AND search_doc.search_vector @@ {tsquery} \
                 AND ts_filter(search_doc.search_vector, '{{a}}') @@ {tsquery}"
            )
        );
        assert_eq!(
            rank,
            format!("ts_rank('{{0, 0, 0, 1.0}}', search_doc.search_vector, {tsquery}) DESC")
        );
    }

    #[test]
    fn a_postgres_search_is_planned_with_its_values() {
        let text = TextQuery::parse("refund");
        let search = Search {
            index: &INDEX,
            text: &text,
            visible: None,
        };
        let (query, _) = search.push_match(
            Query::new("SELECT 1 WHERE TRUE"),
            Backend::Postgres,
            &tenant(),
        );
        assert!(query.is_planned_per_call());
    }

    #[test]
    fn hidden_columns_are_left_out_of_the_fts5_match() {
        let (sql, rank) = rendered(Backend::Sqlite, Some(&PUBLIC));
        assert_eq!(
            sql,
            "SELECT r.id FROM rows r JOIN docs search_doc ON search_doc.row_id = r.id \
             JOIN docs_fts ON docs_fts.rowid = search_doc.seq WHERE TRUE \
             AND search_doc.company_id = $1 AND search_doc.mode = $2 AND docs_fts MATCH $3"
        );
        assert_eq!(rank, "bm25(docs_fts, 10.0, 1.0) ASC");
        let (all, _) = rendered(Backend::Sqlite, None);
        assert!(all.ends_with("docs_fts MATCH $3"), "{all}");
    }

    #[test]
    fn a_text_without_words_matches_nothing() {
        let text = TextQuery::parse("*** \"");
        let search = Search {
            index: &INDEX,
            text: &text,
            visible: None,
        };
        let (query, _) = search.push_match(
            Query::new("SELECT 1 WHERE TRUE"),
            Backend::Sqlite,
            &tenant(),
        );
        assert_eq!(query.sql(), "SELECT 1 WHERE TRUE AND 1 = 0");
    }
}
