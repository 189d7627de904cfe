//! The OpenAPI document says what the API refuses in strings, so a client
//! (or a generator of test data) built from it sends what the API takes: a
//! NUL character is refused in every body and query string, and a field
//! the API trims and requires refuses a blank value. Each pattern is run
//! here against the values the API refuses.

use regex::Regex;
use serde_json::{Map, Value};

fn document() -> Value {
    serde_json::to_value(supportdesk::app::openapi_document()).expect("serialises")
}

/// A string schema's pattern compiled, and whether it lets `value`
/// through; no pattern lets everything through.
fn admits(schema: &Value, value: &str) -> bool {
    let Some(pattern) = schema["pattern"].as_str() else {
        return true;
    };
    let regex = Regex::new(pattern).unwrap_or_else(|e| panic!("pattern {pattern}: {e}"));
    regex.is_match(value)
}

/// A free-text string: a string with no `enum`, `const` or `format`
/// (ids, emails and times have formats that refuse NUL and blanks).
fn is_free_text(schema: &Value) -> bool {
    let typed = match &schema["type"] {
        Value::String(t) => t == "string",
        Value::Array(types) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    typed
        && schema.get("enum").is_none()
        && schema.get("const").is_none()
        && schema.get("format").is_none()
}

/// A string property of a request body or a query parameter: where it is,
/// its schema, and whether the API requires it (listed as required, or
/// at least one character long).
struct Field {
    at: String,
    schema: Value,
    required: bool,
}

/// Follows `$ref`s into the document's components.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.trim_start_matches("#/components/schemas/");
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// Every free-text string reachable from `schema` (properties, items, and
/// the alternatives of `oneOf`/`anyOf`/`allOf`), depth first.
fn collect(doc: &Value, schema: &Value, at: &str, required: bool, out: &mut Vec<Field>) {
    let schema = resolve(doc, schema);
    if is_free_text(schema) {
        let long_enough = schema["minLength"].as_u64().is_some_and(|n| n >= 1);
        out.push(Field {
            at: at.to_string(),
            schema: schema.clone(),
            required: required || long_enough,
        });
    }
    let listed: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let here = format!("{at}.{name}");
            collect(doc, property, &here, listed.contains(&name.as_str()), out);
        }
    }
    if schema["items"].is_object() {
        collect(doc, &schema["items"], &format!("{at}[]"), false, out);
    }
    for combinator in ["oneOf", "anyOf", "allOf"] {
        for alternative in schema[combinator].as_array().into_iter().flatten() {
            collect(doc, alternative, at, required, out);
        }
    }
}

/// Every operation's free-text body properties and query parameters.
fn fields(doc: &Value) -> Vec<Field> {
    let mut out = Vec::new();
    let empty = Map::new();
    let paths = doc["paths"].as_object().unwrap_or(&empty);
    for (path, item) in paths {
        for (method, operation) in item.as_object().unwrap_or(&empty) {
            let name = format!("{} {path}", method.to_ascii_uppercase());
            let contents = operation["requestBody"]["content"].as_object();
            for (media, content) in contents.into_iter().flatten() {
                let at = format!("{name} {media}");
                collect(doc, &content["schema"], &at, false, &mut out);
            }
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let parameter = resolve(doc, parameter);
                if parameter["in"] != "query" {
                    continue;
                }
                let at = format!("{name} ?{}", parameter["name"].as_str().unwrap_or("?"));
                let required = parameter["required"] == true;
                collect(doc, &parameter["schema"], &at, required, &mut out);
            }
        }
    }
    out
}

/// Passwords, tokens and codes: compared with what is stored, so a blank
/// one is refused as a wrong secret (401, or 400 naming the link), not as
/// a blank field.
const SECRETS: &[&str] = &["password", "Password", "token", "Token", "code"];

fn is_secret(at: &str) -> bool {
    let name = at.rsplit(['.', '?']).next().unwrap_or(at);
    SECRETS.iter().any(|suffix| name.ends_with(suffix))
}

#[test]
fn every_body_and_query_string_refuses_nul() {
    let doc = document();
    let fields = fields(&doc);
    assert!(fields.len() > 100, "{} string fields", fields.len());
    let admitting: Vec<&str> = fields
        .iter()
        .filter(|field| admits(&field.schema, "a\u{0}b"))
        .map(|field| field.at.as_str())
        .collect();
    assert_eq!(admitting, Vec::<&str>::new(), "a NUL is refused everywhere");
}

#[test]
fn every_trimmed_required_string_refuses_a_blank_value() {
    let doc = document();
    let required: Vec<Field> = fields(&doc)
        .into_iter()
        .filter(|field| field.required && !is_secret(&field.at))
        .collect();
    assert!(required.len() > 40, "{} required strings", required.len());
    // U+0085 and U+3000 are blank to the API (`str::trim`) too.
    let blanks = ["", " ", "\t\n", "\u{85}", "\u{3000} \u{a0}"];
    let admitting: Vec<String> = required
        .iter()
        .flat_map(|field| {
            blanks
                .iter()
                .filter(|blank| long_enough(field, blank) && admits(&field.schema, blank))
                .map(|blank| format!("{} admits {blank:?}", field.at))
        })
        .collect();
    assert_eq!(admitting, Vec::<String>::new());
}

/// The shared patterns still admit what the API takes: any text without
/// NUL, and for a required one anything with a character besides
/// whitespace in it (U+FEFF is not whitespace to the API).
#[test]
fn the_shared_patterns_admit_what_the_api_takes() {
    let no_nul = Regex::new(supportdesk::openapi::schema::NO_NUL).expect("NO_NUL");
    let non_blank = Regex::new(supportdesk::openapi::schema::NON_BLANK).expect("NON_BLANK");
    for text in ["", " ", "line\nbreak", "ü ✓"] {
        assert!(no_nul.is_match(text), "{text:?}");
    }
    for text in ["x", " x ", "\u{feff}", "a\u{85}b", "\n\n✓\n"] {
        assert!(non_blank.is_match(text), "{text:?}");
    }
}

/// Whether `value` is within the field's `minLength`.
fn long_enough(field: &Field, value: &str) -> bool {
    let min = field.schema["minLength"].as_u64().unwrap_or(0);
    value.chars().count() as u64 >= min
}
