//! The SLA clocks of tickets: one per metric the ticket's policy measures,
//! each a business-time clock that runs, pauses, is fulfilled or breached.
//! The rules here are pure (every instant is passed in); `store` keeps the
//! clocks in the ticket's transaction and the scheduler reads their due
//! times.

pub mod due;
pub mod store;

use std::collections::BTreeMap;

use chrono::Duration;
use serde::Serialize;
use uuid::Uuid;

use super::apply::ResolutionClock;
use super::calendar::Hours;
use super::model::{Policy, Targets};
use crate::time::Timestamp;
use vocab::ticket::TicketStatus;

crate::text_enum! {
    /// What a clock measures.
    pub enum Metric {
        FirstResponse = "first_response",
        NextResponse = "next_response",
        Resolution = "resolution",
    }
}

impl Metric {
    /// The API's spelling (`firstResponse`).
    pub const fn api_name(self) -> &'static str {
        match self {
            Metric::FirstResponse => "firstResponse",
            Metric::NextResponse => "nextResponse",
            Metric::Resolution => "resolution",
        }
    }

    fn target(self, targets: &Targets) -> Option<i64> {
        match self {
            Metric::FirstResponse => targets.first_response_minutes,
            Metric::NextResponse => targets.next_response_minutes,
            Metric::Resolution => targets.resolution_minutes,
        }
    }
}

crate::text_enum! {
    /// Where a clock stands. Only `running` clocks can warn or breach.
    pub enum ClockState {
        Running = "running",
        Paused = "paused",
        Fulfilled = "fulfilled",
        Breached = "breached",
    }
}

/// What a ticket's policy gives its clocks: the calendar to count in, the
/// targets for the ticket's priority, when to warn and what pauses.
#[derive(Debug, Clone)]
pub struct Terms {
    pub policy_id: Uuid,
    pub hours: Hours,
    pub targets: Targets,
    pub warn_minutes: i64,
    pub pause_on: Vec<TicketStatus>,
}

impl Terms {
    pub fn new(policy: &Policy, hours: Hours, targets: Targets) -> Self {
        Terms {
            policy_id: policy.id,
            hours,
            targets,
            warn_minutes: policy.warn_minutes,
            pause_on: policy.pause_on.clone(),
        }
    }

    /// Whether a ticket in `status` has its clocks stopped: waiting on the
    /// customer, a status the policy pauses on, or resolved/closed.
    pub fn stops(&self, status: TicketStatus) -> bool {
        matches!(
            status,
            TicketStatus::Pending | TicketStatus::Resolved | TicketStatus::Closed
        ) || self.pause_on.contains(&status)
    }
}

/// One metric's clock of one ticket, as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Clock {
    pub ticket_id: Uuid,
    pub metric: Metric,
    pub state: ClockState,
    pub target_minutes: i64,
    pub used_seconds: i64,
    pub running_since: Option<Timestamp>,
    pub due_at: Option<Timestamp>,
    pub warn_at: Option<Timestamp>,
    pub paused_at: Option<Timestamp>,
    pub warned_at: Option<Timestamp>,
    pub breached_at: Option<Timestamp>,
    pub fulfilled_at: Option<Timestamp>,
}

impl Clock {
    /// A clock for `metric` started at `at` (stopped at once when the
    /// ticket's status stops clocks); `None` when the terms do not measure
    /// the metric.
    pub fn start(
        ticket_id: Uuid,
        metric: Metric,
        terms: &Terms,
        at: Timestamp,
        stopped: bool,
    ) -> Option<Clock> {
        let target_minutes = metric.target(&terms.targets)?;
        let mut clock = Clock {
            ticket_id,
            metric,
            state: ClockState::Running,
            target_minutes,
            used_seconds: 0,
            running_since: None,
            due_at: None,
            warn_at: None,
            paused_at: None,
            warned_at: None,
            breached_at: None,
            fulfilled_at: None,
        };
        if stopped {
            clock.state = ClockState::Paused;
            clock.paused_at = Some(at);
        } else {
            clock.set(ResolutionClock::started(at.0), terms);
        }
        Some(clock)
    }

    fn timer(&self) -> ResolutionClock {
        ResolutionClock {
            used: Duration::seconds(self.used_seconds),
            running_since: self.running_since.map(|t| t.0),
        }
    }

    /// Stores `timer` and the due and warning times it gives.
    fn set(&mut self, timer: ResolutionClock, terms: &Terms) {
        self.used_seconds = timer.used.num_seconds();
        self.running_since = timer.running_since.map(Timestamp::from_datetime);
        let due = |minutes: i64| {
            timer
                .due(&terms.hours, minutes)
                .map(Timestamp::from_datetime)
        };
        self.due_at = due(self.target_minutes);
        self.warn_at = due((self.target_minutes - terms.warn_minutes).max(0));
    }

