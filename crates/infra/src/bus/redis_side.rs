//! The bus over Redis: publishing, the subscriber connection, and the
//! messages it forwards to the node's local broadcast.

use super::*;

impl RedisBus {
    pub(super) fn company_channel(&self, company_id: Uuid) -> String {
        format!("{}bus:{{{company_id}}}", self.prefix)
    }

    pub(super) async fn join(&self, channel: &str) {
        let mut interest = self.interest.lock().await;
        let holders = interest.holders.entry(channel.to_string()).or_insert(0);
        *holders += 1;
        // A channel still unsettled is subscribed by the retry, not here.
        if *holders == 1 && !interest.unsettled.contains(channel) {
            self.settle(&mut interest, channel, true).await;
        }
    }

    pub(super) async fn leave(&self, channel: &str) {
        let mut interest = self.interest.lock().await;
        let Some(holders) = interest.holders.get_mut(channel) else {
            return;
        };
        *holders -= 1;
        if *holders == 0 {
            interest.holders.remove(channel);
            self.joined_channels().remove(channel);
            if !interest.unsettled.contains(channel) {
                self.settle(&mut interest, channel, false).await;
            }
        }
    }

    /// Subscribes to or unsubscribes from `channel`, or (while Redis is
    /// unreachable, or when the command fails) leaves it to the retry.
    pub(super) async fn settle(&self, interest: &mut Interest, channel: &str, subscribed: bool) {
        if !self.reachable.load(Ordering::Acquire) {
            interest.unsettled.insert(channel.to_string());
            return;
        }
        let mut subscriber = self.subscriber.clone();
        let done = if subscribed {
            subscriber.subscribe(channel, true).await
        } else {
            subscriber.unsubscribe(channel, true).await
        };
        match done {
            Ok(()) => {
                interest.unsettled.remove(channel);
                if subscribed {
                    self.joined_channels().insert(channel.to_string());
                } else {
                    self.joined_channels().remove(channel);
                }
            }
            Err(error) => {
                tracing::warn!(%error, channel, subscribed, "bus subscription change failed; retrying");
                self.reachable.store(false, Ordering::Release);
                interest.unsettled.insert(channel.to_string());
            }
        }
    }

    /// Brings Redis in line with the wanted channels: the unsettled ones, or
    /// (after Redis was unreachable) every one, as a reconnect may have lost
    /// any of them.
    pub(super) async fn reconcile(&self, everything: bool) {
        let mut interest = self.interest.lock().await;
        let mut channels: Vec<String> = interest.unsettled.iter().cloned().collect();
        if everything {
            channels.extend(interest.holders.keys().cloned());
            channels.sort();
            channels.dedup();
        }
        for channel in channels {
            let wanted = interest.holders.contains_key(&channel);
            self.settle(&mut interest, &channel, wanted).await;
            if !self.reachable.load(Ordering::Acquire) {
                return;
            }
        }
    }

    pub(super) fn joined_channels(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // The set stays whole whatever a panicking holder did.
        self.joined
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) async fn ping(&self) -> bool {
        let pong: redis::RedisResult<String> = redis::cmd("PING")
            .query_async(&mut self.subscriber.clone())
            .await;
        match pong {
            Ok(_) => true,
            Err(error) => {
                tracing::debug!(%error, "bus subscriber: Redis unreachable");
                false
            }
        }
    }
}

/// Redis pub/sub pushes need RESP3.
pub(super) fn resp3_url(url: &str) -> String {
    if url.contains("protocol=") {
        url.to_string()
    } else if url.contains('?') {
        format!("{url}&protocol=resp3")
    } else {
        format!("{url}?protocol=resp3")
    }
}

/// Marks a message on the node-wide channel that a node subscribed to the
/// company channel after it skips: `unless-joined <channel>`, a newline,
/// the message's wire form (see [`Bus::publish_ahead_of`]).
pub(super) const UNLESS_JOINED: &str = "unless-joined ";

/// Wire form: topic, a newline, the payload (topics never hold newlines).
pub(super) fn encode(message: &BusMessage) -> String {
    format!("{}\n{}", message.topic, message.payload)
}

pub(super) fn decode(raw: &str) -> Option<BusMessage> {
    let (topic, payload) = raw.split_once('\n')?;
    Some(BusMessage {
        topic: topic.to_string(),
        payload: payload.into(),
    })
}

/// How often the subscriber connection is checked while it is quiet.
const SUBSCRIBER_CHECK: Duration = Duration::from_secs(1);

/// Moves Redis pushes onto the local broadcast, until the bus is dropped.
/// A connection manager reconnects only when it is used, and a subscriber
/// sends nothing: a PING every second lets it notice that Redis went away
/// and came back, reconnect and resubscribe (automatic resubscription);
/// the same check retries the subscription changes Redis missed.
pub(super) async fn forward_pushes(
    mut pushes: mpsc::UnboundedReceiver<redis::PushInfo>,
    local: broadcast::Sender<Arc<BusMessage>>,
    bus: std::sync::Weak<RedisBus>,
) {
    let mut check = tokio::time::interval(SUBSCRIBER_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let push = tokio::select! {
            push = pushes.recv() => push,
            _ = check.tick() => {
                let Some(bus) = bus.upgrade() else {
                    break;
                };
                let was_reachable = bus.reachable.load(Ordering::Acquire);
                let reachable = bus.ping().await;
                bus.reachable.store(reachable, Ordering::Release);
                if reachable {
                    bus.reconcile(!was_reachable).await;
                }
                continue;
            }
        };
        let Some(push) = push else {
            break;
        };
        let Some(msg) = redis::Msg::from_push_info(push) else {
            continue;
        };
        let Ok(raw) = msg.get_payload::<String>() else {
            continue;
        };
        let raw = match raw.strip_prefix(UNLESS_JOINED) {
            None => raw.as_str(),
            Some(guarded) => {
                let Some((channel, raw)) = guarded.split_once('\n') else {
                    continue;
                };
                if bus
                    .upgrade()
                    .is_some_and(|bus| bus.joined_channels().contains(channel))
                {
                    continue;
                }
                raw
            }
        };
        if let Some(message) = decode(raw) {
            let _ = local.send(Arc::new(message));
        }
    }
}
