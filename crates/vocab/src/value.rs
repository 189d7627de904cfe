//! The value bound to a store statement: the one shape every typed value
//! (ids, texts, closed sets, timestamps, JSON) takes on its way to either
//! backend. It lives in the vocabulary, below the store, so that a closed set
//! declared anywhere (`text_enum!`) can say how it binds.

use uuid::Uuid;

use crate::time::Timestamp;

/// A bind value. Every variant holds an `Option` so that a NULL is still
/// sent with its type, as a typed sqlx bind would send it. Closed sets
/// stored as text (statuses, roles, modes) bind their `as_str()`.
#[derive(Debug, Clone)]
pub enum Value {
    Uuid(Option<Uuid>),
    Text(Option<String>),
    Int(Option<i64>),
    Float(Option<f64>),
    Bool(Option<bool>),
    Time(Option<Timestamp>),
    Json(Option<serde_json::Value>),
    Bytes(Option<Vec<u8>>),
}

macro_rules! value_from {
    ($variant:ident, $ty:ty) => {
        impl From<$ty> for Value {
            fn from(value: $ty) -> Self {
                Value::$variant(Some(value.into()))
            }
        }
        impl From<Option<$ty>> for Value {
            fn from(value: Option<$ty>) -> Self {
                Value::$variant(value.map(Into::into))
            }
        }
    };
}

value_from!(Uuid, Uuid);
value_from!(Text, String);
value_from!(Text, &str);
value_from!(Text, &String);
value_from!(Int, i64);
value_from!(Float, f64);
value_from!(Bool, bool);
value_from!(Time, Timestamp);
value_from!(Json, serde_json::Value);
value_from!(Bytes, Vec<u8>);

impl From<&serde_json::Value> for Value {
    fn from(value: &serde_json::Value) -> Self {
        Value::Json(Some(value.clone()))
    }
}

impl From<Option<&serde_json::Value>> for Value {
    fn from(value: Option<&serde_json::Value>) -> Self {
        Value::Json(value.cloned())
    }
}

/// A type of the service's own that is stored as one value: a closed set as
/// its text, a scope list as its text. `T` and `Option<T>` bind through it:
/// a crate above the vocabulary may not write `From<Option<T>> for Value`
/// itself (the orphan rule), so these two impls do it for every such type.
pub trait StoredAs: Sized {
    /// The value stored for `self`.
    fn stored(self) -> Value;

    /// The NULL of the same type, for `None`.
    fn null() -> Value {
        Value::Text(None)
    }
}

impl<T: StoredAs> From<T> for Value {
    fn from(value: T) -> Self {
        value.stored()
    }
}

impl<T: StoredAs> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Self {
        match value {
            Some(value) => value.stored(),
            None => T::null(),
        }
    }
}
