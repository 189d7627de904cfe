//! PATCH fields that tell "absent" from "null".

use serde::Deserialize;

/// A PATCH field: absent, explicitly null (clear it), or a value. Use with
/// `#[serde(default)]` on the field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    #[default]
    Missing,
    Null,
    Value(T),
}

impl<T> Patch<T> {
    pub fn is_missing(&self) -> bool {
        matches!(self, Patch::Missing)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(|v| v.map_or(Patch::Null, Patch::Value))
    }
}
