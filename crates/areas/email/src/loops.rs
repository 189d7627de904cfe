//! Whether an incoming message is one a machine sent, so that no ticket
//! is opened from it and nothing is ever sent back to it: auto-replies
//! (`Auto-Submitted`, `X-Autoreply`), bulk and list mail (`Precedence`,
//! `List-Id`), and bounces (a delivery status report or a mailer daemon),
//! which also mark the addresses they report as undeliverable.

use crate::parse::Parsed;

/// What kind of machine sent a message, if one did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Machine {
    /// A delivery failure report for these addresses.
    Bounce(Vec<String>),
    /// An automatic answer (out of office, a ticket confirmation...).
    AutoReply,
    /// Bulk, junk or list mail.
    Bulk,
}

impl Machine {
    /// The reason recorded beside the dropped Message-ID.
    pub fn reason(&self) -> &'static str {
        match self {
            Machine::Bounce(_) => "bounce",
            Machine::AutoReply => "auto-reply",
            Machine::Bulk => "bulk",
        }
    }
}

/// The machine that sent `parsed`, or None for a person's message.
pub fn machine(parsed: &Parsed) -> Option<Machine> {
    let headers = &parsed.machine;
    if headers.bounce {
        return Some(Machine::Bounce(headers.failed_recipients.clone()));
    }
    let precedence = headers.precedence.as_deref().unwrap_or_default();
    if headers.auto_submitted.is_some() || headers.autoreply_header || precedence == "auto_reply" {
        return Some(Machine::AutoReply);
    }
    if matches!(precedence, "bulk" | "junk" | "list") || headers.list_id.is_some() {
        return Some(Machine::Bulk);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    #[test]
    fn auto_replies_bulk_and_lists_are_machines() {
        let msg = |header: &str| {
            parse(format!("From: a@b.example\r\n{header}\r\nSubject: x\r\n\r\nhi").as_bytes())
        };
        assert_eq!(
            machine(&msg("Auto-Submitted: auto-replied")),
            Some(Machine::AutoReply)
        );
        assert_eq!(machine(&msg("Auto-Submitted: no")), None);
        assert_eq!(machine(&msg("Precedence: bulk")), Some(Machine::Bulk));
        assert_eq!(
            machine(&msg("List-Id: <news.b.example>")),
            Some(Machine::Bulk)
        );
        assert_eq!(machine(&msg("X-Autoreply: yes")), Some(Machine::AutoReply));
    }
}
