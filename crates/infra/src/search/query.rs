//! A search text reduced to plain words that both backends treat alike,
//! and rendered for each: Postgres `websearch_to_tsquery` plus a prefix
//! `to_tsquery` term, SQLite an FTS5 MATCH expression. Only letters
//! and digits survive, so no input can be FTS syntax (or a 500).

/// Words beyond this are ignored (a query is a question, not a document).
pub const MAX_WORDS: usize = 12;
/// Longer "words" are noise (pasted tokens, hashes) and are dropped.
pub const MAX_WORD_CHARS: usize = 64;

/// The words of a query: every word must match (stemmed), and the last one
/// also matches as a prefix, so a widget can search as the visitor types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextQuery {
    /// All words but the last, lower-cased, stop words removed.
    pub words: Vec<String>,
    /// The last word, matched as a prefix.
    pub prefix: Option<String>,
}

impl TextQuery {
    pub fn parse(text: &str) -> TextQuery {
        let mut words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty() && w.chars().count() <= MAX_WORD_CHARS)
            .map(str::to_lowercase)
            .filter(|w| !is_stop_word(w))
            .take(MAX_WORDS)
            .collect();
        let prefix = words.pop();
        TextQuery { words, prefix }
    }

    /// Nothing searchable was left (only punctuation or stop words).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.prefix.is_none()
    }

    /// The text for `websearch_to_tsquery('english', …)`: the whole words.
    pub fn postgres_words(&self) -> Option<String> {
        (!self.words.is_empty()).then(|| self.words.join(" "))
    }

    /// The text for `to_tsquery('english', …)`: the last word as a prefix
    /// (`word:*`; Postgres stems it first, so `passwords:*` is `password:*`).
    pub fn postgres_prefix(&self) -> Option<String> {
        self.prefix.as_ref().map(|p| format!("{p}:*"))
    }

    /// An FTS5 MATCH expression: each word a quoted string (never an
    /// operator), implicitly AND-ed, the last one with `*`.
    pub fn fts5_match(&self) -> String {
        let quoted = |w: &str| format!("\"{}\"", w.replace('"', "\"\""));
        let mut parts: Vec<String> = self.words.iter().map(|w| quoted(w)).collect();
        if let Some(prefix) = &self.prefix {
            parts.push(format!("{}*", quoted(prefix)));
        }
        parts.join(" ")
    }

    /// [`Self::fts5_match`] matched only in `columns` (FTS5 column names,
    /// space-separated).
    pub fn fts5_match_in(&self, columns: &str) -> String {
        format!("{{{columns}}} : ({})", self.fts5_match())
    }
}

/// Postgres's `english` stop words (`tsearch_data/english.stop`). Postgres
/// drops them from queries; FTS5 indexes every word, so they are dropped
/// here for both, and "how do I reset my password" means the same on each.
const STOP_WORDS: &str = "\
    i me my myself we our ours ourselves you your yours yourself yourselves he him his \
    himself she her hers herself it its itself they them their theirs themselves what \
    which who whom this that these those am is are was were be been being have has had \
    having do does did doing a an the and but if or because as until while of at by for \
    with about against between into through during before after above below to from up \
    down in out on off over under again further then once here there when where why how \
    all any both each few more most other some such no nor not only own same so than \
    too very s t can will just don should now";

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.split_ascii_whitespace().any(|w| w == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_words_drops_syntax_and_stop_words() {
        let q = TextQuery::parse("How do I reset my PASSW");
        assert_eq!(q.words, vec!["reset"]);
        assert_eq!(q.prefix.as_deref(), Some("passw"));
        assert_eq!(q.postgres_words().as_deref(), Some("reset"));
        assert_eq!(q.postgres_prefix().as_deref(), Some("passw:*"));
        assert_eq!(q.fts5_match(), "\"reset\" \"passw\"*");
    }

    #[test]
    fn fts_syntax_never_survives() {
        let q = TextQuery::parse("\"unbalanced AND (NEAR* -x) OR title:y ^z'");
        assert_eq!(
            q.fts5_match(),
            "\"unbalanced\" \"near\" \"x\" \"title\" \"y\" \"z\"*"
        );
        assert!(TextQuery::parse("*** ((( \"").is_empty());
        assert!(TextQuery::parse("the of and").is_empty());
    }

    #[test]
    fn a_column_filter_wraps_the_whole_expression() {
        let q = TextQuery::parse("refund pend");
        assert_eq!(
            q.fts5_match_in("subject description"),
            "{subject description} : (\"refund\" \"pend\"*)"
        );
    }

    #[test]
    fn a_single_word_is_a_prefix() {
        let q = TextQuery::parse("  billing  ");
        assert!(q.words.is_empty());
        assert_eq!(q.postgres_words(), None);
        assert_eq!(q.fts5_match(), "\"billing\"*");
    }
}
