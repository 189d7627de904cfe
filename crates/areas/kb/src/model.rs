//! Knowledge-base records as the API shows them, and the inputs of the store.

use serde::Serialize;
use uuid::Uuid;

use crate::time::Timestamp;

/// A whole article (`GET /kb/articles/{id}`, create and update responses).
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Article {
    pub id: Uuid,
    pub entity_id: Uuid,
    pub category_id: Option<Uuid>,
    pub title: String,
    pub slug: String,
    pub content: String,
    pub excerpt: String,
    /// Whether `excerpt` was given (else it follows the content).
    #[serde(skip)]
    pub excerpt_custom: bool,
    pub is_published: bool,
    pub helpful_count: i64,
    pub not_helpful_count: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// An article in a list: no content.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArticleSummary {
    pub id: Uuid,
    pub title: String,
    pub slug: String,
    pub excerpt: String,
    pub category_id: Option<Uuid>,
    pub is_published: bool,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Category {
    pub id: Uuid,
    pub entity_id: Uuid,
    pub name: String,
    pub slug: String,
    /// Published articles filed under it.
    pub article_count: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// One search result (`GET /kb/search`, and the widget's search).
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub id: Uuid,
    pub title: String,
    pub slug: String,
    /// The matching passage of the content when the match is there,
    /// else the article's excerpt. Plain text.
    pub excerpt: String,
    pub category: Option<CategoryRef>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct CategoryRef {
    pub name: String,
    pub slug: String,
}

crate::text_enum! {
    /// Which articles a list shows.
    pub enum Status {
        Published = "published",
        Draft = "draft",
        All = "all",
    }
}

#[derive(Debug, Clone, Copy)]
pub struct ArticleFilter {
    pub entity_id: Option<Uuid>,
    pub category_id: Option<Uuid>,
    pub status: Status,
}

/// A validated `POST /kb/articles` body.
#[derive(Debug, Clone)]
pub struct NewArticle {
    pub entity_id: Uuid,
    pub category_id: Option<Uuid>,
    pub title: String,
    /// Explicit slug (taken → Conflict); None generates one from the title.
    pub slug: Option<String>,
    pub content: String,
    pub excerpt: Option<String>,
    pub is_published: bool,
}

/// A validated `PATCH /kb/articles/{id}` body: None leaves a field as is.
#[derive(Debug, Clone, Default)]
pub struct ArticleChanges {
    pub title: Option<String>,
    pub slug: Option<String>,
    pub content: Option<String>,
    /// `Some(None)` goes back to the excerpt derived from the content.
    pub excerpt: Option<Option<String>>,
    /// `Some(None)` makes the article uncategorised.
    pub category_id: Option<Option<Uuid>>,
    pub is_published: Option<bool>,
}

crate::text_enum! {
    /// What came of articles suggested for a question.
    pub enum Outcome {
        /// The visitor said an article answered their question.
        SelfServed = "self_served",
        /// The visitor went on to a human (a chat).
        HandedOff = "handed_off",
        /// Shown to the agent of a ticket or chat that opened with it.
        Shown = "shown",
    }
}

/// An article as a suggestion record keeps it (its title when shown).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuggestedArticle {
    pub id: Uuid,
    pub title: String,
    pub slug: String,
}

impl From<&SearchHit> for SuggestedArticle {
    fn from(hit: &SearchHit) -> Self {
        SuggestedArticle {
            id: hit.id,
            title: hit.title.clone(),
            slug: hit.slug.clone(),
        }
    }
}

/// What a suggestion record is about, besides its question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// Before any chat: the widget's visitor alone.
    Visitor,
    ChatSession(Uuid),
    Ticket(Uuid),
}

/// Articles suggested for one question, and what came of it
/// (`GET /kb/suggestions`).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    pub id: Uuid,
    pub entity_id: Uuid,
    pub question: String,
    /// Best first, as they were shown.
    pub articles: Vec<SuggestedArticle>,
    #[schema(value_type = String, example = "handed_off")]
    pub outcome: Outcome,
    /// The article the visitor said answered them (self-served only).
    pub answered_by: Option<Uuid>,
    pub chat_session_id: Option<Uuid>,
    pub ticket_id: Option<Uuid>,
    pub created_at: Timestamp,
}

/// A suggestion record to store.
#[derive(Debug, Clone)]
pub struct NewSuggestion {
    pub entity_id: Uuid,
    pub question: String,
    pub articles: Vec<SuggestedArticle>,
    pub outcome: Outcome,
    pub answered_by: Option<Uuid>,
    pub subject: Subject,
}
