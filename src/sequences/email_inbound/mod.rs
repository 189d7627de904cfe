//! An incoming email, from any source (the IMAP reader, a provider's
//! webhook), becoming a ticket or a comment in one transaction: the
//! message's Message-ID recorded (the same message twice is one comment),
//! automatic mail and floods recognised and dropped (bounces mark their
//! addresses undeliverable), the ticket it answers found (`thread`), its
//! contact matched, its files stored (`files`), a resolved ticket reopened
//! (unless its channel turns that off) and a snoozed one woken by the
//! customer's reply, `email.received`, and for a new ticket the knowledge
//! base's job that keeps its suggestions for the agent and, when its
//! contact has a recent open case, the suggestion to merge it there
//! (`grouping`).
//!
//! [`receive`] is a plain function over handles: a reader marks its
//! message as read only after it returns `Ok`, so a crash before the
//! commit loses nothing and one after it duplicates nothing.

mod dropped;
mod files;
mod grouping;
pub mod thread;

use std::time::Duration;

use sha2::Digest;
use uuid::Uuid;
use vocab::actor::Actor;

use self::dropped::{drop_message, dropped_machine};
use self::files::{StagedFiles, comment_body, full_text, stage};
use self::thread::By;
use crate::attachments::Attachments;
use crate::auth::Tenant;
use crate::db::{Db, Tx};
use crate::email::loops::{self, Machine};
use crate::email::model::{Channel, Direction, EmailReceived, Envelope};
use crate::email::parse::{self, Parsed};
use crate::email::sanitize::{RemoteImages, sanitize};
use crate::email::store::messages::{self, NewMessage};
use crate::email::trim;
use crate::error::StoreError;
use crate::events;
use crate::sequences::contacts::Matcher;
use crate::sequences::ticket_suggestions::Suggestions;
use crate::sla::cache::SlaCache;
use crate::tickets::model::{
    AuthorType, NewComment, NewTicket, Priority, TicketChannel, TicketStatus, TicketUpdate,
};
use crate::tickets::store::{self as ticket_store, subscribers::Subscribers};
use crate::time::{Clock, Timestamp};

/// How much mail one sender, and one channel, may send before the rest is
/// dropped as a flood (recorded, so a re-fetch is dropped too).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Messages per sender per hour, over every channel of the tenant.
    pub per_sender_per_hour: i64,
    /// Messages per channel per minute, whoever sends them.
    pub per_channel_per_minute: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_sender_per_hour: 60,
            per_channel_per_minute: 600,
        }
    }
}

/// The handles an incoming message is stored with.
pub struct Handles<'a> {
    pub db: &'a Db,
    pub clock: &'a Clock,
    pub sla: &'a SlaCache,
    pub subscribers: &'a Subscribers,
    pub attachments: &'a Attachments,
    pub limits: Limits,
}

impl<'a> From<&'a crate::state::AppState> for Handles<'a> {
    fn from(state: &'a crate::state::AppState) -> Self {
        Handles {
            db: &state.db,
            clock: &state.clock,
            sla: &state.sla,
            subscribers: &state.ticket_subscribers,
            attachments: &state.attachments,
            limits: Limits::default(),
        }
    }
}

/// Characters of a message kept for a reply to quote.
const EXCERPT_MAX: usize = 2000;

/// What became of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A new ticket.
    Opened { ticket_id: Uuid },
    /// A comment on the ticket it answers.
    Commented { ticket_id: Uuid, comment_id: Uuid },
    /// Its Message-ID was already recorded: nothing changed.
    Duplicate,
    /// A machine's or a flood's: recorded, no ticket, nothing sent back.
    Dropped { reason: &'static str },
}

