//! Watching the email channels' IMAP mailboxes: every node keeps one
//! connection per mailbox in IDLE (or polls, where the server has no IDLE),
//! and whichever node is woken drains the mailbox under the mailbox's pass
//! lock, so two nodes never hand the same message over at once. A message
//! is marked read only after the handler (the inbound sequence, which
//! commits the ticket change) returned `Ok`: a crash in between leaves it
//! unread, the next drain hands it over again, and the handler drops it by
//! its Message-ID if it had committed.
//!
//! The supervisor lists the mailboxes every `LIST_EVERY` and starts, stops
//! or restarts a watcher when a channel appears, goes or changes: one
//! indexed read of the channels every few seconds per node, so a new
//! channel is read from within seconds of its creation.

use std::collections::HashMap;
use std::fmt::Display;
use std::time::Duration;

use sha2::Digest;

use supportdesk_mailbox::{FetchedMessage, Mailbox, MailboxConfig};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::db::{Db, PassLock};

/// How often the supervisor lists the mailboxes to watch.
const LIST_EVERY: Duration = Duration::from_secs(2);
/// The longest an IDLE lasts before it is renewed (servers drop one after
/// 30 minutes), and the poll interval of a server without IDLE.
const IDLE_LIMIT: Duration = Duration::from_secs(25 * 60);
const POLL_EVERY: Duration = Duration::from_secs(60);
/// Waits before reconnecting after a failure: doubling up to the last.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MOST: Duration = Duration::from_secs(300);

/// One mailbox to watch, with what its messages' handler needs (`C`: the
/// channel the mailbox belongs to).
#[derive(Clone, Debug)]
pub struct Watched<C> {
    /// Identifies the mailbox across listings (the channel's id).
    pub id: String,
    /// Changes whenever the channel does (its update time): a watcher whose
    /// channel changed is restarted with the new one.
    pub revision: String,
    pub config: MailboxConfig,
    pub context: C,
}

impl<C> Watched<C> {
    /// What changes when the channel's settings change.
    fn fingerprint(&self) -> String {
        format!(
            "{}:{}:{}:{:?}:{}:{}:{}",
            self.revision,
            self.config.host,
            self.config.port,
            self.config.security,
            self.config.username,
            self.config.password,
            self.config.folder
        )
    }
}

/// Runs the supervisor until shutdown. `list` gives the mailboxes to watch
/// now; `handler` makes, for one mailbox, what takes each of its messages.
pub fn spawn<C, L, LFut, M, H, HFut, E>(
    db: Db,
    list: L,
    handler: M,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()>
where
    C: Clone + Send + Sync + 'static,
    L: Fn() -> LFut + Send + Sync + 'static,
    LFut: Future<Output = Vec<Watched<C>>> + Send,
    M: Fn(&Watched<C>) -> H + Send + Sync + 'static,
    H: FnMut(FetchedMessage) -> HFut + Send + 'static,
    HFut: Future<Output = Result<(), E>> + Send + 'static,
    E: Display + Send + 'static,
{
    tokio::spawn(async move {
        let mut running: HashMap<String, (String, JoinHandle<()>)> = HashMap::new();
        let mut shutdown_seen = shutdown.clone();
        loop {
            let wanted = list().await;
            let wanted_ids: std::collections::HashSet<&str> =
                wanted.iter().map(|watched| watched.id.as_str()).collect();
            running.retain(|id, (_, task)| {
                let keep = wanted_ids.contains(id.as_str());
                if !keep {
                    task.abort();
                }
                keep
            });
            for watched in wanted {
                let fingerprint = watched.fingerprint();
                if let Some((running_fingerprint, task)) = running.get(&watched.id) {
                    if *running_fingerprint == fingerprint && !task.is_finished() {
                        continue;
                    }
                    task.abort();
                }
                let task = tokio::spawn(watch_one(
                    db.clone(),
                    watched.clone(),
                    handler(&watched),
                    shutdown.clone(),
                ));
                running.insert(watched.id.clone(), (fingerprint, task));
            }
            tokio::select! {
                _ = tokio::time::sleep(LIST_EVERY) => {}
                _ = shutdown_seen.changed() => break,
            }
        }
        for (_, (_, task)) in running {
            task.abort();
        }
    })
}

/// Watches one mailbox until shutdown or until the supervisor stops it.
async fn watch_one<C, H, HFut, E>(
    db: Db,
    watched: Watched<C>,
    mut handle: H,
    mut shutdown: watch::Receiver<bool>,
) where
    H: FnMut(FetchedMessage) -> HFut,
    HFut: Future<Output = Result<(), E>>,
    E: Display,
{
    let mut retry = RETRY_FIRST;
    while !*shutdown.borrow() {
        let outcome = tokio::select! {
            outcome = session(&db, &watched, &mut handle) => outcome,
            _ = shutdown.changed() => return,
        };
        if let Err(error) = outcome {
            tracing::warn!(mailbox = %watched.id, %error, retry_in_secs = retry.as_secs(), "watching a mailbox failed");
            tokio::select! {
                _ = tokio::time::sleep(retry) => {}
                _ = shutdown.changed() => return,
            }
            retry = (retry * 2).min(RETRY_MOST);
        }
    }
}

/// One connection's life: drain, wait, drain … until an error ends it.
async fn session<C, H, HFut, E>(db: &Db, watched: &Watched<C>, handle: &mut H) -> Result<(), String>
where
    H: FnMut(FetchedMessage) -> HFut,
    HFut: Future<Output = Result<(), E>>,
    E: Display,
{
    let mut mailbox = Mailbox::open(&watched.config)
        .await
        .map_err(|error| error.to_string())?;
    loop {
        let lock = PassLock::take(db, lock_key(&watched.id), "mailbox drain")
            .await
            .map_err(|error| error.to_string())?;
        let drained = mailbox.drain(&mut *handle).await;
        lock.release().await;
        let drained = drained.map_err(|error| error.to_string())?;
        if drained.handled > 0 || drained.failed > 0 {
            tracing::info!(mailbox = %watched.id, handled = drained.handled, failed = drained.failed, "mailbox drained");
        }
        let limit = if mailbox.has_idle() {
            IDLE_LIMIT
        } else {
            POLL_EVERY
        };
        let (reopened, _) = mailbox
            .wait(limit)
            .await
            .map_err(|error| error.to_string())?;
        mailbox = reopened;
    }
}

/// A pass-lock key for a mailbox from its id: the lock keys of other
/// passes are small constants, these have the top bit set. The first eight
/// bytes of the id's SHA-256: the key must be the same on every node and
/// every build (the standard library's hasher promises neither).
pub fn lock_key(id: &str) -> i64 {
    let digest = sha2::Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first) | i64::MIN
}

#[cfg(test)]
mod tests {
    use super::lock_key;

    #[test]
    fn a_mailbox_lock_key_is_the_start_of_its_ids_sha256_with_the_top_bit_set() {
        // SHA-256("mailbox") begins 92 be a4 d5 2a 1d 53 f0 (its top bit
        // already set); SHA-256("desk") begins 49 be 41 7a d7 40 80 a0.
        assert_eq!(
            (
                lock_key("mailbox").to_be_bytes(),
                lock_key("desk").to_be_bytes()
            ),
            (
                [0x92, 0xbe, 0xa4, 0xd5, 0x2a, 0x1d, 0x53, 0xf0],
                [0xc9, 0xbe, 0x41, 0x7a, 0xd7, 0x40, 0x80, 0xa0]
            )
        );
    }
}
