//! Looking for a person's words everywhere the desk stores bytes: every
//! column of every table the database's catalog lists (text, JSON, bytes
//! and, on Postgres, search vectors, each read as text), every file under
//! the data directory (the SQLite file too), and every object of the S3
//! bucket.

use crate::support::{Backend, TestApp};

/// Where `needle` (lower-case) was found: `table.column` or a path.
pub async fn database(app: &TestApp, needle: &str) -> Vec<String> {
    let pattern = format!("%{needle}%");
    let mut found = Vec::new();
    for (table, column, as_text) in columns(app).await {
        let sql = format!("SELECT count(*) FROM \"{table}\" WHERE lower({as_text}) LIKE $1");
        let count: i64 = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(&pattern)
            .fetch_one(c)
            .await
            .unwrap_or_else(|e| panic!("scanning {table}.{column}: {e}")));
        if count > 0 {
            found.push(format!("{table}.{column}"));
        }
    }
    found
}

/// Every column that can hold text, with the expression reading it as
/// text.
async fn columns(app: &TestApp) -> Vec<(String, String, String)> {
    match app.backend {
        Backend::Sqlite => {
            let tables: Vec<String> = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .fetch_all(c)
                .await
                .expect("tables"));
            let mut columns = Vec::new();
            for table in tables {
                let sql = format!("SELECT name, type FROM pragma_table_info('{table}')");
                let listed: Vec<(String, String)> = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .fetch_all(c)
                    .await
                    .expect("columns"));
                for (column, kind) in listed {
                    let kind = kind.to_uppercase();
                    // Untyped columns are FTS5's (their text).
                    if kind.contains("TEXT") || kind.contains("BLOB") || kind.is_empty() {
                        let as_text = format!("CAST(\"{column}\" AS TEXT)");
                        columns.push((table.clone(), column, as_text));
                    }
                }
            }
            columns
        }
        Backend::Postgres => {
            let listed: Vec<(String, String, String)> = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(
                "SELECT table_name::text, column_name::text, data_type::text \
                 FROM information_schema.columns WHERE table_schema = current_schema() \
                 ORDER BY table_name, column_name")
                .fetch_all(c)
                .await
                .expect("columns"));
            listed
                .into_iter()
                .filter_map(|(table, column, kind)| {
                    let as_text = match kind.as_str() {
                        "text" | "character varying" | "character" => format!("\"{column}\""),
                        "json" | "jsonb" | "tsvector" => format!("\"{column}\"::text"),
                        "bytea" => format!("encode(\"{column}\", 'escape')"),
                        _ => return None,
                    };
                    Some((table, column, as_text))
                })
                .collect()
        }
    }
}

/// The files under the data directory holding `needle` (case ignored).
pub fn data_dir(app: &TestApp, needle: &str) -> Vec<String> {
    fn walk(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&app.config.data_dir, &mut files);
    files
        .into_iter()
        .filter(|path| {
            let bytes = std::fs::read(path).unwrap_or_default();
            contains_ignoring_case(&bytes, needle)
        })
        .map(|path| path.display().to_string())
        .collect()
}

/// Whether `haystack` holds `needle` (ASCII, lower-case), case ignored.
pub fn contains_ignoring_case(haystack: &[u8], needle: &str) -> bool {
    let needle = needle.as_bytes();
    haystack
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}
