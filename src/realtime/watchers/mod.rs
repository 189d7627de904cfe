//! Who is viewing or typing on a ticket (collision): this node's sockets'
//! `viewing` and `typing` frames, each held for a time to live so a console
//! that stops refreshing (a closed laptop) stops counting. What a change
//! does to an agent's state on a ticket is returned, so the caller announces
//! only transitions; the sweep returns what expired.
//!
//! An agent may view one ticket from several sockets (two tabs): they view
//! it while any of their sockets does, and type while any of them types.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use uuid::Uuid;

use super::Realtime;
use super::protocol::{self, Channel, Topic};
use crate::auth::Tenant;
use crate::time::Clock;

/// A `viewing` frame holds for this long; consoles refresh well within it.
pub const VIEWING_TTL: Duration = Duration::from_secs(30);
/// A `typing` frame holds for this long after the last keystroke's frame.
pub const TYPING_TTL: Duration = Duration::from_secs(5);

/// An agent's state on one ticket, as the `viewing` event shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Viewer {
    pub ticket_id: Uuid,
    pub user_id: Uuid,
    pub name: String,
    pub viewing: bool,
    pub typing: bool,
}

/// Who a frame comes from: the agent, and which of their sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Seat {
    pub tenant: Tenant,
    pub ticket_id: Uuid,
    pub user_id: Uuid,
    pub socket: u64,
}

/// One socket's hold on a ticket.
struct Hold {
    name: String,
    expires: Instant,
    typing_until: Option<Instant>,
}

type Holds = HashMap<Seat, Hold>;

pub struct Watchers {
    clock: Clock,
    holds: Mutex<Holds>,
}

