//! The API's two rules for every string it is sent, stated in the document.
//!
//! - The JSON and query extractors refuse a NUL character in any string
//!   (no column can store it): every free-text string of a request body or
//!   query gets the pattern [`schema::NO_NUL`].
//! - A text field is trimmed before its length counts: one at least a
//!   character long (`minLength`) refuses a blank value, and gets
//!   [`schema::NON_BLANK`].
//!
//! The shared field schemas (`schema::name`, `schema::text`) carry their
//! patterns themselves; this pass gives them to the fields declared with
//! utoipa's attributes (`value_type = String, min_length = 1`), whose
//! `pattern` takes a literal only, so the rule is written here once instead
//! of as a copy of the regex on each field. A string that has a pattern, a
//! format or an enum already refuses NUL and blanks by them, and is left
//! as it is; so are the strings of responses only.

use std::collections::BTreeSet;

use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, Schema, SchemaType, Type};
use utoipa::openapi::{OpenApi as Document, RefOr};

use super::schema;

/// Adds the patterns to the strings of every request body and query
/// parameter, and to the components they reference.
pub fn state_string_rules(doc: &mut Document) {
    let mut referenced = BTreeSet::new();
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ];
        for operation in operations.into_iter().flatten() {
            if let Some(RefOr::T(body)) = operation.request_body.as_mut() {
                for content in body.content.values_mut() {
                    if let RefOr::T(content) = content
                        && let Some(schema) = content.schema.as_mut()
                    {
                        complete(schema, &mut referenced);
                    }
                }
            }
            for parameter in operation.parameters.iter_mut().flatten() {
                if let RefOr::T(parameter) = parameter
                    && parameter.parameter_in == ParameterIn::Query
                    && let Some(schema) = parameter.schema.as_mut()
                {
                    complete(schema, &mut referenced);
                }
            }
        }
    }
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    // A component reached from a request names others in turn.
    let mut done = BTreeSet::new();
    while let Some(name) = referenced.difference(&done).next().cloned() {
        done.insert(name.clone());
        if let Some(schema) = components.schemas.get_mut(&name) {
            complete(schema, &mut referenced);
        }
    }
}

/// Completes `schema` and what it nests; the names of the components it
/// references go into `referenced`.
fn complete(schema: &mut RefOr<Schema>, referenced: &mut BTreeSet<String>) {
    let schema = match schema {
        RefOr::Ref(reference) => {
            let name = reference
                .ref_location
                .rsplit('/')
                .next()
                .unwrap_or_default();
            referenced.insert(name.to_string());
            return;
        }
        RefOr::T(schema) => schema,
    };
    match schema {
        Schema::Object(object) => {
            if is_string(&object.schema_type)
                && object.pattern.is_none()
                && object.format.is_none()
                && object.enum_values.is_none()
            {
                let required = object.min_length.is_some_and(|min| min >= 1);
                let pattern = if required {
                    schema::NON_BLANK
                } else {
                    schema::NO_NUL
                };
                object.pattern = Some(pattern.to_string());
            }
            for property in object.properties.values_mut() {
                complete(property, referenced);
            }
            if let Some(additional) = object.additional_properties.as_deref_mut()
                && let AdditionalProperties::RefOr(value) = additional
            {
                complete(value, referenced);
            }
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(item) = &mut array.items {
                complete(item, referenced);
            }
        }
        Schema::OneOf(one_of) => one_of
            .items
            .iter_mut()
            .for_each(|s| complete(s, referenced)),
        Schema::AllOf(all_of) => all_of
            .items
            .iter_mut()
            .for_each(|s| complete(s, referenced)),
        Schema::AnyOf(any_of) => any_of
            .items
            .iter_mut()
            .for_each(|s| complete(s, referenced)),
        _ => {}
    }
}

/// A string, or a string or null.
fn is_string(schema_type: &SchemaType) -> bool {
    match schema_type {
        SchemaType::Type(Type::String) => true,
        SchemaType::Array(types) => types.contains(&Type::String),
        _ => false,
    }
}
