//! How a reply leaves, read from its channel when the reply is sent (so a
//! key or server set or changed after the reply was queued is the one
//! used): the DKIM key that signs it and the channel's own SMTP server.
//! A channel without a key, gone, or whose key no longer opens sends its
//! replies unsigned: the mail still reaches the customer, and the reason
//! is logged. A channel without an SMTP server of its own (or one gone)
//! sends through the service's.

use futures::future::BoxFuture;

use crate::db::Db;
use crate::email::model::{ChannelSecrets, SmtpTls};
use crate::email::store::channels::{self, SEAL};
use crate::mail::Reply;
use crate::mail::dkim::{self, Signing};
use crate::mail::relay::{Relay, RelayTls, ReplySending, Sending};
use crate::sealed::SealingKey;

/// Signs each reply with its channel's DKIM key and sends it through its
/// channel's SMTP server.
pub struct ChannelSending;

impl ReplySending for ChannelSending {
    fn sending<'a>(&'a self, db: &'a Db, reply: &'a Reply) -> BoxFuture<'a, Sending> {
        Box::pin(async move {
            let Some(channel_id) = reply.channel_id else {
                return Sending::default();
            };
            let found = async {
                let key = SealingKey::load(db, SEAL).await?;
                channels::find_any(db, channel_id, &key).await
            };
            match found.await {
                Ok(Some((_, secrets))) => Sending {
                    signing: signing(&secrets),
                    relay: relay(&secrets),
                },
                Ok(None) => Sending::default(),
                Err(err) => {
                    tracing::warn!(channel = %channel_id, error = %err, "channel unreadable: reply sent unsigned through the service's SMTP server");
                    Sending::default()
                }
            }
        })
    }
}

/// The channel's DKIM signing, if it has a usable key.
fn signing(secrets: &ChannelSecrets) -> Option<Signing> {
    let channel_id = secrets.channel.id;
    let selector = secrets.channel.dkim_selector.as_deref()?;
    let Some(private_key) = secrets.dkim_key.as_deref() else {
        tracing::warn!(channel = %channel_id, "DKIM key does not open: reply sent unsigned");
        return None;
    };
    let domain = secrets
        .channel
        .address
        .rsplit_once('@')
        .map_or("", |(_, d)| d);
    match dkim::config(selector, domain, private_key) {
        Ok(signing) => Some(signing),
        Err(err) => {
            tracing::warn!(channel = %channel_id, %err, "DKIM key unusable: reply sent unsigned");
            None
        }
    }
}

/// The channel's own SMTP server, if it has one. A password that no
/// longer opens (the server secret changed) leaves it without
/// credentials: the server then says whether it takes the mail.
fn relay(secrets: &ChannelSecrets) -> Option<Relay> {
    let smtp = secrets.channel.smtp.as_ref()?;
    let settings = &smtp.settings;
    let credentials = match (&settings.username, &secrets.smtp_password) {
        (Some(username), Some(password)) => Some((username.clone(), password.clone())),
        (Some(_), None) if smtp.password_set => {
            tracing::warn!(channel = %secrets.channel.id, "SMTP password does not open: signing in without it");
            None
        }
        _ => None,
    };
    Some(Relay {
        host: settings.host.clone(),
        port: settings.port,
        tls: match settings.tls {
            SmtpTls::Implicit => RelayTls::Implicit,
            SmtpTls::Starttls => RelayTls::Starttls,
            SmtpTls::None => RelayTls::None,
        },
        credentials,
    })
}
