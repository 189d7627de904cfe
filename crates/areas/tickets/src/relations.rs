//! How tickets relate to each other: links (related, duplicates, parent and
//! child, and those a merge or a split leaves). A link is one row read from
//! both of its tickets, each side with its own kind (`parent_of` on one
//! side is `child_of` on the other). The events of linking, snoozing,
//! merging and splitting are in `relation_events`.

use serde::Serialize;
use uuid::Uuid;

use crate::time::Timestamp;

crate::text_enum! {
    /// A link as one of its tickets sees it.
    pub enum LinkKind {
        Related = "related",
        DuplicateOf = "duplicate_of",
        DuplicatedBy = "duplicated_by",
        ParentOf = "parent_of",
        ChildOf = "child_of",
        MergedInto = "merged_into",
        MergedFrom = "merged_from",
        SplitFrom = "split_from",
        SplitInto = "split_into",
        /// A new email ticket of a contact suggested as merged into their
        /// open case (case grouping); the merge removes it.
        SuggestedMergeInto = "suggested_merge_into",
        SuggestedMergeFrom = "suggested_merge_from",
    }
}

crate::text_enum! {
    /// The kinds a client links tickets with (the others are made by a
    /// merge, a split, or are the far side of one of these).
    pub enum NewLinkKind {
        Related = "related",
        DuplicateOf = "duplicate_of",
        ParentOf = "parent_of",
        ChildOf = "child_of",
    }
}

/// A link's row: stored once, from the ticket whose side reads the stored
/// kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredLink {
    pub from: Uuid,
    pub to: Uuid,
    pub kind: LinkKind,
}

impl LinkKind {
    /// How the ticket at the other end of the link sees it.
    pub fn inverse(self) -> LinkKind {
        match self {
            LinkKind::Related => LinkKind::Related,
            LinkKind::DuplicateOf => LinkKind::DuplicatedBy,
            LinkKind::DuplicatedBy => LinkKind::DuplicateOf,
            LinkKind::ParentOf => LinkKind::ChildOf,
            LinkKind::ChildOf => LinkKind::ParentOf,
            LinkKind::MergedInto => LinkKind::MergedFrom,
            LinkKind::MergedFrom => LinkKind::MergedInto,
            LinkKind::SplitFrom => LinkKind::SplitInto,
            LinkKind::SplitInto => LinkKind::SplitFrom,
            LinkKind::SuggestedMergeInto => LinkKind::SuggestedMergeFrom,
            LinkKind::SuggestedMergeFrom => LinkKind::SuggestedMergeInto,
        }
    }

    /// Whether rows are stored with this kind (else with its inverse,
    /// from the other ticket).
    fn is_stored(self) -> bool {
        matches!(
            self,
            LinkKind::Related
                | LinkKind::DuplicateOf
                | LinkKind::ParentOf
                | LinkKind::MergedInto
                | LinkKind::SplitFrom
                | LinkKind::SuggestedMergeInto
        )
    }

    /// The row of a link `ticket` sees with this kind towards `other`: a
    /// `related` link from the smaller id, so that it is one row whichever
    /// side made it.
    pub fn stored(self, ticket: Uuid, other: Uuid) -> StoredLink {
        match self {
            LinkKind::Related => StoredLink {
                from: ticket.min(other),
                to: ticket.max(other),
                kind: self,
            },
            kind if kind.is_stored() => StoredLink {
                from: ticket,
                to: other,
                kind,
            },
            kind => StoredLink {
                from: other,
                to: ticket,
                kind: kind.inverse(),
            },
        }
    }
}

impl From<NewLinkKind> for LinkKind {
    fn from(kind: NewLinkKind) -> Self {
        match kind {
            NewLinkKind::Related => LinkKind::Related,
            NewLinkKind::DuplicateOf => LinkKind::DuplicateOf,
            NewLinkKind::ParentOf => LinkKind::ParentOf,
            NewLinkKind::ChildOf => LinkKind::ChildOf,
        }
    }
}

/// One link of a ticket, as that ticket sees it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketLink {
    /// The ticket at the other end.
    pub ticket_id: Uuid,
    /// Its number (`TKT-000042`).
    pub ticket_number: String,
    /// `related`, `duplicate_of`, `duplicated_by`, `parent_of`, `child_of`,
    /// `merged_into`, `merged_from`, `split_from`, `split_into`,
    /// `suggested_merge_into` (this ticket may be merged into the other) or
    /// `suggested_merge_from`: what the other ticket is to this one.
    #[schema(value_type = String)]
    pub kind: LinkKind,
    pub created_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_stored_from_one_side() {
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        for kind in LinkKind::ALL {
            let row = kind.stored(a, b);
            assert!(row.kind.is_stored(), "{kind}");
            assert_eq!(row, kind.inverse().stored(b, a), "{kind}");
        }
    }
}
