//! What a rating is, and the rules a submission must pass.

use std::time::Duration;

use serde::Serialize;
use uuid::Uuid;

use crate::error::FieldError;
use crate::event_catalogue::{EventName, EventPayload};
use crate::time::Timestamp;
use crate::validate::problem;

pub use entities::csat_mode::{CsatMode, csat_mode_schema};

/// How long after its first submission a rating may still be changed.
pub const CHANGE_WINDOW: Duration = Duration::from_secs(7 * 24 * 3600);
/// The longest comment, in characters.
pub const COMMENT_MAX: usize = 2000;
pub const SCORE_MIN: i64 = 1;
pub const SCORE_MAX: i64 = 5;

/// What is rated: a chat session or a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatingTarget {
    Chat(Uuid),
    Ticket(Uuid),
}

impl RatingTarget {
    pub fn id(self) -> Uuid {
        match self {
            RatingTarget::Chat(id) | RatingTarget::Ticket(id) => id,
        }
    }
}

/// One visitor's rating of one closed chat or resolved ticket.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rating {
    pub id: Uuid,
    pub entity_id: Uuid,
    /// The rated chat session (null when a ticket was rated).
    pub chat_session_id: Option<Uuid>,
    /// The rated ticket (null when a chat was rated).
    pub ticket_id: Option<Uuid>,
    /// 1 (very unhappy) to 5 (very happy).
    #[schema(minimum = 1, maximum = 5)]
    pub score: i64,
    #[schema(max_length = 2000)]
    pub comment: Option<String>,
    /// The agent who handled the chat or ticket: its assignee when the
    /// visitor first rated it (null when it had none).
    pub agent_id: Option<Uuid>,
    /// That agent's name, as the user is named now.
    pub agent_name: Option<String>,
    /// The first submission; the rating may change until 7 days after it.
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Rating {
    /// Whether the rating may still be changed at `now`.
    pub fn changeable_at(&self, now: Timestamp) -> bool {
        now < self.created_at.plus(CHANGE_WINDOW)
    }
}

/// `csat.submitted`: the rating.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct CsatSubmitted<'a>(pub &'a Rating);

impl EventPayload for CsatSubmitted<'_> {
    const NAME: EventName = EventName::CsatSubmitted;
}

/// `csat.updated`: the rating as changed, and what it was before.
#[derive(Debug, Serialize)]
pub struct CsatUpdated<'a> {
    #[serde(flatten)]
    pub rating: &'a Rating,
    pub previous: PreviousRating<'a>,
}

impl EventPayload for CsatUpdated<'_> {
    const NAME: EventName = EventName::CsatUpdated;
}

/// `previous` of `csat.updated`: the score and comment the change replaced.
#[derive(Debug, Serialize)]
pub struct PreviousRating<'a> {
    pub score: i64,
    pub comment: Option<&'a str>,
}

/// A submission: the score, checked to be 1-5, and what it does to the
/// comment.
#[derive(Debug, Clone)]
pub struct NewRating {
    pub target: RatingTarget,
    pub score: i64,
    pub comment: CommentChange,
}

/// What a submission does to a rating's comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentChange {
    /// No `comment` given: a changed rating keeps the comment it had (a
    /// visitor who only picks another score does not lose what they wrote).
    Keep,
    /// A `comment` given, trimmed; blank (`None`) removes it.
    Set(Option<String>),
}

impl CommentChange {
    /// The comment the rating has after this change, `before` being the one
    /// it had (none for a first rating).
    pub fn applied_to(&self, before: Option<&str>) -> Option<String> {
        match self {
            CommentChange::Keep => before.map(str::to_string),
            CommentChange::Set(comment) => comment.clone(),
        }
    }
}

/// A submission's `score`: a whole number from 1 to 5. Taken as any JSON
/// value, so that a score of the wrong type (`"5"`, `4.5`) is refused
/// naming the scale like one out of it, not as a missing one.
pub fn submitted_score(value: Option<&serde_json::Value>) -> Result<i64, FieldError> {
    match value {
        None | Some(serde_json::Value::Null) => Err(problem(
            "score",
            format!("is required: a whole number from {SCORE_MIN} to {SCORE_MAX}"),
        )),
        Some(given) => given
            .as_i64()
            .filter(|n| (SCORE_MIN..=SCORE_MAX).contains(n))
            .ok_or_else(|| {
                problem(
                    "score",
                    format!("must be a whole number from {SCORE_MIN} to {SCORE_MAX}"),
                )
            }),
    }
}

/// Why a rating (or a rating request) is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The entity's `csat` setting is `off`.
    Off,
    /// The chat is not closed, or the ticket not resolved (or closed).
    NotFinished,
    /// The entity's setting is `manual` and no agent has asked yet.
    NotRequested,
    /// The rating was first submitted more than 7 days ago.
    Locked,
}

/// The filters of `GET /ratings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatingFilter {
    pub entity_id: Option<Uuid>,
    pub from: Option<Timestamp>,
    pub to: Option<Timestamp>,
    pub score: Option<i64>,
}

