//! How a reply leaves, found when it is sent from its channel: the DKIM
//! key that signs it and the SMTP server it goes through (the channel's
//! own identity, else the service's `SMTP_URL`).

use std::time::Duration;

use futures::future::BoxFuture;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, Tokio1Executor};

use super::Reply;
use super::dkim::Signing;
use super::send_error::SendError;
use crate::db::Db;

/// How a reply is sent: signed or not, through a server of its own or the
/// service's.
#[derive(Default)]
pub struct Sending {
    pub signing: Option<Signing>,
    pub relay: Option<Relay>,
}

/// Finds how a reply is sent (from its channel), at sending time:
/// implemented where the mail and the channels meet, so the mail job knows
/// nothing of channels.
pub trait ReplySending: Send + Sync {
    fn sending<'a>(&'a self, db: &'a Db, reply: &'a Reply) -> BoxFuture<'a, Sending>;
}

/// How the connection to a relay is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayTls {
    /// TLS from the first byte (port 465).
    Implicit,
    /// A plain connection that must upgrade by STARTTLS (port 587).
    Starttls,
    /// No TLS: a relay on the same host or network only.
    None,
}

/// An SMTP server of a channel's own, its password opened.
#[derive(Clone)]
pub struct Relay {
    pub host: String,
    pub port: u16,
    pub tls: RelayTls,
    /// The user name and password it signs in with, if any.
    pub credentials: Option<(String, String)>,
}

impl std::fmt::Debug for Relay {
    /// Never the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("username", &self.credentials.as_ref().map(|(u, _)| u))
            .finish()
    }
}

impl Relay {
    /// A transport to this server (one per reply: a channel's server is
    /// used seldom, and its settings may change between two replies).
    pub fn transport(&self) -> Result<AsyncSmtpTransport<Tokio1Executor>, SendError> {
        let refused = |e: lettre::transport::smtp::Error| {
            SendError::permanent(format!("the channel's SMTP server {}: {e}", self.host))
        };
        let builder = match self.tls {
            RelayTls::Implicit => {
                AsyncSmtpTransport::<Tokio1Executor>::relay(&self.host).map_err(refused)?
            }
            RelayTls::Starttls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&self.host).map_err(refused)?
            }
            RelayTls::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&self.host),
        };
        let mut builder = builder
            .port(self.port)
            .timeout(Some(Duration::from_secs(30)));
        if let Some((username, password)) = &self.credentials {
            builder = builder.credentials(Credentials::new(username.clone(), password.clone()));
        }
        Ok(builder.build())
    }
}
