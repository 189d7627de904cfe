//! A channel as the API shows it, the closed sets it is made of, and the
//! events incoming mail records.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::event_catalogue::{EventName, EventPayload};
use crate::time::Timestamp;

crate::text_enum! {
    /// Where a channel's incoming mail comes from.
    pub enum InboundKind {
        Imap = "imap",
        Postmark = "postmark",
        Mailgun = "mailgun",
        Sendgrid = "sendgrid",
        Ses = "ses",
    }
}

impl InboundKind {
    /// Whether mail arrives by the provider's webhook (else it is fetched).
    pub fn is_webhook(self) -> bool {
        self != InboundKind::Imap
    }
}

crate::text_enum! {
    /// Which way a recorded Message-ID went: received, sent, or received
    /// and dropped (a loop, a bounce, a flood): still recorded, so the
    /// same message fetched again is dropped again without a look.
    pub enum Direction {
        In = "in",
        Out = "out",
        Ignored = "ignored",
    }
}

/// The IMAP mailbox a channel reads (what is not secret).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImapSettings {
    pub host: String,
    pub port: u16,
    pub tls: bool,
    pub username: String,
    pub folder: String,
}

/// A channel's inbound source as shown: its kind, the IMAP mailbox when
/// it is one, whether its secret (IMAP password, webhook secret, Mailgun
/// signing key) is set (never the secret), and for a webhook the path the
/// provider posts to.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = EmailChannelInbound)]
#[serde(rename_all = "camelCase")]
pub struct Inbound {
    #[schema(value_type = String, example = "postmark")]
    pub kind: InboundKind,
    /// The IMAP mailbox (`imap` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// The SNS topic SES publishes to (`ses` only): another topic's
    /// messages are refused, however well signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_arn: Option<String>,
    pub secret_set: bool,
    /// `/inbound/email/{channelId}/{provider}` for a webhook kind.
    pub webhook_path: Option<String>,
}

crate::text_enum! {
    /// How a channel's SMTP connection is secured: TLS from the first byte
    /// (`implicit`, port 465), a plain connection upgraded by STARTTLS,
    /// which must succeed (`starttls`, port 587), or none at all (`none`,
    /// for a relay on the same host or network only).
    pub enum SmtpTls {
        Implicit = "implicit",
        Starttls = "starttls",
        None = "none",
    }
}

impl SmtpTls {
    /// The port a mail client would use for this mode.
    pub fn default_port(self) -> u16 {
        match self {
            SmtpTls::Implicit => 465,
            SmtpTls::Starttls => 587,
            SmtpTls::None => 25,
        }
    }
}

/// The SMTP identity replies leave by (what is not secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SmtpSettings {
    pub host: String,
    pub port: u16,
    /// `implicit`, `starttls` or `none`.
    #[schema(value_type = String, example = "starttls")]
    #[serde(deserialize_with = "tls_mode")]
    pub tls: SmtpTls,
    pub username: Option<String>,
}

/// A stored mode; rows written before the modes had a boolean (`true`
/// meaning TLS by the port's convention).
fn tls_mode<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<SmtpTls, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Mode(SmtpTls),
        Flag(bool),
    }
    Ok(match Stored::deserialize(deserializer)? {
        Stored::Mode(mode) => mode,
        Stored::Flag(true) => SmtpTls::Starttls,
        Stored::Flag(false) => SmtpTls::None,
    })
}

/// SMTP as shown: the identity and whether a password is set.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = EmailChannelSmtp)]
#[serde(rename_all = "camelCase")]
pub struct Smtp {
    #[serde(flatten)]
    pub settings: SmtpSettings,
    pub password_set: bool,
}

/// An email channel of the tenant.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = EmailChannel)]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    pub id: Uuid,
    /// The desk's address, lower-cased; replies go to `local+<token>@domain`.
    pub address: String,
    pub name: Option<String>,
    /// The entity tickets opened by mail belong to.
    pub entity_id: Uuid,
    pub inbound: Inbound,
    pub smtp: Option<Smtp>,
    /// The DKIM selector, when a signing key is set.
    pub dkim_selector: Option<String>,
    pub dkim_key_set: bool,
    /// Whether a customer's reply by mail reopens a RESOLVED ticket
    /// (default true).
    pub reopen_on_customer_reply: bool,
    /// A new message from a contact whose open ticket changed within this
    /// many hours opens its ticket with a suggestion to merge it into that
    /// one (0: never; default 72).
    pub case_grouping_hours: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A channel with its secrets opened: what the inbound webhooks, the IMAP
