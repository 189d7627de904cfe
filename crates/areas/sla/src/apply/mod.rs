//! Pure SLA rules for one ticket: which policy applies, and the due times
//! its targets give, with a resolution clock that pauses and resumes.
//! Callers pass every instant; nothing here reads the clock.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::calendar::Hours;
use super::model::{Policy, PolicyConditions, Targets};
use vocab::ticket::Priority;

/// What the policy conditions look at on a ticket (custom fields aside:
/// they are checked where the values and their definitions are).
#[derive(Debug, Clone, Copy)]
pub struct TicketFacts<'a> {
    pub priority: Priority,
    pub entity_id: Uuid,
    /// `None` for a ticket without a team: it meets no `teamId` condition.
    pub team_id: Option<Uuid>,
    /// Normalised tags.
    pub tags: &'a [String],
}

impl PolicyConditions {
    /// Whether the ticket meets every condition but `customFields`.
    pub fn met_by(&self, ticket: &TicketFacts<'_>) -> bool {
        self.priorities
            .as_ref()
            .is_none_or(|p| p.contains(&ticket.priority))
            && self.entity_id.is_none_or(|e| e == ticket.entity_id)
            && self.team_id.is_none_or(|t| Some(t) == ticket.team_id)
            && self
                .tags
                .as_ref()
                .is_none_or(|tags| tags.iter().all(|t| ticket.tags.contains(t)))
    }
}

/// The ticket's policy: the first enabled one, in list order, whose
/// conditions it meets; `fields_met` answers a policy's custom field
/// condition (called only for policies that have one).
pub fn choose<'p>(
    policies: &'p [Policy],
    ticket: &TicketFacts<'_>,
    mut fields_met: impl FnMut(&Policy) -> bool,
) -> Option<&'p Policy> {
    policies.iter().find(|p| {
        p.enabled
            && p.conditions.met_by(ticket)
            && (p.conditions.custom_fields.is_none() || fields_met(p))
    })
}

/// When the first response and the resolution fall due for a ticket
/// created at `created` (the clocks start at creation; recomputing after a
/// priority change starts again from there, not from the change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueTimes {
    pub first_response: Option<DateTime<Utc>>,
    pub resolution: Option<DateTime<Utc>>,
}

pub fn due_times(targets: &Targets, hours: &Hours, created: DateTime<Utc>) -> DueTimes {
    let due = |minutes: Option<i64>| minutes.and_then(|m| hours.add(created, Duration::minutes(m)));
    DueTimes {
        first_response: due(targets.first_response_minutes),
        resolution: due(targets.resolution_minutes),
    }
}

/// The next response is due `nextResponseMinutes` after each customer
/// comment that follows the last agent reply.
pub fn next_response_due(
    targets: &Targets,
    hours: &Hours,
    customer_comment: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let minutes = targets.next_response_minutes?;
    hours.add(customer_comment, Duration::minutes(minutes))
}

/// The resolution clock: business time used so far, and since when it
/// runs (`None` while paused). Outside business hours it stands still by
/// itself: only open time counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolutionClock {
    pub used: Duration,
    pub running_since: Option<DateTime<Utc>>,
}

impl ResolutionClock {
    pub fn started(at: DateTime<Utc>) -> Self {
        ResolutionClock {
            used: Duration::zero(),
            running_since: Some(at),
        }
    }

    /// Stops the clock (a pausing status); pausing a paused clock keeps it.
    pub fn pause(self, hours: &Hours, at: DateTime<Utc>) -> Self {
        match self.running_since {
            Some(since) => ResolutionClock {
                used: self.used + hours.between(since, at),
                running_since: None,
            },
            None => self,
        }
    }

    /// Runs the clock again with the time left (a reopened ticket).
    pub fn resume(self, at: DateTime<Utc>) -> Self {
        match self.running_since {
            Some(_) => self,
            None => ResolutionClock {
                used: self.used,
                running_since: Some(at),
            },
        }
    }

    /// When the target falls due if the clock keeps running; `None` while
    /// paused (nothing can fall due) or without open time left.
    pub fn due(&self, hours: &Hours, target_minutes: i64) -> Option<DateTime<Utc>> {
        let since = self.running_since?;
        let left = (Duration::minutes(target_minutes) - self.used).max(Duration::zero());
        hours.add(since, left)
    }
}

#[cfg(test)]
mod tests;
