//! Who sends a keyed request, the owner of its stored answer.

use std::net::IpAddr;

use uuid::Uuid;

/// Who sends a keyed request: a key's stored answer is replayed to its
/// own sender only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// An API key, by its id.
    ApiKey(Uuid),
    /// A visitor token, by its chat session.
    Visitor(Uuid),
    /// A rating sent with a signed rating link (no visitor token), by the
    /// chat or ticket the link names.
    RatingLink(Uuid),
    /// A chat start, which carries no credential of its visitor yet: the
    /// client's address, as the widget's limits count it.
    Client(IpAddr),
}

impl Caller {
    /// The form a record stores.
    pub(super) fn recorded(self) -> String {
        match self {
            Caller::ApiKey(id) => format!("key:{id}"),
            Caller::Visitor(session) => format!("visitor:{session}"),
            Caller::RatingLink(record) => format!("rating-link:{record}"),
            Caller::Client(address) => format!("client:{address}"),
        }
    }
}
