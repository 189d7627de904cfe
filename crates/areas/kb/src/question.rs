//! A visitor's question made into search terms, with no model: split into
//! words, stop words and question fillers dropped, each word grouped with
//! its company's synonyms. Pure functions; the store renders the result
//! for each backend (`store::suggest`).

use std::collections::HashSet;

/// Words beyond this are ignored (a question, not a document).
pub const MAX_WORDS: usize = 16;
/// Longer "words" are noise (pasted tokens, hashes) and are dropped.
pub const MAX_WORD_CHARS: usize = 64;

/// The words of `text`, lower-cased: runs of letters and digits, in order.
/// An apostrophe inside a word is dropped with what follows it
/// ("can't" is "can", "order's" is "order"), so no stray "t" or "s" is left.
pub fn tokenise(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || (!c.is_alphanumeric() && c != '\'' && c != '’'))
        .filter_map(|raw| {
            let word = raw.split(['\'', '’']).find(|w| !w.is_empty())?;
            (!word.is_empty() && word.chars().count() <= MAX_WORD_CHARS)
                .then(|| word.to_lowercase())
        })
        .collect()
}

/// English stop words (Postgres's `english` list), so both backends drop
/// the same words, plus what questions to a help desk are padded with
/// ("please", "help", "want"), which name no subject.
const STOP_WORDS: &str = "\
    i me my myself we our ours ourselves you your yours yourself yourselves he him his \
    himself she her hers herself it its itself they them their theirs themselves what \
    which who whom this that these those am is are was were be been being have has had \
    having do does did doing a an the and but if or because as until while of at by for \
    with about against between into through during before after above below to from up \
    down in out on off over under again further then once here there when where why how \
    all any both each few more most other some such no nor not only own same so than \
    too very s t can will just don should now \
    could would may might must shall im ive id cannot cant dont doesnt didnt isnt wont \
    please pls help hi hello hey thanks thank anyone someone something anything \
    want wanted need needs know tell way able possible get got also still yet \
    question problem issue";

/// Whether `word` (lower-case) names nothing a help article is about.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.split_ascii_whitespace().any(|w| w == word)
}

/// Whether `text` holds a word that is not a stop word.
pub fn names_something(text: &str) -> bool {
    tokenise(text).iter().any(|w| !is_stop_word(w))
}

/// A light English stem for comparing a question's word with a synonym
/// (the backends stem again when they match): plural and -ing/-ed endings.
pub fn stem(word: &str) -> String {
    let chars = word.chars().count();
    let cut = |suffix: &str| word[..word.len() - suffix.len()].to_string();
    if chars > 4 && word.ends_with("ies") {
        format!("{}y", cut("ies"))
    } else if chars > 5 && word.ends_with("ing") {
        cut("ing")
    } else if chars > 4 && word.ends_with("ed") {
        cut("ed")
    } else if chars > 3 && word.ends_with('s') && !word.ends_with("ss") {
        cut("s")
    } else {
        word.to_string()
    }
}

/// A company's synonym groups: each group lists terms (a word or a few
/// words) that mean the same to its customers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Synonyms {
    groups: Vec<Vec<Term>>,
}

/// One term to match: its words must all occur (a phrase's words, in any
/// order); the last one may be matched as a prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Term {
    pub words: Vec<String>,
    pub prefix: bool,
}

impl Term {
    fn of(text: &str) -> Option<Term> {
        let words: Vec<String> = tokenise(text)
            .into_iter()
            .filter(|w| !is_stop_word(w))
            .collect();
        (!words.is_empty()).then_some(Term {
            words,
            prefix: false,
        })
    }

    fn stems(&self) -> Vec<String> {
        self.words.iter().map(|w| stem(w)).collect()
    }
}

impl Synonyms {
    /// The groups as stored (each term as written); terms made only of
    /// stop words are left out, and groups left with fewer than two terms.
    pub fn new(groups: &[Vec<String>]) -> Synonyms {
        let groups = groups
            .iter()
            .map(|group| group.iter().filter_map(|t| Term::of(t)).collect::<Vec<_>>())
            .filter(|terms| terms.len() >= 2)
            .collect();
        Synonyms { groups }
    }

    /// The terms of every group holding a term with these stems, the
    /// longest phrase first, itself left out.
    fn alternatives(&self, stems: &[String]) -> Vec<Term> {
        let mut out: Vec<Term> = Vec::new();
        for group in &self.groups {
            if group.iter().any(|t| t.stems() == stems) {
                for term in group {
                    if term.stems() != stems && !out.contains(term) {
                        out.push(term.clone());
                    }
                }
            }
        }
        out
    }

    /// The longest phrase of any group (in words), at most `MAX_WORDS`.
    fn longest(&self) -> usize {
        self.groups
            .iter()
            .flatten()
            .map(|t| t.words.len())
            .max()
            .unwrap_or(1)
            .min(MAX_WORDS)
    }
}

/// What a question asks about: one group per word (or synonym phrase) it
/// holds, each matched by any of its terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub groups: Vec<Vec<Term>>,
}

