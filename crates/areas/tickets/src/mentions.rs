//! Mentions: an agent named with `@` in an internal note. The note's
//! transaction records whom it mentions (`store::mentions`); the route that
//! added it tells each of them on their socket after commit, and each
//! agent lists theirs (`GET /mentions`).

use serde::Serialize;
use uuid::Uuid;

use crate::time::Timestamp;

/// The most agents one note mentions; the rest of its `@` words are text.
pub const MENTIONS_MAX: usize = 20;

/// A mention as the API shows it: the note, on which ticket, by whom.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mention {
    pub id: Uuid,
    /// The agent mentioned.
    pub user_id: Uuid,
    pub ticket_id: Uuid,
    #[schema(example = "TKT-000042")]
    pub ticket_number: String,
    pub comment_id: Uuid,
    /// The note's author (null for a company key's note).
    pub author_id: Option<Uuid>,
    /// The note's text.
    pub body: String,
    pub created_at: Timestamp,
}

/// The `@` words of a note, lowercased, each once, at most
/// [`MENTIONS_MAX`]: `@ann` (the local part of an agent's email) or
/// `@ann@example.com` (the whole email). An `@` inside a word (an email
/// address in the text) mentions no one.
pub fn mention_tokens(text: &str) -> Vec<String> {
    let word = |c: &char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '@');
    let mut tokens: Vec<String> = Vec::new();
    let mut previous: Option<char> = None;
    for (at, c) in text.char_indices() {
        let starts = c == '@' && !previous.is_some_and(|p| word(&p));
        previous = Some(c);
        if !starts {
            continue;
        }
        let token: String = text[at + 1..].chars().take_while(word).collect();
        let token = token
            .trim_end_matches(['.', '-', '_', '@', '+'])
            .to_lowercase();
        if !token.is_empty() && !tokens.contains(&token) {
            tokens.push(token);
        }
        if tokens.len() == MENTIONS_MAX {
            break;
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::mention_tokens;

    #[test]
    fn names_and_emails_are_mentions_and_addresses_in_text_are_not() {
        let text = "@Ann and @bob@example.com, see vic@example.com. Thanks @ann!";
        assert_eq!(mention_tokens(text), ["ann", "bob@example.com"]);
    }
}
