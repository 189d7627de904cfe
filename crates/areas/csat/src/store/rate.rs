//! A submission: the rated chat or ticket checked, the rating written and
//! its event recorded, in one transaction. A first rating's
//! `csat.submitted` is an entry of the rated record in the change feed
//! (the record as it is, unchanged), so that what reads the feed (the
//! automations' triggers) sees every rating received once.

use futures::future::BoxFuture;

use super::{RATING_COLUMNS, RateError, Submitted, check_open, subject};
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::events::{RecordChange, emit_change};
use crate::model::{
    CsatSubmitted, CsatUpdated, NewRating, PreviousRating, Rating, RatingTarget, Refusal,
};
use crate::time::{Timestamp, new_id};

/// The change feed's entry of a rated chat or ticket as it now is: a read
/// of the chat or tickets area, which this one cannot name (the service
/// passes it in), in the rating's transaction.
pub trait RatedRecord: Sync {
    fn change<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        target: RatingTarget,
    ) -> BoxFuture<'a, Result<RecordChange, StoreError>>;
}

/// Rates a closed chat or a resolved ticket, or changes its rating within
/// the change window; records `csat.submitted` or `csat.updated`, each
/// the change feed's entry of the rated record, as `rated` reads it (so
/// the automations' triggers see both).
pub async fn rate(
    db: &Db,
    tenant: &Tenant,
    new: &NewRating,
    now: Timestamp,
    rated_record: &dyn RatedRecord,
) -> Result<(Rating, Submitted), RateError> {
    let mut tx = db.begin().await?;
    let rated = subject(&mut tx, tenant, new.target).await?;
    check_open(&rated, new.target, true)?;
    let (column, id) = match new.target {
        RatingTarget::Chat(id) => ("chat_session_id", id),
        RatingTarget::Ticket(id) => ("ticket_id", id),
    };
    let existing: Option<Rating> = Query::new(format!(
        "SELECT {RATING_COLUMNS} FROM ratings WHERE {column} = $1"
    ))
    .bind(id)
    .fetch_optional(&mut tx)
    .await?;
    let outcome = match existing {
        Some(before) => {
            if !before.changeable_at(now) {
                return Err(RateError::Refused(Refusal::Locked));
            }
            let rating: Rating = Query::new(format!(
                "UPDATE ratings SET score = $2, comment = $3, updated_at = $4 WHERE id = $1 \
                 RETURNING {RATING_COLUMNS}"
            ))
            .bind(before.id)
            .bind(new.score)
            .bind(new.comment.applied_to(before.comment.as_deref()))
            .bind(now)
            .fetch_one(&mut tx)
            .await?;
            let data = CsatUpdated {
                rating: &rating,
                previous: PreviousRating {
                    score: before.score,
                    comment: before.comment.as_deref(),
                },
            };
            let change = rated_record.change(&mut tx, tenant, new.target).await?;
            emit_change(&mut tx, tenant, &data, Some(&change), now).await?;
            (rating, Submitted::Updated)
        }
        None => {
            let rating: Rating = Query::new(format!(
                "INSERT INTO ratings (id, company_id, mode, entity_id, {column}, score, comment, \
                 created_at, updated_at, agent_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) \
                 RETURNING {RATING_COLUMNS}"
            ))
            .bind(new_id())
            .bind_tenant(tenant)
            .bind(rated.entity_id)
            .bind(id)
            .bind(new.score)
            .bind(new.comment.applied_to(None))
            .bind(now)
            .bind(rated.assignee_id)
            .fetch_one(&mut tx)
            .await?;
            let change = rated_record.change(&mut tx, tenant, new.target).await?;
            emit_change(&mut tx, tenant, &CsatSubmitted(&rating), Some(&change), now).await?;
            (rating, Submitted::Created)
        }
    };
    tx.commit().await?;
    Ok(outcome)
}
