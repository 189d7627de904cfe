//! What erasing a person needs in every area: the words that name them
//! (their name, emails, phone, external ids), found in text case ignored
//! and replaced by one marker, and the SQL condition that finds rows
//! mentioning any of them. Each area erases its own rows with these.

use crate::db::{Backend, Query, Tx};
use crate::error::StoreError;

/// What stands where a person's words were.
pub const MARKER: &str = "[erased]";

/// Words shorter than this are not looked for: a one- or two-letter name
/// would match half of every text.
const SHORTEST: usize = 3;

/// The words that name one person, lower-cased, longest first (so a name
/// is replaced before a part of it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Person {
    words: Vec<String>,
}

impl Person {
    pub fn new<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> Person {
        let mut words: Vec<String> = words
            .into_iter()
            .map(|word| word.as_ref().trim().to_lowercase())
            .filter(|word| word.chars().count() >= SHORTEST)
            .collect();
        words.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        words.dedup();
        Person { words }
    }

    pub fn words(&self) -> &[String] {
        &self.words
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// `text` with every word of the person replaced by [`MARKER`], case
    /// ignored; None when it names none of them.
    pub fn scrub(&self, text: &str) -> Option<String> {
        let mut out = text.to_string();
        let mut changed = false;
        for word in &self.words {
            // Past each marker put in, so a word the marker contains or
            // makes cannot match again.
            let mut from = 0;
            while let Some((start, end)) = find_ignoring_case(&out[from..], word) {
                out.replace_range(from + start..from + end, MARKER);
                from += start + MARKER.len();
                changed = true;
            }
        }
        changed.then_some(out)
    }

    /// `query` followed by a condition true when the text of `column`
    /// (any SQL text expression) names a word of the person; false when
    /// the person has no words.
    pub fn push_mentions(&self, mut query: Query, column: &str) -> Query {
        if self.words.is_empty() {
            return query.push("1 = 0");
        }
        let mut terms = Vec::with_capacity(self.words.len());
        for word in &self.words {
            let escaped = word
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            let pattern = query.placeholder_for(format!("%{escaped}%"));
            terms.push(format!("lower({column}) LIKE {pattern} ESCAPE '\\'"));
        }
        query.push(&format!("({})", terms.join(" OR ")))
    }
}

/// A JSON column as text on `backend` (Postgres keeps JSONB).
pub fn json_text(backend: Backend, column: &str) -> String {
    match backend {
        Backend::Postgres => format!("{column}::text"),
        Backend::Sqlite => column.to_string(),
    }
}

/// The byte range of the first occurrence of `word` (lower-case) in
/// `text`, case ignored.
fn find_ignoring_case(text: &str, word: &str) -> Option<(usize, usize)> {
    let first = word.chars().next()?;
    for (start, c) in text.char_indices() {
        if !c.to_lowercase().eq(first.to_lowercase()) {
            continue;
        }
        let mut end = start;
        let mut rest = word.chars();
        let mut matched = true;
        for c in text[start..].chars() {
            match rest.next() {
                None => break,
                Some(expected) => {
                    if c.to_lowercase().eq(expected.to_lowercase()) {
                        end += c.len_utf8();
                    } else {
                        matched = false;
                        break;
                    }
                }
            }
        }
        if matched && rest.next().is_none() {
            return Some((start, end));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_replaces_every_word_case_ignored() {
        let kim = Person::new(["Kim Lee", "kim@shop.example"]);
        assert_eq!(
            kim.scrub("Hello KIM LEE, we wrote to Kim@Shop.Example")
                .as_deref(),
            Some("Hello [erased], we wrote to [erased]")
        );
    }

    #[test]
    fn scrub_leaves_other_text() {
        let kim = Person::new(["Kim Lee"]);
        assert_eq!(kim.scrub("Hello Sam"), None);
    }
}

/// A column a person's words may stand in: text, or JSON (JSONB on
/// Postgres, text on SQLite), rewritten as text either way.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub json: bool,
}

impl Column {
    pub const fn text(name: &'static str) -> Column {
        Column { name, json: false }
    }

    pub const fn json(name: &'static str) -> Column {
        Column { name, json: true }
    }
}

/// Rewrites, in `tx`, the `columns` of the rows of `table` whose
/// `filter` column is one of `ids`, wherever they name `person`: each such
/// value with the person's words replaced by [`MARKER`]. `id` is the
/// table's key. The area that owns `table` names it; answers how many
/// values changed.
pub async fn scrub_rows(
    tx: &mut Tx,
    table: &str,
    id: &str,
    filter: &str,
    ids: &[uuid::Uuid],
    columns: &[Column],
    person: &Person,
) -> Result<u64, StoreError> {
    if ids.is_empty() || person.is_empty() {
        return Ok(0);
    }
    let backend = tx.backend();
    let mut changed = 0;
    for column in columns {
        let text = if column.json {
            json_text(backend, column.name)
        } else {
            column.name.to_string()
        };
        let query = Query::new(format!(
            "SELECT {id}, {text} FROM {table} WHERE {filter} IN "
        ))
        .push_bind_list(ids.iter().copied())
        .push(" AND ");
        let rows: Vec<(uuid::Uuid, Option<String>)> = person
            .push_mentions(query, &format!("coalesce({text}, '')"))
            .fetch_all(&mut *tx)
            .await?;
        let value = match (column.json, backend) {
            (true, Backend::Postgres) => "CAST($2 AS JSONB)",
            _ => "$2",
        };
        for (key, stored) in rows {
            let Some(scrubbed) = stored.as_deref().and_then(|text| person.scrub(text)) else {
                continue;
            };
            Query::new(format!(
                "UPDATE {table} SET {} = {value} WHERE {id} = $1",
                column.name
            ))
            .bind(key)
            .bind(scrubbed)
            .execute(&mut *tx)
            .await?;
            changed += 1;
        }
    }
    Ok(changed)
}