    /// Stops a running clock, keeping the business time it used.
    pub fn pause(&mut self, terms: &Terms, at: Timestamp) {
        if self.state == ClockState::Running {
            self.set(self.timer().pause(&terms.hours, at.0), terms);
            self.state = ClockState::Paused;
            self.paused_at = Some(at);
        }
    }

    /// Runs a paused clock again with the time it has left.
    pub fn resume(&mut self, terms: &Terms, at: Timestamp) {
        if self.state == ClockState::Paused {
            self.set(self.timer().resume(at.0), terms);
            self.state = ClockState::Running;
            self.paused_at = None;
        }
    }

    /// Fulfils the metric at `at`; true when it was not fulfilled before.
    /// A breached clock stays breached (and records when it was met).
    pub fn fulfil(&mut self, terms: &Terms, at: Timestamp) -> bool {
        if self.fulfilled_at.is_some() {
            return false;
        }
        if self.state == ClockState::Running {
            let timer = self.timer().pause(&terms.hours, at.0);
            self.used_seconds = timer.used.num_seconds();
            self.running_since = None;
        }
        self.warn_at = None;
        self.paused_at = None;
        self.fulfilled_at = Some(at);
        if self.state != ClockState::Breached {
            self.state = ClockState::Fulfilled;
        }
        true
    }

    /// A fulfilled (not breached) clock of a reopened ticket runs again
    /// with the time it had left.
    pub fn reopen(&mut self, terms: &Terms, at: Timestamp) {
        if self.state == ClockState::Fulfilled {
            self.state = ClockState::Running;
            self.fulfilled_at = None;
            self.set(self.timer().resume(at.0), terms);
        }
    }

    /// New terms (a re-evaluated policy): the same clock, counted against
    /// the new target; a clock whose metric the new terms do not measure is
    /// dropped (`false`).
    pub fn retarget(&mut self, terms: &Terms) -> bool {
        let Some(target) = self.metric.target(&terms.targets) else {
            return false;
        };
        self.target_minutes = target;
        if self.state == ClockState::Running {
            self.set(self.timer(), terms);
        }
        true
    }
}

/// The `sla` object of a ticket.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketSla {
    /// The policy that applies (the first enabled one whose conditions the
    /// ticket meets); null once that policy is deleted.
    pub policy_id: Option<Uuid>,
    /// Due times of the metrics not yet met (null while paused or met).
    pub first_response_due_at: Option<Timestamp>,
    pub next_response_due_at: Option<Timestamp>,
    pub resolution_due_at: Option<Timestamp>,
    /// Since when the clocks stand (waiting on the customer, a pausing
    /// status, resolved or closed).
    pub paused_at: Option<Timestamp>,
    pub breaches: Vec<Breach>,
    /// When each met metric was met: `{"firstResponse": "…"}`.
    #[schema(value_type = Object)]
    pub fulfilled: BTreeMap<&'static str, Timestamp>,
    /// When each metric's warning (`sla.warning`) was sent, so a client
    /// need not guess it from the policy: `{"firstResponse": "…"}`.
    #[schema(value_type = Object)]
    pub warned: BTreeMap<&'static str, Timestamp>,
}

/// A target that was missed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Breach {
    /// `firstResponse`, `nextResponse` or `resolution`.
    pub metric: &'static str,
    pub due_at: Option<Timestamp>,
    pub breached_at: Timestamp,
}

impl TicketSla {
    /// The ticket's `sla` from its policy and clocks (metric order).
    pub fn of(policy_id: Option<Uuid>, clocks: &[Clock]) -> TicketSla {
        let mut sla = TicketSla {
            policy_id,
            ..Default::default()
        };
        for clock in clocks {
            let pending_due = match clock.state {
                ClockState::Running | ClockState::Breached if clock.fulfilled_at.is_none() => {
                    clock.due_at
                }
                _ => None,
            };
            match clock.metric {
                Metric::FirstResponse => sla.first_response_due_at = pending_due,
                Metric::NextResponse => sla.next_response_due_at = pending_due,
                Metric::Resolution => sla.resolution_due_at = pending_due,
            }
            if clock.state == ClockState::Paused {
                sla.paused_at = sla.paused_at.max(clock.paused_at);
            }
            if let Some(breached_at) = clock.breached_at {
                sla.breaches.push(Breach {
                    metric: clock.metric.api_name(),
                    due_at: clock.due_at,
                    breached_at,
                });
            }
            if let Some(at) = clock.fulfilled_at {
                sla.fulfilled.insert(clock.metric.api_name(), at);
            }
            if let Some(at) = clock.warned_at {
                sla.warned.insert(clock.metric.api_name(), at);
            }
        }
        sla
    }
}

#[cfg(test)]
mod tests;