/// reader and the outbound mail use. Never answered to a client.
#[derive(Debug, Clone)]
pub struct ChannelSecrets {
    pub channel: Channel,
    pub inbound_secret: Option<String>,
    pub smtp_password: Option<String>,
    pub dkim_key: Option<String>,
}

/// The addresses of one message, as a comment shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub message_id: String,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
}

/// `email.received`: a message became a ticket or a comment.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailReceived<'a> {
    pub channel_id: Uuid,
    pub ticket_id: Uuid,
    pub comment_id: Option<Uuid>,
    pub new_ticket: bool,
    pub email: &'a Envelope,
}

impl EventPayload for EmailReceived<'_> {
    const NAME: EventName = EventName::EmailReceived;
}

/// `email.bounced`: a delivery failure report named an address, now
/// undeliverable.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmailBounced<'a> {
    pub channel_id: Uuid,
    pub address: &'a str,
    pub contact_id: Option<Uuid>,
    pub message_id: &'a str,
}

impl EventPayload for EmailBounced<'_> {
    const NAME: EventName = EventName::EmailBounced;
}

/// An address lower-cased and trimmed, if it looks like one (something@
/// a domain with a dot, no spaces).
pub fn address(raw: &str) -> Option<String> {
    let address = raw.trim().trim_matches(['<', '>']).to_ascii_lowercase();
    let (local, domain) = address.rsplit_once('@')?;
    let plausible = !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && address.len() <= 255
        && !address.chars().any(|c| c.is_whitespace() || c == ',');
    plausible.then_some(address)
}

/// The reply token in `address` when it is `local+token@domain` of the
/// channel's `desk` address `local@domain`.
pub fn reply_token(desk: &str, address: &str) -> Option<String> {
    let (desk_local, desk_domain) = desk.rsplit_once('@')?;
    let (local, domain) = address.rsplit_once('@')?;
    if !domain.eq_ignore_ascii_case(desk_domain) {
        return None;
    }
    let token = local.strip_prefix(desk_local)?.strip_prefix('+')?;
    (!token.is_empty()).then(|| token.to_ascii_lowercase())
}

/// The address replies to a ticket go to: the desk's with `+token`.
pub fn reply_address(desk: &str, token: &str) -> String {
    match desk.rsplit_once('@') {
        Some((local, domain)) => format!("{local}+{token}@{domain}"),
        None => desk.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_token_is_read_from_the_plus_part_of_the_desk_address() {
        let desk = "support@acme.example";
        assert_eq!(
            reply_token(desk, "support+ab12@ACME.example"),
            Some("ab12".into())
        );
        assert_eq!(reply_token(desk, "support@acme.example"), None);
        assert_eq!(reply_token(desk, "support+ab12@other.example"), None);
        assert_eq!(
            reply_address(desk, "ab12"),
            "support+ab12@acme.example".to_string()
        );
    }

    #[test]
    fn a_tls_flag_stored_before_the_modes_reads_as_a_mode() {
        let read = |tls: serde_json::Value| {
            serde_json::from_value::<SmtpSettings>(
                serde_json::json!({"host": "smtp.acme.example", "port": 587, "tls": tls}),
            )
            .map(|s| s.tls)
            .ok()
        };
        assert_eq!(
            [
                read(serde_json::json!(true)),
                read(serde_json::json!(false)),
                read(serde_json::json!("implicit")),
                read(serde_json::json!("ssl")),
            ],
            [
                Some(SmtpTls::Starttls),
                Some(SmtpTls::None),
                Some(SmtpTls::Implicit),
                None
            ]
        );
    }

    #[test]
    fn addresses_are_lower_cased_and_checked() {
        assert_eq!(
            address(" <Ada@Shop.Example> "),
            Some("ada@shop.example".into())
        );
        assert_eq!(address("not an address"), None);
        assert_eq!(address("ada@localhost"), None);
    }
}
