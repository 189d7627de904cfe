//! The IMAP channels' mailboxes: `mailboxes` watches each one, and each
//! message it holds goes to the inbound sequence (`email_inbound::receive`),
//! marked read only once that committed. A duplicate (a message fetched
//! again after a crash between the commit and the mark) is an `Ok` too: it
//! is marked read and changes nothing.

use std::sync::Arc;

use tokio::sync::OnceCell;
use tokio::task::JoinHandle;

use crate::auth::Tenant;
use crate::email::Channel;
use crate::email::store::channels::{self, SEAL};
use crate::error::StoreError;
use crate::mailboxes::{self, Watched};
use crate::sealed::SealingKey;
use crate::sequences::email_inbound::{self, Handles};
use crate::state::AppState;
use supportdesk_mailbox::{FetchedMessage, MailboxConfig, Security};

/// Watches every IMAP channel's mailbox until shutdown.
pub fn spawn(state: &AppState) -> JoinHandle<()> {
    let listing = state.clone();
    let receiving = state.clone();
    // The sealing key opens the mailboxes' passwords at every listing; its
    // server secret never changes, so it is read once (retried until read).
    let key = Arc::new(OnceCell::new());
    mailboxes::spawn(
        state.db.clone(),
        move || {
            let (state, key) = (listing.clone(), key.clone());
            async move { watched(&state, &key).await }
        },
        move |watched: &Watched<(Tenant, Channel)>| {
            let state = receiving.clone();
            let (tenant, channel) = watched.context.clone();
            move |message: FetchedMessage| {
                let (state, tenant, channel) = (state.clone(), tenant, channel.clone());
                async move {
                    receive(&state, &tenant, &channel, &message)
                        .await
                        .map(|_| ())
                }
            }
        },
        state.shutdown.clone(),
    )
}

/// The mailboxes to watch now; none while the channels cannot be read
/// (the supervisor lists again shortly). `key` holds the sealing key once
/// it was read.
pub async fn watched(
    state: &AppState,
    key: &OnceCell<SealingKey>,
) -> Vec<Watched<(Tenant, Channel)>> {
    match imap_channels(state, key).await {
        Ok(found) => found,
        Err(error) => {
            tracing::warn!(%error, "listing the IMAP channels failed");
            Vec::new()
        }
    }
}

async fn imap_channels(
    state: &AppState,
    key: &OnceCell<SealingKey>,
) -> Result<Vec<Watched<(Tenant, Channel)>>, StoreError> {
    let key = key
        .get_or_try_init(|| SealingKey::load(&state.db, SEAL))
        .await?;
    let found = channels::imap_channels(&state.db, key).await?;
    Ok(found
        .into_iter()
        .filter_map(|(tenant, secrets)| {
            let inbound = &secrets.channel.inbound;
            let config = MailboxConfig {
                host: inbound.host.clone()?,
                port: inbound.port?,
                security: match inbound.tls {
                    Some(false) => Security::Plain,
                    _ => Security::Tls {
                        trusted_roots: None,
                    },
                },
                username: inbound.username.clone()?,
                password: secrets.inbound_secret.clone()?,
                folder: inbound.folder.clone().unwrap_or_else(|| "INBOX".to_owned()),
            };
            Some(Watched {
                id: secrets.channel.id.to_string(),
                revision: secrets.channel.updated_at.to_string(),
                config,
                context: (tenant, secrets.channel),
            })
        })
        .collect())
}

/// One fetched message through the inbound sequence.
pub async fn receive(
    state: &AppState,
    tenant: &Tenant,
    channel: &Channel,
    message: &FetchedMessage,
) -> Result<email_inbound::Outcome, StoreError> {
    let handles = Handles::from(state);
    email_inbound::receive(&handles, tenant, channel, &message.raw).await
}
