//! Reading an incoming message (`mail-parser`): its ids, addresses,
//! subject, text and HTML (character sets decoded), its attachments and
//! inline images, and the headers that say it was sent by a machine. A
//! message that cannot be read whole still gives what could be read: a
//! mail is never lost for being malformed.

use mail_parser::{Address, HeaderValue, MessageParser, MimeHeaders};

use crate::model::address;

/// Longest subject kept (a ticket's subject column takes 255 characters).
pub const SUBJECT_MAX: usize = 255;

/// A file a message carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub filename: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
    /// An image shown in the HTML body (`Content-ID`), not attached.
    pub inline: bool,
}

/// The headers that say a machine sent the message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    /// `Auto-Submitted` other than `no` (RFC 3834).
    pub auto_submitted: Option<String>,
    /// `Precedence` (bulk, junk, list, auto_reply).
    pub precedence: Option<String>,
    pub list_id: Option<String>,
    /// `X-Autoreply`, `X-Autorespond` or `X-Auto-Response-Suppress: All`.
    pub autoreply_header: bool,
    /// A delivery status report (`multipart/report; report-type=
    /// delivery-status`) or a message from a mailer daemon.
    pub bounce: bool,
    /// The recipients a bounce reports as failed.
    pub failed_recipients: Vec<String>,
}

/// What a message says, owned.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// The Message-ID without its angle brackets.
    pub message_id: Option<String>,
    pub in_reply_to: Vec<String>,
    pub references: Vec<String>,
    /// The sender's address, lower-cased.
    pub from: Option<String>,
    pub from_name: Option<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub text: Option<String>,
    pub html: Option<String>,
    pub parts: Vec<Part>,
    pub machine: Machine,
    /// Whether the message could not be read whole (no headers, no
    /// sender): the ticket keeps the raw message.
    pub malformed: bool,
}

/// Reads `raw`. Never fails: what cannot be parsed gives a `malformed`
/// message with the raw bytes as its text.
pub fn parse(raw: &[u8]) -> Parsed {
    let Some(message) = MessageParser::default().parse(raw) else {
        return unreadable(raw);
    };
    let from_addr = message.from().and_then(Address::first);
    let from = from_addr.and_then(|a| a.address()).and_then(address);
    let malformed = from.is_none();
    let mut parts = Vec::new();
    for part in message.attachments() {
        let content_type = part
            .content_type()
            .map(|ct| match ct.subtype() {
                Some(sub) => format!("{}/{}", ct.ctype(), sub),
                None => ct.ctype().to_string(),
            })
            .unwrap_or_else(|| "application/octet-stream".into())
            .to_ascii_lowercase();
        let inline = part.content_id().is_some()
            && content_type.starts_with("image/")
            && part
                .content_disposition()
                .is_none_or(|cd| !cd.is_attachment());
        let bytes = match part.message() {
            // An attached message is kept as it was sent.
            Some(inner) => inner.raw_message().to_vec(),
            None => part.contents().to_vec(),
        };
        let fallback = if part.is_message() {
            "message.eml"
        } else {
            "attachment"
        };
        parts.push(Part {
            filename: part.attachment_name().unwrap_or(fallback).to_string(),
            content_type,
            bytes,
            inline,
        });
    }
    let header = |name: &str| {
        message
            .header_raw(name)
            .map(|v| v.trim().to_ascii_lowercase())
    };
    let auto_submitted = header("Auto-Submitted").filter(|v| !v.starts_with("no"));
    let report = message.content_type().is_some_and(|ct| {
        ct.ctype().eq_ignore_ascii_case("multipart")
            && ct
                .subtype()
                .is_some_and(|s| s.eq_ignore_ascii_case("report"))
            && ct
                .attribute("report-type")
                .is_some_and(|t| t.eq_ignore_ascii_case("delivery-status"))
    });
    let daemon = from.as_deref().is_some_and(|f| {
        let local = f.split('@').next().unwrap_or_default();
        local == "mailer-daemon" || local == "postmaster"
    });
    let mut failed: Vec<String> = message
        .header_raw("X-Failed-Recipients")
        .map(|v| v.split(',').filter_map(address).collect())
        .unwrap_or_default();
    if report || daemon {
        failed.extend(final_recipients(raw));
    }
    failed.sort();
    failed.dedup();
    let machine = Machine {
        auto_submitted,
        precedence: header("Precedence"),
        list_id: header("List-Id"),
        autoreply_header: message.header_raw("X-Autoreply").is_some()
            || message.header_raw("X-Autorespond").is_some()
            || header("X-Auto-Response-Suppress").is_some_and(|v| v.contains("all")),
        bounce: report || daemon,
        failed_recipients: failed,
    };
    let subject: String = message
        .subject()
        .unwrap_or_default()
        .trim()
        .chars()
        .take(SUBJECT_MAX)
        .collect();
    Parsed {
        message_id: message
            .message_id()
            .map(clean_id)
            .filter(|id| !id.is_empty()),
        in_reply_to: ids(message.in_reply_to()),
        references: ids(message.references()),
        from_name: from_addr
            .and_then(|a| a.name())
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty()),
        malformed,
        from,
        to: addresses(message.to()),
        cc: addresses(message.cc()),
        subject,
        // A message with no sender and no text part is read as text
        // whole: what could be read is kept on the ticket.
        text: message
            .body_text(0)
            .map(|t| t.into_owned())
            .or_else(|| malformed.then(|| String::from_utf8_lossy(raw).into_owned())),
        html: message.body_html(0).map(|t| t.into_owned()),
        parts,
        machine,
    }
}

