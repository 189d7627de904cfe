//! The notices' wire form on the bus.

use uuid::Uuid;

use super::{Ending, Notice, visitors};
use crate::realtime::hub::TicketReads;

impl Notice {
    /// Wire form: `key-ended:<id>:<ending>`, `key-valid:<id>:<0|1>:<0|1|2>`
    /// (writes; ticket reads), `session-valid:<session>:<0|1>:<0|1|2>`,
    /// `session-ended:<session>`, `session-scope-removed:<session>`,
    /// `company-suspended:<id>`,
    /// `visitor-revoked:<session>:<nonce>`, `secret-rotated:<entity>:<hex>`. A node that cannot
    /// read a notice (an older one, during a rolling deploy) ignores it and
    /// its sockets' re-check applies the change instead.
    pub fn encode(&self) -> String {
        match self {
            Notice::KeyEnded { key_id, ending } => format!("key-ended:{key_id}:{}", ending.wire()),
            Notice::SessionEnded { session_id } => format!("session-ended:{session_id}"),
            Notice::SessionScopeRemoved { session_id } => {
                format!("session-scope-removed:{session_id}")
            }
            Notice::SessionValid {
                session_id,
                may_write,
                tickets,
            } => format!(
                "session-valid:{session_id}:{}:{}",
                u8::from(*may_write),
                *tickets as u8
            ),
            Notice::KeyValid {
                key_id,
                may_write,
                tickets,
            } => {
                format!(
                    "key-valid:{key_id}:{}:{}",
                    u8::from(*may_write),
                    *tickets as u8
                )
            }
            Notice::CompanySuspended { company_id } => format!("company-suspended:{company_id}"),
            Notice::VisitorTokensRevoked { session_id, nonce } => {
                format!("visitor-revoked:{session_id}:{nonce}")
            }
            Notice::IdentitySecretRotated { entity_id, current } => {
                format!(
                    "secret-rotated:{entity_id}:{}",
                    visitors::encode_print(current)
                )
            }
        }
    }

    pub fn decode(text: &str) -> Option<Notice> {
        let mut parts = text.splitn(3, ':');
        let kind = parts.next()?;
        let id = Uuid::parse_str(parts.next()?).ok()?;
        let rest = parts.next();
        match (kind, rest) {
            ("key-ended", Some(wire)) => Some(Notice::KeyEnded {
                key_id: id,
                ending: Ending::ALL.into_iter().find(|e| e.wire() == wire)?,
            }),
            ("key-valid", Some(rights)) => {
                let (may_write, tickets) = decode_rights(rights)?;
                Some(Notice::KeyValid {
                    key_id: id,
                    may_write,
                    tickets,
                })
            }
            ("session-valid", Some(rights)) => {
                let (may_write, tickets) = decode_rights(rights)?;
                Some(Notice::SessionValid {
                    session_id: id,
                    may_write,
                    tickets,
                })
            }
            ("session-scope-removed", None) => Some(Notice::SessionScopeRemoved { session_id: id }),
            ("company-suspended", None) => Some(Notice::CompanySuspended { company_id: id }),
            ("session-ended", None) => Some(Notice::SessionEnded { session_id: id }),
            ("visitor-revoked", Some(nonce)) => Some(Notice::VisitorTokensRevoked {
                session_id: id,
                nonce: nonce.parse().ok()?,
            }),
            ("secret-rotated", Some(print)) => Some(Notice::IdentitySecretRotated {
                entity_id: id,
                current: visitors::decode_print(print)?,
            }),
            _ => None,
        }
    }
}

/// `rights` of a `key-valid` or `session-valid` notice: `<0|1>:<0|1|2>`
/// (writes; ticket reads).
fn decode_rights(rights: &str) -> Option<(bool, TicketReads)> {
    let (write, tickets) = rights.split_once(':')?;
    let tickets = match tickets {
        "0" => TicketReads::Nothing,
        "1" => TicketReads::Public,
        "2" => TicketReads::Notes,
        _ => return None,
    };
    let may_write = match write {
        "0" => false,
        "1" => true,
        _ => return None,
    };
    Some((may_write, tickets))
}
