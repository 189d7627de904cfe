//! Totals that stay cheap: counting stops at a cap.

use crate::db::{Db, Query};
use crate::error::StoreError;

/// Filters no counter can answer (tags today) count matching rows up to
/// this many; beyond it the total is reported as a lower bound, so a
/// request's cost stays bounded however many rows match.
pub const COUNT_CAP: i64 = 10_000;

/// A list's total; `is_lower_bound` when counting stopped at the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Total {
    pub value: i64,
    pub is_lower_bound: bool,
}

impl Total {
    pub fn exact(value: i64) -> Total {
        Total {
            value,
            is_lower_bound: false,
        }
    }
}

/// Counts the rows `matching` (a `SELECT 1 FROM … WHERE …` without ORDER or
/// LIMIT), reading at most `cap + 1` of them.
pub async fn capped_count(db: &Db, matching: Query, cap: i64) -> Result<Total, StoreError> {
    let counted: i64 = matching
        .prefixed("SELECT COUNT(*) FROM (")
        .push(" LIMIT ")
        .push_bind(cap.saturating_add(1))
        .push(") capped")
        .fetch_scalar(db)
        .await?;
    Ok(if counted > cap {
        Total {
            value: cap,
            is_lower_bound: true,
        }
    } else {
        Total::exact(counted)
    })
}
