//! An agent's public reply on an email ticket leaving by email: the
//! comment (the tickets store's step) and, in the same transaction, the
//! email queued to the requester and the copied addresses, from the
//! channel's address, with a Message-ID recorded as the ticket's (so the
//! customer's answer threads), `In-Reply-To` the customer's last message,
//! `References` the thread, `Reply-To` the address with the ticket's reply
//! token, the ticket number in the subject, the message answered quoted
//! and the reply's files attached (read from storage when it is sent). Undeliverable addresses (they bounced) and the desk's own are
//! never mailed. The email is queued when the reply is delivered: in the
//! comment's transaction for a reply sent at once, by the delivery pass
//! (`MailReply`, in the delivery's transaction) for one held for the undo
//! window or scheduled, so a cancelled reply is never mailed and a
//! delivered one is mailed once.

use uuid::Uuid;

use crate::attachments::links::Signer;
use crate::attachments::store as attachment_store;
use crate::auth::Tenant;
use crate::db::{Db, Tx};
use crate::email::model::{Direction, Envelope, reply_address};
use crate::email::store::channels;
use crate::email::store::messages::{self, NewMessage};
use crate::error::StoreError;
use crate::mail::{self, Reply, ReplyFile};
// The tickets area crate itself, not the service module that re-exports it
// (that module also starts the delivery pass, which uses this one).
use crate::time::{Timestamp, new_id};
use ::tickets::model::{AuthorType, Comment, NewComment, Ticket};
use ::tickets::store as ticket_store;

/// Message-IDs of the thread a reply's `References` lists (the newest).
const REFERENCES_MAX: i64 = 20;

/// Adds a comment to the ticket; an agent's public one on an email ticket
/// is also queued as an email, in the comment's transaction.
#[allow(clippy::too_many_arguments)] // the reply's whole request
pub async fn comment(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    new: NewComment,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Comment, StoreError> {
    let mailed = new.author_type == AuthorType::Agent
        && !new.is_internal
        && matches!(new.delivery, ::tickets::delivery::Delivery::Now);
    let mut tx = db.begin().await?;
    let (comment, ticket) =
        ticket_store::add_comment_in(&mut tx, tenant, ticket_id, new, expected, now, signer)
            .await?;
    if mailed {
        queue(&mut tx, tenant, &ticket, &comment, now).await?;
    }
    tx.commit().await?;
    Ok(comment)
}

/// The delivery pass's step: a held or scheduled reply, delivered now,
/// queued as the email of its email ticket in the delivery's transaction.
pub struct MailReply;

impl ticket_store::ReplySent for MailReply {
    fn sent<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        ticket: &'a Ticket,
        comment: &'a Comment,
        now: Timestamp,
    ) -> futures::future::BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if comment.is_internal {
                return Ok(());
            }
            queue(tx, tenant, ticket, comment, now).await
        })
    }
}

/// Queues `comment` as the email of its email ticket (none for a ticket
/// that does not talk by email, or with no one left to mail).
async fn queue(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    comment: &Comment,
    now: Timestamp,
) -> Result<(), StoreError> {
    let Some(thread) = messages::thread(tx, tenant, ticket.id).await? else {
        return Ok(());
    };
    let Some(channel_id) = thread.channel_id else {
        return Ok(());
    };
    let channel = channels::find_in(tx, tenant, channel_id).await?;
    let desk = channel.address.as_str();
    let mut recipients: Vec<String> = ticket.visitor_email.iter().cloned().collect();
    recipients.extend(thread.cc.0.iter().cloned());
    recipients.retain(|a| a != desk && crate::email::model::reply_token(desk, a).is_none());
    let undeliverable = messages::undeliverable(tx, tenant, &recipients).await?;
    recipients.retain(|a| !undeliverable.contains(a));
    let mut recipients = recipients.into_iter();
    let Some(to) = recipients.next() else {
        return Ok(());
    };
    let cc: Vec<String> = recipients.collect();
    let (references, last) = messages::history(tx, tenant, ticket.id, REFERENCES_MAX).await?;
    let domain = desk.rsplit_once('@').map_or("localhost", |(_, d)| d);
    let message_id = format!("{}@{domain}", new_id().simple());
    let mut text = comment.body.clone();
    if let Some(last) = &last
        && let Some(excerpt) = last.excerpt.as_deref().filter(|e| !e.trim().is_empty())
    {
        let who = last.sender.as_deref().unwrap_or("you");
        text.push_str(&format!(
            "\n\nOn {}, {who} wrote:\n",
            last.created_at.0.format("%a, %-d %b %Y %H:%M UTC")
        ));
        for line in excerpt.lines() {
            text.push_str(&format!("> {line}\n"));
        }
    }
    let mut attachments = Vec::with_capacity(comment.attachments.len());
    for file in &comment.attachments {
        let stored = attachment_store::find(&mut *tx, tenant, file.id).await?;
        attachments.push(ReplyFile {
            filename: stored.filename,
            content_type: stored.content_type,
            company_id: stored.company_id,
            sha256: stored.sha256,
        });
    }
    let reply = Reply {
        from: desk.to_string(),
        to: vec![to.clone()],
        cc: cc.clone(),
        reply_to: reply_address(desk, &thread.reply_token),
        subject: subject(&ticket.subject, &ticket.ticket_number),
        text,
        message_id: message_id.clone(),
        in_reply_to: last.as_ref().map(|l| l.message_id.clone()),
        references,
        attachments,
        channel_id: Some(channel.id),
    };
    mail::queue_reply(tx, tenant, &reply).await?;
    let envelope = Envelope {
        message_id: message_id.clone(),
        from: desk.to_string(),
        to: vec![to],
        cc,
    };
    let record = NewMessage {
        message_id: &message_id,
        channel_id: Some(channel.id),
        ticket_id: Some(ticket.id),
        comment_id: Some(comment.id),
        direction: Direction::Out,
        sender: Some(desk),
        envelope: Some(&envelope),
        html: None,
        excerpt: None,
    };
    messages::record(tx, tenant, &record, now).await?;
    Ok(())
}

/// `Re: <subject> [TKT-000042]`, without stacking `Re:` or the number.
fn subject(subject: &str, number: &str) -> String {
    let mut base = subject.trim();
    while let Some(rest) = base
        .strip_prefix("Re:")
        .or_else(|| base.strip_prefix("RE:"))
        .or_else(|| base.strip_prefix("re:"))
    {
        base = rest.trim_start();
    }
    if base.contains(number) {
        format!("Re: {base}")
    } else {
        format!("Re: {base} [{number}]")
    }
}

#[cfg(test)]
mod tests {
    use super::subject;

    #[test]
    fn the_subject_carries_the_number_once() {
        assert_eq!(subject("Printer", "TKT-000001"), "Re: Printer [TKT-000001]");
        assert_eq!(
            subject("Re: RE: Printer [TKT-000001]", "TKT-000001"),
            "Re: Printer [TKT-000001]"
        );
    }
}
