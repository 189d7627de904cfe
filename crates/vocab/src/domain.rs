//! The closed sets of the domain (statuses, priorities, roles…) as enums.
//! `text_enum!` gives each one its wire spelling in JSON and in TEXT
//! columns, so a value read from a request, a row or a cache is either one
//! of the set or an error: nothing downstream compares strings.

/// A text that is not one of an enum's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValue {
    pub value: String,
    pub allowed: &'static [&'static str],
}

impl std::fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown value {:?}, expected one of: {}",
            self.value,
            self.allowed.join(", ")
        )
    }
}

impl std::error::Error for UnknownValue {}

/// An enum over a closed set of texts. Each variant is written
/// `Variant = "wire"`; the enum gets `as_str()`, `FromStr`, `Display`,
/// `ALL`, `NAMES` (the wire texts, in order, for enum schemas and messages),
/// serde with the wire text, and sqlx TEXT encoding on every backend.
#[macro_export]
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $text:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::domain::UnknownValue;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                match value {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::domain::UnknownValue {
                        value: value.to_string(),
                        allowed: Self::NAMES,
                    }),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <::std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                text.parse().map_err(::serde::de::Error::custom)
            }
        }

        $crate::decoded_from_text!($name, |text| text.parse::<$name>());

        impl<'q, DB: ::sqlx::Database> ::sqlx::Encode<'q, DB> for $name
        where
            &'q str: ::sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut <DB as ::sqlx::Database>::ArgumentBuffer,
            ) -> Result<::sqlx::encode::IsNull, ::sqlx::error::BoxDynError> {
                <&'q str as ::sqlx::Encode<'q, DB>>::encode(self.as_str(), buf)
            }
        }

        impl $crate::value::StoredAs for $name {
            fn stored(self) -> $crate::value::Value {
                $crate::value::Value::from(self.as_str())
            }
        }
    };
}

/// A type stored as TEXT on both backends and read back by parsing the
/// text with `$parse` (a closure from `&str` to `Result<Self, E>` where `E`
/// is an error): an unreadable stored value is a decode error, never a
/// default. Used by `text_enum!` and by the types with their own stored
/// spelling (modes, scope lists).
#[macro_export]
macro_rules! decoded_from_text {
    ($name:ty, $parse:expr) => {
        impl<DB: ::sqlx::Database> ::sqlx::Type<DB> for $name
        where
            str: ::sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <str as ::sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <str as ::sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'r, DB: ::sqlx::Database> ::sqlx::Decode<'r, DB> for $name
        where
            &'r str: ::sqlx::Decode<'r, DB>,
        {
            fn decode(
                value: <DB as ::sqlx::Database>::ValueRef<'r>,
            ) -> Result<Self, ::sqlx::error::BoxDynError> {
                let text = <&'r str as ::sqlx::Decode<'r, DB>>::decode(value)?;
                let parse: fn(&str) -> Result<$name, _> = $parse;
                Ok(parse(text)?)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    text_enum! {
        enum Colour {
            Red = "RED",
            LightBlue = "light_blue",
        }
    }

    #[test]
    fn every_value_round_trips_through_its_wire_spelling() {
        for colour in Colour::ALL {
            let json = serde_json::to_string(colour).expect("serialize");
            assert_eq!(json, format!("\"{}\"", colour.as_str()));
            let back: Colour = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back, *colour);
            assert_eq!(colour.as_str().parse::<Colour>(), Ok(*colour));
        }
        assert_eq!(Colour::NAMES, &["RED", "light_blue"]);
        assert_eq!(Colour::LightBlue.to_string(), "light_blue");
    }

    #[test]
    fn a_text_outside_the_set_is_refused() {
        let err = "red".parse::<Colour>().expect_err("case matters");
        assert_eq!(err.allowed, Colour::NAMES);
        assert!(serde_json::from_str::<Colour>("\"BLUE\"").is_err());
    }
}
