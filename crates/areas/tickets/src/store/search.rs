//! Where ticket search looks: the documents that 0013_search.sql keeps in
//! step with tickets and comments, and the part a caller may match.

use crate::model::TicketSearch;
use crate::search::{Index, Search, Visible};

/// The ticket search documents: subject, description, public comments and
/// internal notes, ranked in that order (weights A to D on Postgres).
static TICKET_INDEX: Index = Index {
    documents: "ticket_search",
    key: "ticket_id",
    fts: "ticket_search_fts",
    ts_rank_weights: "{0.1, 0.2, 0.4, 1.0}",
    bm25_weights: "10.0, 4.0, 2.0, 1.0",
};

/// What a caller without `tickets:write` may match: all but internal notes.
static PUBLIC_TEXT: Visible = Visible {
    labels: "{a,b,c}",
    ts_rank_weights: "{0, 0.2, 0.4, 1.0}",
    fts_columns: "subject description public_text",
};

/// The search of `GET /tickets?q=`, internal notes hidden unless the
/// caller may see them.
pub(super) fn of(search: &TicketSearch) -> Search<'_> {
    Search {
        index: &TICKET_INDEX,
        text: &search.text,
        visible: (!search.include_internal).then_some(&PUBLIC_TEXT),
    }
}

/// Writes again the comment text of ticket `id`'s search document, from its
/// comments as they now are (oldest first, capped as the triggers cap it):
/// what a merge, its undo or a split does after moving comments between
/// tickets, which the insert triggers do not follow.
pub(super) async fn reindex_comments(
    tx: &mut crate::db::Tx,
    id: uuid::Uuid,
) -> Result<(), crate::error::StoreError> {
    let sql = match tx.backend() {
        crate::db::Backend::Postgres => {
            "UPDATE ticket_search SET \
             public_text = left(coalesce((SELECT string_agg(c.body, ' ' ORDER BY c.created_at, \
             c.id) FROM ticket_comments c WHERE c.ticket_id = $1 AND NOT c.is_internal), ''), \
             100000), \
             internal_text = left(coalesce((SELECT string_agg(c.body, ' ' ORDER BY \
             c.created_at, c.id) FROM ticket_comments c WHERE c.ticket_id = $1 \
             AND c.is_internal), ''), 100000) \
             WHERE ticket_id = $1"
        }
        crate::db::Backend::Sqlite => {
            "UPDATE ticket_search SET \
             public_text = substr(coalesce((SELECT group_concat(body, ' ') FROM (SELECT c.body \
             FROM ticket_comments c WHERE c.ticket_id = $1 AND NOT c.is_internal \
             ORDER BY c.created_at, c.id)), ''), 1, 100000), \
             internal_text = substr(coalesce((SELECT group_concat(body, ' ') FROM (SELECT \
             c.body FROM ticket_comments c WHERE c.ticket_id = $1 AND c.is_internal \
             ORDER BY c.created_at, c.id)), ''), 1, 100000) \
             WHERE ticket_id = $1"
        }
    };
    crate::db::Query::new(sql).bind(id).execute(tx).await
}