/// Stores the message `raw` that arrived on the tenant's `channel`.
pub async fn receive(
    handles: &Handles<'_>,
    tenant: &Tenant,
    channel: &Channel,
    raw: &[u8],
) -> Result<Outcome, StoreError> {
    let parsed = parse::parse(raw);
    // A message without an id gets one from its bytes: fetched twice, it
    // is still the same message.
    let message_id = parsed.message_id.clone().unwrap_or_else(|| {
        let digest = sha2::Sha256::digest(raw);
        format!("{}@no-message-id.invalid", hex::encode(&digest[..16]))
    });
    let machine = loops::machine(&parsed);
    let own = parsed.from.as_deref() == Some(channel.address.as_str());
    let mut staged = StagedFiles::default();
    // An agent answering from their mail client: found before the
    // transaction, counted as theirs only when the reply token proves it.
    let mut agent = None;
    if machine.is_none() && !own {
        let staging = stage(handles.attachments, &parsed, raw, &mut staged).await;
        let found = match (staging, parsed.from.as_deref()) {
            (Ok(()), Some(sender)) => agent_of(handles.db, tenant, sender).await,
            (Ok(()), None) => Ok(None),
            (Err(err), _) => Err(err),
        };
        match found {
            Ok(found) => agent = found,
            Err(err) => {
                staged.discard(&handles.attachments.storage).await;
                return Err(err);
            }
        }
    }
    let db = handles.db.acting(Actor::system());
    let outcome = match db.begin().await {
        Ok(mut tx) => {
            let message = Incoming {
                parsed: &parsed,
                message_id: &message_id,
                agent,
            };
            let decided = decide(
                handles, &mut tx, tenant, channel, message, machine, own, &staged,
            )
            .await;
            match decided {
                Ok(outcome) => tx.commit().await.map(|()| outcome),
                Err(err) => Err(err),
            }
        }
        Err(err) => Err(err),
    };
    match outcome {
        Ok(outcome @ (Outcome::Opened { .. } | Outcome::Commented { .. })) => {
            staged.publish(&handles.attachments.storage, tenant).await;
            Ok(outcome)
        }
        other => {
            staged.discard(&handles.attachments.storage).await;
            other
        }
    }
}

/// What to do with the message, done in `tx`: a duplicate, a dropped
/// message (our own, a machine's, a flood) or a person's, stored.
#[allow(clippy::too_many_arguments)] // the message and what was learnt of it
async fn decide(
    handles: &Handles<'_>,
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    message: Incoming<'_>,
    machine: Option<Machine>,
    own: bool,
    staged: &StagedFiles,
) -> Result<Outcome, StoreError> {
    let (parsed, message_id) = (message.parsed, message.message_id);
    let now = handles.clock.now();
    if messages::known(tx, tenant, message_id).await? {
        return Ok(Outcome::Duplicate);
    }
    if own {
        return drop_message(tx, tenant, channel, parsed, message_id, "own address", now).await;
    }
    if let Some(machine) = machine {
        return dropped_machine(tx, tenant, channel, parsed, message_id, machine, now).await;
    }
    let sender = parsed.from.as_deref();
    let hour_ago = now.minus(Duration::from_secs(3600));
    let (by_sender, _) = messages::recent_counts(tx, tenant, sender, channel.id, hour_ago).await?;
    let minute_ago = now.minus(Duration::from_secs(60));
    let (_, by_channel) = messages::recent_counts(tx, tenant, None, channel.id, minute_ago).await?;
    if by_sender >= handles.limits.per_sender_per_hour
        || by_channel >= handles.limits.per_channel_per_minute
    {
        return drop_message(tx, tenant, channel, parsed, message_id, "rate limited", now).await;
    }
    store(handles, tx, tenant, channel, message, staged, now).await
}

/// The message, its id, and the agent whose address sent it.
struct Incoming<'a> {
    parsed: &'a Parsed,
    message_id: &'a str,
    /// The company's active agent whose address sent it, if any.
    agent: Option<(Uuid, String)>,
}

