//! Permission scopes (docs/api.md, "Authentication") as a compact bit set.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

crate::text_enum! {
    /// One permission a key (or a session) may hold, with its wire spelling.
    pub enum Scope {
        TicketsRead = "tickets:read",
        TicketsWrite = "tickets:write",
        TicketsDelete = "tickets:delete",
        KbRead = "kb:read",
        KbWrite = "kb:write",
        KbDelete = "kb:delete",
        ChatRead = "chat:read",
        ChatWrite = "chat:write",
        UsersRead = "users:read",
        UsersWrite = "users:write",
        EntitiesRead = "entities:read",
        EntitiesWrite = "entities:write",
        ReportsRead = "reports:read",
        SettingsRead = "settings:read",
        SettingsWrite = "settings:write",
        ApiKeysRead = "api-keys:read",
        ApiKeysWrite = "api-keys:write",
        BillingRead = "billing:read",
        BillingWrite = "billing:write",
        TeamsRead = "teams:read",
        TeamsWrite = "teams:write",
        AttachmentsRead = "attachments:read",
        AttachmentsWrite = "attachments:write",
        AuditRead = "audit:read",
        ContactsRead = "contacts:read",
        ContactsWrite = "contacts:write",
        ContactsErase = "contacts:erase",
        AutomationsRead = "automations:read",
        AutomationsWrite = "automations:write",
        MacrosRead = "macros:read",
        MacrosWrite = "macros:write",
        ChannelsRead = "channels:read",
        ChannelsWrite = "channels:write",
        AiRead = "ai:read",
        AiWrite = "ai:write",
        RolesRead = "roles:read",
        RolesWrite = "roles:write",
        /// A key may name an agent as a comment's author (`authorId`).
        CommentsAsAgent = "comments:as_agent",
    }
}

impl Scope {
    /// The scope named `value`, if this build knows it.
    pub fn parse(value: &str) -> Option<Scope> {
        value.parse().ok()
    }
}

// A u64: the scopes outgrew 32 bits. The bit is only ever in memory (the
// stored and wire forms are names), so its width can grow again.
fn bit(scope: Scope) -> u64 {
    1 << (scope as u64)
}

// Every scope must have a bit of its own.
const _: () = assert!(Scope::ALL.len() <= u64::BITS as usize);

/// A set of scopes; stored as a space-separated list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScopeSet(u64);

impl ScopeSet {
    pub fn all() -> Self {
        ScopeSet(Scope::ALL.iter().fold(0, |acc, s| acc | bit(*s)))
    }

    pub fn empty() -> Self {
        ScopeSet(0)
    }

    pub fn from_scopes(scopes: impl IntoIterator<Item = Scope>) -> Self {
        ScopeSet(scopes.into_iter().fold(0, |acc, s| acc | bit(s)))
    }

    pub fn contains(&self, scope: Scope) -> bool {
        self.0 & bit(scope) != 0
    }

    pub fn is_subset_of(&self, other: &ScopeSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// The scopes in both sets.
    pub fn intersection(self, other: ScopeSet) -> Self {
        ScopeSet(self.0 & other.0)
    }

    pub fn without(self, scope: Scope) -> Self {
        ScopeSet(self.0 & !bit(scope))
    }

    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        Scope::ALL.iter().copied().filter(|s| self.contains(*s))
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.iter().map(Scope::as_str).collect()
    }

    /// Parses names separated by commas or spaces; `all` means every scope.
    /// Returns the unknown names on failure.
    pub fn parse_list(text: &str) -> Result<ScopeSet, Vec<String>> {
        let mut set = ScopeSet::empty();
        let mut unknown = Vec::new();
        for name in text
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            if name == "all" {
                set = ScopeSet::all();
            } else if let Some(scope) = Scope::parse(name) {
                set.0 |= bit(scope);
            } else {
                unknown.push(name.to_string());
            }
        }
        if unknown.is_empty() {
            Ok(set)
        } else {
            Err(unknown)
        }
    }

    /// The stored form: names joined by spaces.
    pub fn to_stored(&self) -> String {
        self.names().join(" ")
    }
}