/// What an unparsable message still gives: its bytes as text.
fn unreadable(raw: &[u8]) -> Parsed {
    Parsed {
        text: Some(String::from_utf8_lossy(raw).into_owned()),
        malformed: true,
        ..Parsed::default()
    }
}

/// A Message-ID as compared: no angle brackets or spaces.
pub fn clean_id(raw: &str) -> String {
    raw.trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim()
        .to_string()
}

fn ids(value: &HeaderValue) -> Vec<String> {
    let raw: Vec<String> = match value {
        HeaderValue::Text(text) => text.split_whitespace().map(str::to_string).collect(),
        HeaderValue::TextList(list) => list.iter().map(|t| t.to_string()).collect(),
        _ => Vec::new(),
    };
    raw.iter()
        .map(|id| clean_id(id))
        .filter(|id| !id.is_empty() && id.len() <= 998)
        .collect()
}

fn addresses(value: Option<&Address>) -> Vec<String> {
    value
        .map(|list| {
            list.iter()
                .filter_map(|a| a.address())
                .filter_map(address)
                .collect()
        })
        .unwrap_or_default()
}

/// The `Final-Recipient:` addresses of a delivery status report, read from
/// the raw bytes (the report part's layout varies by server).
fn final_recipients(raw: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(raw)
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("final-recipient")
                .then(|| value.rsplit(';').next().and_then(address))
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latin1_message_is_decoded_and_its_ids_read() {
        let raw = b"From: =?iso-8859-1?q?Ren=E9?= <Rene@Shop.Example>\r\n\
To: support@acme.example\r\nSubject: =?iso-8859-1?q?Caf=E9?=\r\n\
Message-ID: <a1@shop.example>\r\nIn-Reply-To: <b2@acme.example>\r\n\
References: <c3@acme.example> <b2@acme.example>\r\n\
Content-Type: text/plain; charset=iso-8859-1\r\n\r\nBonjour caf\xe9\r\n";
        let parsed = parse(raw);
        assert_eq!(parsed.from.as_deref(), Some("rene@shop.example"));
        assert_eq!(parsed.from_name.as_deref(), Some("René"));
        assert_eq!(parsed.subject, "Café");
        assert_eq!(parsed.message_id.as_deref(), Some("a1@shop.example"));
        assert_eq!(parsed.in_reply_to, ["b2@acme.example"]);
        assert_eq!(parsed.references, ["c3@acme.example", "b2@acme.example"]);
        assert!(
            parsed
                .text
                .as_deref()
                .is_some_and(|t| t.contains("Bonjour café"))
        );
        assert!(!parsed.malformed);
    }

    #[test]
    fn garbage_is_malformed_but_kept() {
        let parsed = parse(b"\x00\x01 not a message at all");
        assert!(parsed.malformed);
        assert!(parsed.text.is_some());
    }

    #[test]
    fn a_delivery_report_names_its_failed_recipient() {
        let raw = b"From: MAILER-DAEMON@mx.example\r\nTo: support@acme.example\r\n\
Subject: Undelivered\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n\
--b\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\n\
Reporting-MTA: dns; mx.example\r\n\r\nFinal-Recipient: rfc822; Gone@Shop.Example\r\nAction: failed\r\n--b--\r\n";
        let parsed = parse(raw);
        assert!(parsed.machine.bounce);
        assert_eq!(parsed.machine.failed_recipients, ["gone@shop.example"]);
    }
}