impl Watchers {
    /// Expiry read from `clock` (its monotonic side, which a test moves).
    pub fn new(clock: Clock) -> Watchers {
        Watchers {
            clock,
            holds: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Holds> {
        self.holds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The socket views the ticket (again): its hold is renewed. The agent's
    /// state after, and whether it changed.
    pub fn view(&self, seat: Seat, name: &str) -> (Viewer, bool) {
        let now = self.clock.instant();
        self.change(seat, name, |holds| {
            let hold = holds.entry(seat).or_insert_with(|| Hold {
                name: name.to_owned(),
                expires: now,
                typing_until: None,
            });
            hold.expires = now + VIEWING_TTL;
        })
    }

    /// The socket types on the ticket, which also views it.
    pub fn type_on(&self, seat: Seat, name: &str) -> (Viewer, bool) {
        let now = self.clock.instant();
        self.change(seat, name, |holds| {
            let hold = holds.entry(seat).or_insert_with(|| Hold {
                name: name.to_owned(),
                expires: now,
                typing_until: None,
            });
            hold.expires = hold.expires.max(now + VIEWING_TTL);
            hold.typing_until = Some(now + TYPING_TTL);
        })
    }

    /// The socket left the ticket.
    pub fn leave(&self, seat: Seat, name: &str) -> (Viewer, bool) {
        self.change(seat, name, |holds| {
            holds.remove(&seat);
        })
    }

    /// The socket closed: every agent state it changed, with where.
    pub fn release(&self, socket: u64) -> Vec<(Tenant, Viewer)> {
        self.drop_where(|seat, _| seat.socket == socket)
    }

    /// Holds and typing past their time: every agent state that changed.
    pub fn sweep(&self) -> Vec<(Tenant, Viewer)> {
        let now = self.clock.instant();
        let mut holds = self.lock();
        let mut touched: Vec<(Seat, String)> = Vec::new();
        for (seat, hold) in holds.iter() {
            if hold.expires <= now || hold.typing_until.is_some_and(|t| t <= now) {
                touched.push((*seat, hold.name.clone()));
            }
        }
        let before: Vec<Viewer> = touched
            .iter()
            .map(|(seat, name)| state(&holds, *seat, name))
            .collect();
        holds.retain(|_, hold| hold.expires > now);
        for hold in holds.values_mut() {
            if hold.typing_until.is_some_and(|t| t <= now) {
                hold.typing_until = None;
            }
        }
        changes(&holds, touched, before)
    }

    /// The agents viewing the ticket, by name (as announced: one whose hold
    /// just expired is there until the sweep announces them gone).
    pub fn viewers(&self, tenant: Tenant, ticket_id: Uuid) -> Vec<Viewer> {
        let holds = self.lock();
        let mut seen: Vec<Viewer> = Vec::new();
        for (seat, hold) in holds.iter() {
            if seat.tenant != tenant || seat.ticket_id != ticket_id {
                continue;
            }
            if !seen.iter().any(|v| v.user_id == seat.user_id) {
                seen.push(state(&holds, *seat, &hold.name));
            }
        }
        seen.sort_by(|a, b| a.name.cmp(&b.name).then(a.user_id.cmp(&b.user_id)));
        seen
    }

    fn drop_where(&self, pick: impl Fn(&Seat, &Hold) -> bool) -> Vec<(Tenant, Viewer)> {
        let mut holds = self.lock();
        let touched: Vec<(Seat, String)> = holds
            .iter()
            .filter(|(seat, hold)| pick(seat, hold))
            .map(|(seat, hold)| (*seat, hold.name.clone()))
            .collect();
        let before: Vec<Viewer> = touched
            .iter()
            .map(|(seat, name)| state(&holds, *seat, name))
            .collect();
        holds.retain(|seat, hold| !pick(seat, hold));
        changes(&holds, touched, before)
    }

    fn change(&self, seat: Seat, name: &str, apply: impl FnOnce(&mut Holds)) -> (Viewer, bool) {
        let mut holds = self.lock();
        let before = state(&holds, seat, name);
        apply(&mut holds);
        let after = state(&holds, seat, name);
        let changed = before != after;
        (after, changed)
    }
}

/// Tells the ticket's subscribers, on every node, of an agent's state on it:
/// a `viewing` event on `ticket:<id>`.
pub async fn announce(realtime: &Realtime, tenant: Tenant, viewer: &Viewer) {
    let channel = Channel::Ticket(viewer.ticket_id);
    let frame = protocol::event("viewing", &channel.name(), None, viewer);
    realtime
        .publish(Topic::new(tenant, channel.into()), None, frame)
        .await;
}

/// The agent's state on the seat's ticket, over all their sockets: as last
/// announced, so a hold past its time counts until the sweep removes it
/// (and announces that).
fn state(holds: &Holds, seat: Seat, name: &str) -> Viewer {
    let mine = holds.iter().filter(|(s, _)| {
        s.tenant == seat.tenant && s.ticket_id == seat.ticket_id && s.user_id == seat.user_id
    });
    let (mut viewing, mut typing) = (false, false);
    for (_, hold) in mine {
        viewing = true;
        typing |= hold.typing_until.is_some();
    }
    Viewer {
        ticket_id: seat.ticket_id,
        user_id: seat.user_id,
        name: name.to_owned(),
        viewing,
        typing,
    }
}

/// Of the agents `touched` (with their state `before`), those whose state
/// is different now, once each.
fn changes(
    holds: &Holds,
    touched: Vec<(Seat, String)>,
    before: Vec<Viewer>,
) -> Vec<(Tenant, Viewer)> {
    let mut out: Vec<(Tenant, Viewer)> = Vec::new();
    for ((seat, name), was) in touched.into_iter().zip(before) {
        let is = state(holds, seat, &name);
        let announced = out.iter().any(|(t, v)| {
            *t == seat.tenant && v.ticket_id == seat.ticket_id && v.user_id == seat.user_id
        });
        if is != was && !announced {
            out.push((seat.tenant, is));
        }
    }
    out
}

#[cfg(test)]
mod tests;
