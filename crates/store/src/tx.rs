//! An open transaction on either backend, with what its commit also does:
//! the handle's commit hook, and the live events it staged for the sockets.

use sqlx::{Postgres, Sqlite};
use vocab::actor::Actor;
use vocab::error::StoreError;
use vocab::live::LiveEvent;

use crate::pool::{Committing, TxConn};
use crate::{Backend, BellName, Query};

/// The actor of a handle no request named.
static SYSTEM: std::sync::LazyLock<Actor> = std::sync::LazyLock::new(Actor::system);

/// An open transaction on either backend. Store functions that change data
/// take one so that the change, its events and its outbox jobs commit together.
pub struct Tx {
    pub(crate) open: Open,
    /// The live events it staged, for its handle's publisher once it has
    /// committed; dropped when it rolls back.
    pub(crate) live: Vec<LiveEvent>,
    pub(crate) committing: Committing,
    /// The commit hook's write ran in one of its statements
    /// (`push_commit_hook`): `commit` does not run it again.
    pub(crate) hook_written: bool,
    /// The bells to ring once it has committed, and whose they are.
    pub(crate) rings: Vec<BellName>,
    pub(crate) bells: std::sync::Arc<crate::bell::Bells>,
}

/// The transaction itself, on its backend.
pub(crate) enum Open {
    Postgres(TxConn<Postgres>),
    Sqlite(TxConn<Sqlite>),
}

impl Tx {
    pub fn backend(&self) -> Backend {
        match self.open {
            Open::Postgres(_) => Backend::Postgres,
            Open::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Whether a transaction is open: false for a `Tx` of
    /// [`Db::autocommit_after`] until [`Tx::begin_now`].
    pub fn in_transaction(&self) -> bool {
        match &self.open {
            Open::Postgres(t) => t.in_transaction(),
            Open::Sqlite(t) => t.in_transaction(),
        }
    }

    /// Begins the transaction of a `Tx` of [`Db::autocommit_after`].
    pub async fn begin_now(&mut self) -> Result<(), StoreError> {
        match &mut self.open {
            Open::Postgres(t) => t.begin_now().await?,
            Open::Sqlite(t) => t.begin_now().await?,
        }
        Ok(())
    }

    /// Who the changes of this transaction are made by: the actor of the
    /// handle it was begun from ([`Db::acting`]), else the service itself.
    pub fn actor(&self) -> &Actor {
        match &self.committing.actor {
            Some(actor) => actor.as_ref(),
            None => &SYSTEM,
        }
    }

    /// Where the changes of this transaction came from: the request of the
    /// handle it was begun from ([`Db::with_request`]), None outside one.
    pub fn request(&self) -> Option<&vocab::actor::RequestContext> {
        self.committing.request.as_deref()
    }

    /// Names `actor` as the maker of what this transaction writes from
    /// now on: for a change whose maker is only known once the transaction
    /// has read it (a visitor found by the link they followed).
    pub fn act_as(&mut self, actor: Actor) {
        self.committing.actor = Some(std::sync::Arc::new(actor));
    }

    /// Stages `event` for the sockets: the publisher of the `Db` this
    /// transaction was begun from sends it once it has committed (never if
    /// it rolls back).
    pub fn announce(&mut self, event: LiveEvent) {
        self.live.push(event);
    }

    /// Appends the commit hook's write (see [`CommitHook`]) to
    /// `query` as a CTE named `commit_hook`, when there is a hook with
    /// something to write: the statement must then select
    /// `EXISTS (SELECT 1 FROM commit_hook)` and hand it to
    /// [`Tx::commit_hook_written`]. Answers the query and whether it did.
    pub fn push_commit_hook(&mut self, query: Query) -> (Query, bool) {
        match &self.committing.hook {
            Some(hook) => hook.push_cte(query, "commit_hook"),
            None => (query, false),
        }
    }

    /// After the statement of `push_commit_hook` ran: `held` is its
    /// `commit_hook` CTE's answer. The hook's refusal when it did not hold
    /// (the transaction must then roll back).
    pub fn commit_hook_written(&mut self, held: bool) -> Result<(), StoreError> {
        match &self.committing.hook {
            Some(hook) if !held => Err(hook.refused()),
            _ => {
                self.hook_written = true;
                Ok(())
            }
        }
    }

    /// Commits, first running its handle's commit hook (see
    /// [`CommitHook`]) inside the transaction unless a statement already
    /// wrote it; when the hook fails nothing is committed.
    pub async fn commit(mut self) -> Result<(), StoreError> {
        let hook = self.committing.hook.clone();
        if let Some(hook) = hook.as_ref().filter(|_| !self.hook_written) {
            hook.before_commit(&mut self).await?;
        }
        match self.open {
            Open::Postgres(t) => t.commit().await?,
            Open::Sqlite(t) => t.commit().await?,
        }
        if let Some(hook) = hook {
            hook.committed();
        }
        for name in &self.rings {
            self.bells.ring(name);
        }
        if let Some(publisher) = self.committing.publisher.as_ref()
            && !self.live.is_empty()
        {
            publisher.publish(self.live).await;
        }
        Ok(())
    }
}
