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
