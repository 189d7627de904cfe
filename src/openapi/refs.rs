//! Records inside generic envelopes as references to their own schemas.
//!
//! utoipa writes the type argument of a generic schema inline: the items of
//! `CursorPage<Ticket>` are a copy of the `Ticket` schema rather than a
//! reference to it, so a client generated from the document gets a type of
//! its own for them (`CursorPageTicketDataItem`) instead of its `Ticket`.
//! The document is completed here: a record schema (an object with
//! properties, or a composition) written inline that is identical to a
//! named component becomes a reference to that component. Identical means the same type
//! (both come from the type's one `ToSchema`), so nothing else changes.

use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, Schema};
use utoipa::openapi::{OpenApi as Document, Ref, RefOr};

/// Replaces every inline copy of a named record schema, nested in the
/// components, by a reference to it.
pub fn reference_named_records(doc: &mut Document) {
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    let named: Vec<(String, Schema)> = components
        .schemas
        .iter()
        .filter_map(|(name, schema)| match schema {
            RefOr::T(schema) if is_record(schema) => Some((name.clone(), schema.clone())),
            _ => None,
        })
        .collect();
    for schema in components.schemas.values_mut() {
        // The component itself stays: only what it nests is replaced.
        if let RefOr::T(schema) = schema {
            replace_nested(schema, &named);
        }
    }
}

/// A schema worth a name of its own: an object with properties, or a
/// composition (a record with flattened parts, a tagged enum). Plain
/// strings and numbers stay inline.
fn is_record(schema: &Schema) -> bool {
    match schema {
        Schema::Object(object) => !object.properties.is_empty(),
        Schema::AllOf(_) | Schema::OneOf(_) | Schema::AnyOf(_) => true,
        _ => false,
    }
}

fn replace(schema: &mut RefOr<Schema>, named: &[(String, Schema)]) {
    let RefOr::T(inline) = schema else {
        return;
    };
    if is_record(inline)
        && let Some((name, _)) = named.iter().find(|(_, record)| record == inline)
    {
        *schema = RefOr::Ref(Ref::from_schema_name(name.clone()));
        return;
    }
    replace_nested(inline, named);
}

fn replace_nested(schema: &mut Schema, named: &[(String, Schema)]) {
    match schema {
        Schema::Object(object) => {
            for property in object.properties.values_mut() {
                replace(property, named);
            }
            if let Some(additional) = object.additional_properties.as_deref_mut()
                && let AdditionalProperties::RefOr(value) = additional
            {
                replace(value, named);
            }
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(item) = &mut array.items {
                replace(item, named);
            }
        }
        Schema::OneOf(one_of) => one_of.items.iter_mut().for_each(|s| replace(s, named)),
        Schema::AllOf(all_of) => all_of.items.iter_mut().for_each(|s| replace(s, named)),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(|s| replace(s, named)),
        _ => {}
    }
}
