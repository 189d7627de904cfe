//! The DKIM key a reply is signed with: its channel's, read (and opened)
//! when the reply is sent, so a key set or changed after the reply was
//! queued is the one used. A channel without a key, gone, or whose key no
//! longer opens sends its replies unsigned: the mail still reaches the
//! customer, and the reason is logged.

use futures::future::BoxFuture;

use crate::db::Db;
use crate::email::store::channels::{self, SEAL};
use crate::mail::Reply;
use crate::mail::dkim::{self, ReplySigning, Signing};
use crate::sealed::SealingKey;

/// Signs each reply with its channel's DKIM key.
pub struct ChannelKeys;

impl ReplySigning for ChannelKeys {
    fn signing<'a>(&'a self, db: &'a Db, reply: &'a Reply) -> BoxFuture<'a, Option<Signing>> {
        Box::pin(async move {
            let channel_id = reply.channel_id?;
            let found = async {
                let key = SealingKey::load(db, SEAL).await?;
                channels::find_any(db, channel_id, &key).await
            };
            let secrets = match found.await {
                Ok(Some((_, secrets))) => secrets,
                Ok(None) => return None,
                Err(err) => {
                    tracing::warn!(channel = %channel_id, error = %err, "DKIM key unreadable: reply sent unsigned");
                    return None;
                }
            };
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
        })
    }
}
