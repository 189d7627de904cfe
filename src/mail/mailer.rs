//! Sends an `Email`: over SMTP (lettre) when `SMTP_URL` is set, else as an
//! `.eml` file under `<data dir>/mail/`, readable by any mail client.

use std::path::PathBuf;
use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use uuid::Uuid;

use super::relay::Sending;
use super::send_error::SendError;
use super::{Email, Reply};
use crate::config::Config;

pub enum Mailer {
    Smtp {
        transport: AsyncSmtpTransport<Tokio1Executor>,
        from: Mailbox,
    },
    Files {
        dir: PathBuf,
        from: Mailbox,
    },
}

impl Mailer {
    pub fn new(config: &Config) -> anyhow::Result<Mailer> {
        let from: Mailbox = config
            .smtp_from
            .parse()
            .map_err(|e| anyhow::anyhow!("SMTP_FROM {:?}: {e}", config.smtp_from))?;
        Ok(match &config.smtp_url {
            Some(url) => Mailer::Smtp {
                transport: AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .map_err(|e| anyhow::anyhow!("SMTP_URL: {e}"))?
                    .timeout(Some(Duration::from_secs(30)))
                    .build(),
                from,
            },
            None => Mailer::Files {
                dir: config.data_dir.join("mail"),
                from,
            },
        })
    }

    /// Sends `email`; `id` (the outbox job) becomes its Message-ID and file name.
    pub async fn send(&self, id: Uuid, email: &Email) -> Result<(), SendError> {
        match self {
            Mailer::Smtp { transport, from } => {
                let message = build(id, from, email)?;
                transport.send(message).await.map(|_| ()).map_err(|e| {
                    if e.is_permanent() {
                        SendError::permanent(e.to_string())
                    } else {
                        SendError::transient(e.to_string())
                    }
                })
            }
            Mailer::Files { dir, from } => {
                let message = build(id, from, email)?;
                write_eml(dir, id, &message.formatted())
                    .await
                    .map_err(|e| SendError::transient(format!("writing {}: {e}", dir.display())))
            }
        }
    }
}

impl Mailer {
    /// Sends an email ticket's reply, its Message-ID its own, with its
    /// files' bytes (in the order of `reply.attachments`): signed when the
    /// channel has a DKIM key, through the channel's SMTP server when it
    /// has one, else the service's.
    pub async fn send_reply(
        &self,
        reply: &Reply,
        files: Vec<Vec<u8>>,
        sending: &Sending,
    ) -> Result<(), SendError> {
        let mut message = build_reply(reply, files)?;
        if let Some(signing) = &sending.signing {
            signing.sign(&mut message);
        }
        if let Some(relay) = &sending.relay {
            return smtp_send(&relay.transport()?, message).await;
        }
        match self {
            Mailer::Smtp { transport, .. } => smtp_send(transport, message).await,
            Mailer::Files { dir, .. } => {
                let name = crate::time::new_id();
                write_eml(dir, name, &message.formatted())
                    .await
                    .map_err(|e| SendError::transient(format!("writing {}: {e}", dir.display())))
            }
        }
    }
}

/// One message over SMTP; the server's 5xx is permanent.
async fn smtp_send(
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    message: Message,
) -> Result<(), SendError> {
    transport.send(message).await.map(|_| ()).map_err(|e| {
        if e.is_permanent() {
            SendError::permanent(e.to_string())
        } else {
            SendError::transient(e.to_string())
        }
    })
}

fn mailbox(field: &str, raw: &str) -> Result<Mailbox, SendError> {
    raw.parse()
        .map_err(|e| SendError::permanent(format!("invalid {field} {raw:?}: {e}")))
}

/// A reply's MIME message: plain text, with the headers that thread it;
/// with files, a `multipart/mixed` of the text and each file (`files`
/// holds their bytes, in the order of `reply.attachments`).
pub fn build_reply(reply: &Reply, files: Vec<Vec<u8>>) -> Result<Message, SendError> {
    let mut builder = Message::builder()
        .from(mailbox("sender", &reply.from)?)
        .reply_to(mailbox("reply-to", &reply.reply_to)?)
        .subject(reply.subject.clone())
        .message_id(Some(format!("<{}>", reply.message_id)));
    for to in &reply.to {
        builder = builder.to(mailbox("recipient", to)?);
    }
    for cc in &reply.cc {
        builder = builder.cc(mailbox("copy", cc)?);
    }
    if let Some(parent) = &reply.in_reply_to {
        builder = builder.in_reply_to(format!("<{parent}>"));
    }
    if !reply.references.is_empty() {
        let references: Vec<String> = reply.references.iter().map(|r| format!("<{r}>")).collect();
        builder = builder.references(references.join(" "));
    }
    let text = SinglePart::plain(reply.text.clone());
    let message = if reply.attachments.is_empty() {
        builder.singlepart(text)
    } else {
        let mut parts = MultiPart::mixed().singlepart(text);
        for (file, bytes) in reply.attachments.iter().zip(files) {
            let attachment = Attachment::new(file.filename.clone());
            parts = parts.singlepart(attachment.body(bytes, content_type(&file.content_type)));
        }
        builder.multipart(parts)
    };
    message.map_err(|e| SendError::permanent(format!("building the message: {e}")))
}

/// A file's type as stored; one that does not parse goes as bytes, so the
/// file still reaches the customer.
fn content_type(raw: &str) -> ContentType {
    ContentType::parse(raw)
        .or_else(|_| ContentType::parse("application/octet-stream"))
        .unwrap_or(ContentType::TEXT_PLAIN)
}

/// The MIME message: plain text, plus an HTML alternative when given.
pub fn build(id: Uuid, from: &Mailbox, email: &Email) -> Result<Message, SendError> {
    let to: Mailbox = email
        .to
        .parse()
        .map_err(|e| SendError::permanent(format!("invalid recipient {:?}: {e}", email.to)))?;
    let domain = from.email.domain().to_string();
    let builder = Message::builder()
        .from(from.clone())
        .to(to)
        .subject(email.subject.clone())
        .message_id(Some(format!("<{id}@{domain}>")));
    let message = match &email.html {
        Some(html) => builder.multipart(MultiPart::alternative_plain_html(
            email.text.clone(),
            html.clone(),
        )),
        None => builder.singlepart(SinglePart::plain(email.text.clone())),
    };
    message.map_err(|e| SendError::permanent(format!("building the message: {e}")))
}

/// Writes `<dir>/<id>.eml` atomically (a reader never sees half a file).
async fn write_eml(dir: &std::path::Path, id: Uuid, bytes: &[u8]) -> std::io::Result<()> {
    tokio::fs::create_dir_all(dir).await?;
    let tmp = dir.join(format!(".{id}.eml.tmp"));
    tokio::fs::write(&tmp, bytes).await?;
    tokio::fs::rename(&tmp, dir.join(format!("{id}.eml"))).await
}
