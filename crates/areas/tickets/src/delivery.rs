//! When a public reply reaches the customer. An agent's public reply is
//! held for the undo window (`SUPPORTDESK_UNDO_SEND_SECS`) or scheduled
//! for its `sendAt`, and only then delivered: its `comment.created` (and
//! with it webhooks, sockets and the change feed) is recorded by the
//! delivery pass (`store::deliver_due`), and readers that see what the
//! customer sees find it only once sent. Until then `DELETE` cancels it.
//! Whatever else delivers a reply (an email to the customer) keys its time
//! off [`delivery_at`] or the comment's `send_at` column, and checks
//! `delivery_state = 'sent'`.

use std::time::Duration;

use crate::time::Timestamp;

crate::text_enum! {
    /// Where a comment is on its way to the customer.
    pub enum DeliveryState {
        /// Waiting for its `sendAt`.
        Scheduled = "scheduled",
        /// In the undo window after it was written.
        Held = "held",
        /// Delivered (every internal note and customer comment at once).
        Sent = "sent",
        /// Cancelled before it was sent: never delivered.
        Cancelled = "cancelled",
    }
}

/// When a public reply written at `created_at` leaves the undo window of
/// `undo_secs` seconds: the earliest it is delivered.
pub fn delivery_at(created_at: Timestamp, undo_secs: u64) -> Timestamp {
    created_at.plus(Duration::from_secs(undo_secs))
}

/// How a new comment is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delivery {
    /// At once (notes, customer comments, no undo window).
    #[default]
    Now,
    /// Held until the time given (the end of the undo window).
    Held(Timestamp),
    /// Scheduled for the time given (`sendAt`, never inside the undo
    /// window).
    Scheduled(Timestamp),
}

impl Delivery {
    /// An agent's public reply written at `now`, asked for `send_at`, with
    /// an undo window of `undo_secs`.
    pub fn of_reply(now: Timestamp, send_at: Option<Timestamp>, undo_secs: u64) -> Delivery {
        let window_ends = delivery_at(now, undo_secs);
        match send_at {
            Some(at) if at > window_ends => Delivery::Scheduled(at),
            Some(_) if undo_secs > 0 => Delivery::Scheduled(window_ends),
            Some(at) if at > now => Delivery::Scheduled(at),
            _ if undo_secs > 0 => Delivery::Held(window_ends),
            _ => Delivery::Now,
        }
    }

    /// The state and send time it is stored with.
    pub fn stored(self) -> (DeliveryState, Option<Timestamp>) {
        match self {
            Delivery::Now => (DeliveryState::Sent, None),
            Delivery::Held(at) => (DeliveryState::Held, Some(at)),
            Delivery::Scheduled(at) => (DeliveryState::Scheduled, Some(at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp(chrono::DateTime::UNIX_EPOCH + chrono::Duration::seconds(secs))
    }

    #[test]
    fn a_reply_is_held_for_the_window_or_scheduled_past_it() {
        assert_eq!(Delivery::of_reply(at(0), None, 10), Delivery::Held(at(10)));
        assert_eq!(Delivery::of_reply(at(0), None, 0), Delivery::Now);
        assert_eq!(
            Delivery::of_reply(at(0), Some(at(60)), 10),
            Delivery::Scheduled(at(60))
        );
        assert_eq!(
            Delivery::of_reply(at(0), Some(at(5)), 10),
            Delivery::Scheduled(at(10))
        );
    }
}
