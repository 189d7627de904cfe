//! Walking a company's chain: from its start (genesis, or the checkpoint
//! the retention pass left) to its head, each entry must carry the next
//! number, follow the hash before it and hash to what it says. The first
//! entry that does not is named.

use uuid::Uuid;

use crate::db::{Db, Query};
use crate::error::StoreError;

use super::chain::{CHAIN_COLUMNS, ChainRow};

/// Entries read per statement while walking.
const PAGE: i64 = 1_000;

/// What the walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every sealed entry from the start through entry `up_to` is as it
    /// was sealed (0: nothing sealed yet). `from` is the first entry kept.
    Whole { from: i64, up_to: i64 },
    /// Entry `seq` is not as it was sealed.
    Broken {
        seq: i64,
        /// The row standing at `seq`, when there is one.
        id: Option<Uuid>,
        problem: Problem,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Its content differs from what was hashed.
    Changed,
    /// No entry has this number (removed).
    Removed,
    /// It does not follow the entry before it (moved, or one before it
    /// removed and the rest renumbered).
    Reordered,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Whole { from, up_to } if *up_to == 0 => {
                write!(f, "whole: no entry sealed yet (next is {from})")
            }
            Verdict::Whole { from, up_to } => {
                write!(f, "whole from entry {from} up to entry {up_to}")
            }
            Verdict::Broken { seq, id, problem } => {
                let what = match problem {
                    Problem::Changed => "was changed",
                    Problem::Removed => "was removed",
                    Problem::Reordered => {
                        "does not follow the entry before it (reordered, or one before it removed)"
                    }
                };
                match id {
                    Some(id) => write!(f, "broken at entry {seq} ({id}): it {what}"),
                    None => write!(f, "broken at entry {seq}: it {what}"),
                }
            }
        }
    }
}

/// Walks company `company_id`'s chain.
pub async fn verify(db: &Db, company_id: Uuid) -> Result<Verdict, StoreError> {
    let chain: Option<(i64, String, i64, String)> = Query::new(
        "SELECT start_seq, start_hash, head_seq, head_hash FROM audit_chains WHERE company_id = $1",
    )
    .bind(company_id)
    .fetch_optional(db)
    .await?;
    let Some((start, start_hash, head, head_hash)) = chain else {
        return Ok(Verdict::Whole { from: 1, up_to: 0 });
    };
    let (mut expected, mut prev) = (start, start_hash);
    loop {
        let rows: Vec<ChainRow> = Query::new(format!(
            "SELECT {CHAIN_COLUMNS} FROM audit_entries WHERE company_id = $1 \
             AND seq IS NOT NULL AND seq >= $2 ORDER BY seq LIMIT $3"
        ))
        .bind(company_id)
        .bind(expected)
        .bind(PAGE)
        .fetch_all(db)
        .await?;
        let last_page = (rows.len() as i64) < PAGE;
        for row in rows {
            let seq = row.seq.unwrap_or(expected);
            if seq > expected {
                return Ok(broken(expected, None, Problem::Removed));
            }
            if row.hash_after(&prev, seq).as_str() != row.hash.as_deref().unwrap_or_default() {
                let problem = if row.prev_hash.as_deref() == Some(prev.as_str()) {
                    Problem::Changed
                } else {
                    Problem::Reordered
                };
                return Ok(broken(seq, Some(row.id), problem));
            }
            prev = row.hash.unwrap_or_default();
            expected += 1;
        }
        if last_page {
            break;
        }
    }
    // The head names the last entry sealed: an entry removed from the end
    // leaves the walk short of it.
    if expected <= head {
        return Ok(broken(expected, None, Problem::Removed));
    }
    if prev != head_hash {
        return Ok(broken(head, None, Problem::Changed));
    }
    Ok(Verdict::Whole {
        from: start,
        up_to: head,
    })
}

fn broken(seq: i64, id: Option<Uuid>, problem: Problem) -> Verdict {
    Verdict::Broken { seq, id, problem }
}