impl ScopeSet {
    /// The scopes of a stored list. A name this build does not know is left
    /// out rather than refused: during a rolling deploy that adds a scope,
    /// nodes of the older build read keys written by the newer one, and must
    /// keep serving them with the scopes they know (a key never gains a
    /// permission this way, it only lacks the new one on old nodes). Each
    /// unknown name is logged once per process.
    pub fn from_stored(text: &str) -> ScopeSet {
        let mut set = ScopeSet::empty();
        for name in text
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            match Scope::parse(name) {
                Some(scope) => set.0 |= bit(scope),
                None if name == "all" => set = ScopeSet::all(),
                None => log_unknown_once(name),
            }
        }
        set
    }
}

impl ScopeSet {
    /// The names of a stored list this build does not know, which
    /// `from_stored` leaves out (`all` is known).
    pub fn unknown_in_stored(text: &str) -> Vec<String> {
        text.split([',', ' '])
            .map(str::trim)
            .filter(|name| !name.is_empty() && *name != "all" && Scope::parse(name).is_none())
            .map(str::to_string)
            .collect()
    }
}

/// Logs a stored scope name this build does not know, the first time this
/// process reads it. The set of names logged is bounded, so damaged rows
/// full of distinct garbage cannot grow it without end.
fn log_unknown_once(name: &str) {
    use std::collections::HashSet;
    use std::sync::{LazyLock, Mutex, PoisonError};
    const REMEMBERED_MAX: usize = 256;
    static LOGGED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);
    let mut logged = LOGGED.lock().unwrap_or_else(PoisonError::into_inner);
    if logged.len() < REMEMBERED_MAX && logged.insert(name.to_string()) {
        tracing::warn!(
            scope = name,
            "a stored API key names a scope this build does not know; ignored"
        );
    }
}

crate::decoded_from_text!(ScopeSet, |text| {
    Ok::<_, std::convert::Infallible>(ScopeSet::from_stored(text))
});

impl crate::value::StoredAs for ScopeSet {
    fn stored(self) -> crate::value::Value {
        crate::value::Value::from(self.to_stored())
    }
}

impl Serialize for ScopeSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ScopeSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(deserializer)?;
        ScopeSet::parse_list(&names.join(",")).map_err(|unknown| {
            serde::de::Error::custom(format!("unknown scopes: {}", unknown.join(", ")))
        })
    }
}

/// The scope names, as an enum schema for the OpenAPI document.
pub fn scope_name_schema() -> utoipa::openapi::ObjectBuilder {
    let names: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(names))
}

impl utoipa::PartialSchema for ScopeSet {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        utoipa::openapi::schema::ArrayBuilder::new()
            .items(scope_name_schema())
            .description(Some("Permission scopes"))
            .into()
    }
}

impl utoipa::ToSchema for ScopeSet {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_store_round_trip() {
        let set = ScopeSet::parse_list("tickets:read, kb:write").expect("known scopes");
        assert!(set.contains(Scope::TicketsRead));
        assert!(!set.contains(Scope::TicketsWrite));
        assert_eq!(ScopeSet::parse_list(&set.to_stored()), Ok(set));
        assert_eq!(
            ScopeSet::parse_list("all").map(|s| s.iter().count()),
            Ok(Scope::ALL.len())
        );
        assert_eq!(
            ScopeSet::parse_list("tickets:read,nope"),
            Err(vec!["nope".to_string()])
        );
        assert!(set.is_subset_of(&ScopeSet::all()));
        assert!(!ScopeSet::all().is_subset_of(&set));
    }

    #[test]
    fn the_unknown_names_of_a_stored_list_are_those_this_build_does_not_know() {
        assert_eq!(
            ScopeSet::unknown_in_stored("tickets:read gone:away all,kb:read new"),
            vec!["gone:away".to_string(), "new".to_string()]
        );
        assert!(ScopeSet::unknown_in_stored("tickets:read kb:write").is_empty());
    }

    #[test]
    fn a_stored_list_with_an_unknown_scope_keeps_the_known_ones() {
        let set = ScopeSet::from_stored("tickets:read gone:away kb:write");
        assert_eq!(
            set,
            ScopeSet::from_scopes([Scope::TicketsRead, Scope::KbWrite])
        );
    }
}
