//! The pgbench scripts of bench/sql made runnable for this database.

use anyhow::Context;

use super::kb_search::SEARCH_TERMS;

/// `'a', 'b'` for an SQL array literal.
fn sql_list(items: impl Iterator<Item = String>) -> String {
    items
        .map(|i| format!("'{}'", i.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A pgbench script from bench/sql made runnable: `--@if-table T ` lines
/// kept (without the marker) when table T exists, dropped otherwise; the
/// search terms filled in.
pub(super) async fn prepare_script(
    database_url: &str,
    source: &std::path::Path,
    dest: &std::path::Path,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(source).with_context(|| format!("reading {}", source.display()))?;
    let mut out = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--@if-table ") {
            let (table, statement) = rest.split_once(' ').unwrap_or((rest, ""));
            if crate::setup::table_exists(database_url, table).await? {
                out.push_str(statement);
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    let words = sql_list(
        SEARCH_TERMS
            .iter()
            .map(|t| t.rsplit_once(' ').map_or("", |(w, _)| w).to_string()),
    );
    let prefixes = sql_list(
        SEARCH_TERMS
            .iter()
            .map(|t| format!("{}:*", t.rsplit(' ').next().unwrap_or(t))),
    );
    let out = out
        .replace("{{WORDS}}", &words)
        .replace("{{PREFIXES}}", &prefixes);
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(dest, out)?;
    Ok(())
}