/// The CSAT part of a report: ratings submitted in the period.
#[derive(Debug, Clone, Default, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CsatSummary {
    pub count: i64,
    /// The mean score, rounded to two decimals; null without ratings.
    pub average: Option<f64>,
    /// How many ratings gave each score.
    pub distribution: Distribution,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct Distribution {
    #[serde(rename = "1")]
    pub one: i64,
    #[serde(rename = "2")]
    pub two: i64,
    #[serde(rename = "3")]
    pub three: i64,
    #[serde(rename = "4")]
    pub four: i64,
    #[serde(rename = "5")]
    pub five: i64,
}

impl CsatSummary {
    /// The summary of `(score, count)` pairs.
    pub fn from_counts(counts: &[(i64, i64)]) -> CsatSummary {
        let mut summary = CsatSummary::default();
        let mut sum = 0;
        for &(score, n) in counts {
            let slot = match score {
                1 => &mut summary.distribution.one,
                2 => &mut summary.distribution.two,
                3 => &mut summary.distribution.three,
                4 => &mut summary.distribution.four,
                5 => &mut summary.distribution.five,
                _ => continue,
            };
            *slot += n;
            summary.count += n;
            sum += score * n;
        }
        summary.average = (summary.count > 0)
            .then(|| (sum as f64 / summary.count as f64 * 100.0).round() / 100.0);
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_counts_averages_and_distributes() {
        let summary = CsatSummary::from_counts(&[(5, 2), (4, 1), (1, 1)]);
        assert_eq!(summary.count, 4);
        assert_eq!(summary.average, Some(3.75));
        assert_eq!(summary.distribution.five, 2);
        assert_eq!(summary.distribution.two, 0);
        assert_eq!(CsatSummary::from_counts(&[]).average, None);
    }

    fn rating(now: Timestamp) -> Rating {
        Rating {
            id: Uuid::nil(),
            entity_id: Uuid::nil(),
            chat_session_id: None,
            ticket_id: Some(Uuid::nil()),
            score: 3,
            comment: None,
            agent_id: None,
            agent_name: None,
            created_at: now,
            updated_at: now,
        }
    }

    fn documented_rating() -> serde_json::Value {
        let nil = Uuid::nil().to_string();
        serde_json::json!({
            "id": nil, "entityId": nil, "chatSessionId": null, "ticketId": nil,
            "score": 3, "comment": null, "agentId": null, "agentName": null,
            "createdAt": "2026-11-21T18:48:26.752Z", "updatedAt": "2026-11-21T18:48:26.752Z",
        })
    }

    fn documented_time() -> Timestamp {
        Timestamp::from_datetime("2026-11-21T18:48:26.752Z".parse().expect("timestamp"))
    }

    #[test]
    fn submitted_is_the_rating() {
        let rating = rating(documented_time());
        let data = serde_json::to_value(CsatSubmitted(&rating)).expect("payload");
        assert_eq!(data, documented_rating());
    }

    #[test]
    fn updated_adds_the_previous_score_and_comment() {
        let rating = rating(documented_time());
        let previous = PreviousRating {
            score: 5,
            comment: Some("great"),
        };
        let data = serde_json::to_value(CsatUpdated {
            rating: &rating,
            previous,
        })
        .expect("payload");
        let mut expected = documented_rating();
        expected["previous"] = serde_json::json!({"score": 5, "comment": "great"});
        assert_eq!(data, expected);
    }

    #[test]
    fn a_score_is_a_whole_number_from_1_to_5() {
        use serde_json::json;
        for (given, score) in [(json!(1), 1), (json!(5), 5)] {
            assert_eq!(submitted_score(Some(&given)), Ok(score));
        }
        for missing in [None, Some(json!(null))] {
            let refused = submitted_score(missing.as_ref()).expect_err("missing");
            assert_eq!(refused.message, "is required: a whole number from 1 to 5");
        }
        for wrong in [
            json!(0),
            json!(6),
            json!("5"),
            json!(4.5),
            json!(true),
            json!([5]),
        ] {
            let refused = submitted_score(Some(&wrong)).expect_err("refused");
            assert_eq!(refused.field, "score");
            assert_eq!(
                refused.message, "must be a whole number from 1 to 5",
                "{wrong}"
            );
        }
    }

    #[test]
    fn a_comment_left_out_keeps_the_one_before() {
        assert_eq!(
            CommentChange::Keep.applied_to(Some("kind")),
            Some("kind".to_string())
        );
        assert_eq!(CommentChange::Keep.applied_to(None), None);
        let set = CommentChange::Set(Some("new".into()));
        assert_eq!(set.applied_to(Some("kind")), Some("new".to_string()));
        assert_eq!(CommentChange::Set(None).applied_to(Some("kind")), None);
    }

    #[test]
    fn a_rating_is_changeable_for_seven_days() {
        let now = Timestamp::now();
        let rating = rating(now);
        assert!(rating.changeable_at(now.plus(CHANGE_WINDOW - Duration::from_secs(1))));
        assert!(!rating.changeable_at(now.plus(CHANGE_WINDOW)));
    }
}
