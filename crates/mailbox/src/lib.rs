//! Reading an IMAP mailbox the way a desk must: each new message is handed
//! to the caller whole (`BODY.PEEK[]`, so reading it marks nothing), and it
//! is marked `\Seen` only after the caller's handler returned `Ok` — the
//! handler commits the ticket change, so a crash between the fetch and the
//! commit leaves the message unread and the next run hands it over again
//! (the handler drops a message it already has by its Message-ID). A
//! handler's error leaves that message unread for the next run too.
//!
//! Between runs the reader waits with IDLE where the server offers it (a new
//! message wakes it at once), else for the poll interval.
//!
//! Only the protocol lives here (async-imap over tokio-rustls); which
//! mailboxes are read, and what a message becomes, is the service's.

mod connection;

use std::time::Duration;

use async_imap::Session;
use futures::TryStreamExt;

use connection::Connection;
pub use connection::Security;

/// Where a mailbox is and how to sign in to it.
#[derive(Clone)]
pub struct MailboxConfig {
    pub host: String,
    pub port: u16,
    pub security: Security,
    pub username: String,
    pub password: String,
    /// The folder to read (`INBOX` on most servers).
    pub folder: String,
}

impl std::fmt::Debug for MailboxConfig {
    // The password stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailboxConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("username", &self.username)
            .field("folder", &self.folder)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    #[error("cannot reach {0}: {1}")]
    Connect(String, std::io::Error),
    #[error("TLS with {0} failed: {1}")]
    Tls(String, String),
    #[error("the server closed the connection before its greeting")]
    NoGreeting,
    #[error("the server refused the sign-in: {0}")]
    SignIn(String),
    #[error("IMAP: {0}")]
    Protocol(#[from] async_imap::error::Error),
}

/// One message as the server holds it.
#[derive(Debug, Clone)]
pub struct FetchedMessage {
    pub uid: u32,
    /// The message's bytes, headers and body, exactly as stored.
    pub raw: Vec<u8>,
}

/// What a drain did: messages handed over and marked, and messages whose
/// handler failed (left unread for the next run).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    pub handled: usize,
    pub failed: usize,
}

/// Why a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woken {
    /// The server said something changed (IDLE).
    Changed,
    /// The wait's limit passed (or, without IDLE, the poll interval).
    TimedOut,
}

/// A signed-in session on one selected folder.
pub struct Mailbox {
    session: Session<Connection>,
    idle: bool,
}

impl Mailbox {
    /// Connects, reads the greeting, signs in and selects the folder.
    pub async fn open(config: &MailboxConfig) -> Result<Mailbox, MailboxError> {
        let stream = Connection::open(&config.host, config.port, &config.security).await?;
        let mut client = async_imap::Client::new(stream);
        // async-imap leaves reading the server's greeting to its caller.
        match client.read_response().await {
            Ok(Some(_)) => {}
            Ok(None) => return Err(MailboxError::NoGreeting),
            Err(error) => return Err(MailboxError::Connect(config.host.clone(), error)),
        }
        let mut session = client
            .login(&config.username, &config.password)
            .await
            .map_err(|(error, _)| MailboxError::SignIn(error.to_string()))?;
        let idle = session.capabilities().await?.has_str("IDLE");
        session.select(&config.folder).await?;
        Ok(Mailbox { session, idle })
    }

    /// Whether the server offers IDLE (else `wait` polls).
    pub fn has_idle(&self) -> bool {
        self.idle
    }

    /// The UIDs of the messages not yet marked read, oldest first.
    pub async fn unread(&mut self) -> Result<Vec<u32>, MailboxError> {
        let mut uids: Vec<u32> = self
            .session
            .uid_search("UNSEEN")
            .await?
            .into_iter()
            .collect();
        uids.sort_unstable();
        Ok(uids)
    }

    /// One message by UID, without marking it read; `None` when it is gone
    /// (expunged by another client meanwhile).
    pub async fn fetch(&mut self, uid: u32) -> Result<Option<FetchedMessage>, MailboxError> {
        // A fetch stream borrows the session: collect it before the next command.
        let fetched: Vec<_> = self
            .session
            .uid_fetch(uid.to_string(), "(UID BODY.PEEK[])")
            .await?
            .try_collect()
            .await?;
        Ok(fetched
            .iter()
            .find(|fetch| fetch.uid == Some(uid))
            .and_then(|fetch| fetch.body())
            .map(|raw| FetchedMessage {
                uid,
                raw: raw.to_vec(),
            }))
    }

    /// Marks a message read: it is not handed over again.
    pub async fn mark_read(&mut self, uid: u32) -> Result<(), MailboxError> {
        let _: Vec<_> = self
            .session
            .uid_store(uid.to_string(), "+FLAGS.SILENT (\\Seen)")
            .await?
            .try_collect()
            .await?;
        Ok(())
    }

    /// Hands every unread message to `handle`, oldest first, marking each
    /// read only after `handle` returned `Ok`. A failed handler leaves its
    /// message unread and the drain goes on with the next.
    pub async fn drain<F, Fut, E>(&mut self, mut handle: F) -> Result<Drained, MailboxError>
    where
        F: FnMut(FetchedMessage) -> Fut,
        Fut: Future<Output = Result<(), E>>,
        E: std::fmt::Display,
    {
        let mut drained = Drained::default();
        for uid in self.unread().await? {
            let Some(message) = self.fetch(uid).await? else {
                continue;
            };
            match handle(message).await {
                Ok(()) => {
                    self.mark_read(uid).await?;
                    drained.handled += 1;
                }
                Err(error) => {
                    tracing::warn!(uid, %error, "a fetched message was not taken; it stays unread for the next run");
                    drained.failed += 1;
                }
            }
        }
        Ok(drained)
    }

    /// Waits until the server reports a change or `limit` passes: IDLE where
    /// the server offers it, else a plain wait of `limit` (the poll
    /// interval). Servers drop an IDLE after 30 minutes, so `limit` should
    /// stay under 29.
    pub async fn wait(self, limit: Duration) -> Result<(Mailbox, Woken), MailboxError> {
        if !self.idle {
            tokio::time::sleep(limit).await;
            return Ok((self, Woken::TimedOut));
        }
        self.idle_start().await?.wait(limit).await
    }

    /// Enters IDLE and returns once the server acknowledged it: from then on
    /// every change to the folder is reported to `Idling::wait`.
    pub async fn idle_start(self) -> Result<Idling, MailboxError> {
        let mut handle = self.session.idle();
        handle.init().await?;
        Ok(Idling { handle })
    }

    /// Signs out politely.
    pub async fn close(mut self) -> Result<(), MailboxError> {
        self.session.logout().await?;
        Ok(())
    }
}

/// A session in IDLE, acknowledged by the server.
pub struct Idling {
    handle: async_imap::extensions::idle::Handle<Connection>,
}

impl Idling {
    /// Waits for the server to report a change, or for `limit`; then ends
    /// the IDLE and gives the session back.
    pub async fn wait(mut self, limit: Duration) -> Result<(Mailbox, Woken), MailboxError> {
        let woken = {
            // Dropping the stop source at the end of this block ends a
            // wait that is still running; none is by then.
            let (wait, _stop) = self.handle.wait_with_timeout(limit);
            match wait.await? {
                async_imap::extensions::idle::IdleResponse::NewData(_) => Woken::Changed,
                _ => Woken::TimedOut,
            }
        };
        let session = self.handle.done().await?;
        Ok((
            Mailbox {
                session,
                idle: true,
            },
            woken,
        ))
    }
}