impl Question {
    /// Nothing searchable was left (only punctuation or stop words).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Every term of every group, once each.
    pub fn all_terms(&self) -> Vec<&Term> {
        let mut seen = HashSet::new();
        self.groups
            .iter()
            .flatten()
            .filter(|t| seen.insert(*t))
            .collect()
    }
}

/// The question `text` as search terms: stop words dropped; a run of
/// words that is a synonym phrase of the company ("money back") is one
/// group with its synonyms; every other word a group of itself and its
/// synonyms. The question's last word also matches as a prefix (the
/// visitor may still be typing it) unless `text` ends in a space or
/// punctuation.
pub fn expand(text: &str, synonyms: &Synonyms) -> Question {
    let words: Vec<String> = tokenise(text)
        .into_iter()
        .filter(|w| !is_stop_word(w))
        .take(MAX_WORDS)
        .collect();
    let typing = text.chars().last().is_some_and(char::is_alphanumeric);
    let longest = synonyms.longest();
    let mut groups = Vec::new();
    let mut at = 0;
    while at < words.len() {
        // The longest run from here that a synonym group names, else the word.
        let (taken, alternatives) = (1..=longest.min(words.len() - at))
            .rev()
            .map(|n| {
                let stems: Vec<String> = words[at..at + n].iter().map(|w| stem(w)).collect();
                (n, synonyms.alternatives(&stems))
            })
            .find(|(n, alternatives)| *n == 1 || !alternatives.is_empty())
            .unwrap_or((1, Vec::new()));
        let last = at + taken == words.len();
        let own = Term {
            words: words[at..at + taken].to_vec(),
            prefix: typing && last,
        };
        let mut group = vec![own];
        group.extend(alternatives);
        groups.push(group);
        at += taken;
    }
    Question { groups }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(term: &Term) -> String {
        term.words.join(" ")
    }

    fn groups(q: &Question) -> Vec<Vec<String>> {
        q.groups
            .iter()
            .map(|g| g.iter().map(words).collect())
            .collect()
    }

    fn synonyms(groups: &[&[&str]]) -> Synonyms {
        let owned: Vec<Vec<String>> = groups
            .iter()
            .map(|g| g.iter().map(|t| t.to_string()).collect())
            .collect();
        Synonyms::new(&owned)
    }

    #[test]
    fn tokenise_lowercases_and_splits_on_punctuation() {
        assert_eq!(
            tokenise("Where's my ORDER #1234? (shipped-yesterday)"),
            vec!["where", "my", "order", "1234", "shipped", "yesterday"]
        );
        assert_eq!(
            tokenise("can't won’t 'quoted'"),
            vec!["can", "won", "quoted"]
        );
        assert!(tokenise("*** ((( \"").is_empty());
    }

    #[test]
    fn stop_words_and_fillers_are_dropped() {
        let q = expand(
            "Hi, how can I please get my teapot repaired?",
            &Synonyms::default(),
        );
        assert_eq!(groups(&q), vec![vec!["teapot"], vec!["repaired"]]);
        assert!(expand("how do I do it?", &Synonyms::default()).is_empty());
    }

    #[test]
    fn a_word_gains_its_synonyms() {
        let syn = synonyms(&[&["refund", "money back", "reimbursement"]]);
        let q = expand("refunds for a cracked lid", &syn);
        // "refund" is the visitor's own word by its stem: not repeated.
        assert_eq!(
            groups(&q),
            vec![
                vec!["refunds", "money back", "reimbursement"],
                vec!["cracked"],
                vec!["lid"],
            ]
        );
    }

    #[test]
    fn a_phrase_in_the_question_is_one_group() {
        let syn = synonyms(&[&["refund", "money back"]]);
        let q = expand("can I get my money back", &syn);
        assert_eq!(groups(&q), vec![vec!["money back", "refund"]]);
    }

    #[test]
    fn only_a_last_word_still_being_typed_is_a_prefix() {
        let q = expand("descaling kett", &Synonyms::default());
        let prefixes: Vec<bool> = q.groups.iter().map(|g| g[0].prefix).collect();
        assert_eq!(prefixes, vec![false, true]);
        let done = expand("descaling kettle?", &Synonyms::default());
        assert!(done.groups.iter().all(|g| !g[0].prefix));
    }

    #[test]
    fn stems_compare_plurals_and_endings() {
        assert_eq!(stem("deliveries"), "delivery");
        assert_eq!(stem("parcels"), "parcel");
        assert_eq!(stem("glass"), "glass");
        assert_eq!(stem("shipping"), "shipp");
        assert_eq!(stem("shipped"), "shipp");
    }

    #[test]
    fn groups_of_stop_words_only_are_ignored() {
        let syn = synonyms(&[&["the", "refund"], &["lid", "cover", "cap"]]);
        assert_eq!(groups(&expand("refund", &syn)), vec![vec!["refund"]]);
        assert_eq!(all(&expand("cap", &syn)), vec!["cap", "lid", "cover"]);
    }

    fn all(q: &Question) -> Vec<String> {
        q.all_terms().into_iter().map(words).collect()
    }
}