/// A person's message: a comment on the ticket it answers, or a new
/// ticket.
async fn store(
    handles: &Handles<'_>,
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    message: Incoming<'_>,
    staged: &StagedFiles,
    now: Timestamp,
) -> Result<Outcome, StoreError> {
    let Incoming {
        parsed,
        message_id,
        agent,
    } = message;
    let signer = handles.attachments.signer(now);
    let file_ids = staged.record(tx, tenant, now).await?;
    let body = comment_body(parsed, &staged.refused);
    let excerpt: String = trim::new_part(&full_text(parsed))
        .chars()
        .take(EXCERPT_MAX)
        .collect();
    let html = parsed
        .html
        .as_deref()
        .map(|html| sanitize(html, RemoteImages::Dropped));
    let sender = parsed.from.as_deref();
    let envelope = Envelope {
        message_id: message_id.to_string(),
        from: sender.unwrap_or_default().to_string(),
        to: parsed.to.clone(),
        cc: parsed.cc.clone(),
    };
    let copies: Vec<String> = parsed
        .to
        .iter()
        .chain(parsed.cc.iter())
        .filter(|a| !is_desk(&channel.address, a) && Some(a.as_str()) != sender)
        .cloned()
        .collect();
    let found = thread::find(tx, tenant, channel, parsed, &signer).await?;
    let (ticket_id, comment_id) = match found {
        Some(found) => {
            let agent = agent.filter(|_| found.by == By::Token);
            if let Some((id, name)) = &agent {
                tx.act_as(Actor::agent(*id, name.clone()));
            }
            let new = NewComment {
                body,
                author_id: agent.as_ref().map(|(id, _)| *id),
                author_type: match agent {
                    Some(_) => AuthorType::Agent,
                    None => AuthorType::Customer,
                },
                is_internal: false,
                attachment_ids: file_ids,
                assign_on_reply: None,
                // What arrived by mail was sent already: no undo window.
                delivery: crate::tickets::delivery::Delivery::Now,
            };
            let ticket_id = found.ticket.id;
            let customer = new.author_type == AuthorType::Customer;
            let (comment, ticket) =
                ticket_store::add_comment_in(tx, tenant, ticket_id, new, None, now, &signer)
                    .await?;
            if customer
                && ticket.status == TicketStatus::Resolved
                && channel.reopen_on_customer_reply
            {
                let reopen = TicketUpdate {
                    status: Some(TicketStatus::Open),
                    ..TicketUpdate::default()
                };
                ticket_store::update_in(tx, tenant, ticket_id, reopen, None, None, now, &signer)
                    .await?;
            }
            messages::open_thread(tx, tenant, ticket_id, Some(channel.id), &copies).await?;
            (ticket_id, Some(comment.id))
        }
        None => {
            let subject = match parsed.subject.trim() {
                "" => "(no subject)".to_string(),
                subject => subject.to_string(),
            };
            let new = NewTicket {
                subject,
                description: Some(body),
                priority: Priority::Medium,
                entity_id: channel.entity_id,
                visitor_email: parsed.from.clone(),
                channel: TicketChannel::Email,
                team_id: None,
                chat_session_id: None,
                tags: Vec::new(),
                custom_fields: Default::default(),
                attachment_ids: file_ids,
            };
            let contacts = Matcher { tenant, now };
            // What the knowledge base suggests for the ticket is kept for
            // the agent by a job, queued with it as a ticket's create does.
            let ticket = ticket_store::create_in(
                tx,
                handles.db,
                handles.sla,
                handles.subscribers,
                tenant,
                new,
                now,
                &signer,
                (&contacts, Some(&Suggestions)),
            )
            .await?;
            messages::open_thread(tx, tenant, ticket.id, Some(channel.id), &copies).await?;
            grouping::suggest_case(tx, tenant, channel, &ticket, now, &signer).await?;
            (ticket.id, None)
        }
    };
    let record = NewMessage {
        message_id,
        channel_id: Some(channel.id),
        ticket_id: Some(ticket_id),
        comment_id,
        direction: Direction::In,
        sender,
        envelope: Some(&envelope),
        html: html.as_deref(),
        excerpt: Some(&excerpt),
    };
    messages::record(tx, tenant, &record, now).await?;
    let received = EmailReceived {
        channel_id: channel.id,
        ticket_id,
        comment_id,
        new_ticket: comment_id.is_none(),
        email: &envelope,
    };
    // An entry of its ticket (as it now is) in the change feed, where the
    // automations' triggers on `email.received` read it.
    let ticket = ticket_store::load(&mut *tx, tenant, ticket_id, &signer).await?;
    let change = crate::tickets::events::ticket_change(&ticket)?;
    events::emit_change(tx, tenant, &received, Some(&change), now).await?;
    Ok(match comment_id {
        Some(comment_id) => Outcome::Commented {
            ticket_id,
            comment_id,
        },
        None => Outcome::Opened { ticket_id },
    })
}

/// Whether `address` is the desk's own (with or without a reply token).
fn is_desk(desk: &str, address: &str) -> bool {
    address == desk || crate::email::model::reply_token(desk, address).is_some()
}

/// The active agent of the company whose address is `sender`.
async fn agent_of(
    db: &Db,
    tenant: &Tenant,
    sender: &str,
) -> Result<Option<(Uuid, String)>, StoreError> {
    let user = crate::users::store::find_by_email(db, tenant.company_id, sender).await?;
    Ok(user
        .filter(|user| user.is_active)
        .map(|user| (user.id, user.name)))
}
