//! The query plan of a statement on either backend, for the tests that
//! show a query reads an index (in order, without a sort or a scan).

use supportdesk::db::{Db, Query};

/// The plan of `query` (its text and binds) on `db`, one line per plan
/// row, each ending in a newline: SQLite's `EXPLAIN QUERY PLAN` details,
/// Postgres's `EXPLAIN` text. On Postgres each planner setting in `off`
/// (`enable_seqscan`, say) is turned off for this plan only (`SET LOCAL` in
/// a transaction that is rolled back): a test's small tables would be
/// scanned whole, so making the scan the expensive choice shows which
/// index serves. SQLite has no such settings and ignores `off`.
pub async fn plan(db: &Db, query: Query, off: &[&str]) -> String {
    let lines: Vec<String> = match db {
        Db::Sqlite(_) => {
            let rows: Vec<(i64, i64, i64, String)> = query
                .prefixed("EXPLAIN QUERY PLAN ")
                .fetch_all(db)
                .await
                .expect("plan");
            rows.into_iter().map(|(_, _, _, detail)| detail).collect()
        }
        Db::Postgres(_) => {
            // Dropped without a commit: the settings go with it.
            let mut tx = db.begin().await.expect("plan transaction");
            for setting in off {
                Query::new(format!("SET LOCAL {setting} = off"))
                    .execute(&mut tx)
                    .await
                    .expect("planner setting");
            }
            query
                .prefixed("EXPLAIN ")
                .fetch_column(&mut tx)
                .await
                .expect("plan")
        }
    };
    lines.into_iter().map(|line| line + "\n").collect()
}
