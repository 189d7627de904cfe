//! Knowledge base: articles, slugs and excerpts, categories, ranked search
//! on both backends, votes. The search corpus is one constant, and every
//! query must give the same top results on SQLite (FTS5) and Postgres
//! (tsvector).

mod answers;
mod articles;
mod categories;
mod corpus;
mod listing;
mod search;
mod search_input;
mod slugs;
mod updates;
mod votes;

use serde_json::Value;
use supportdesk::auth::{Scope, ScopeSet};

use crate::support::TestApp;

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    app.post("/kb/articles", key, body)
        .await
        .assert_status(201)
        .clone()
}

fn field<'a>(body: &'a Value, name: &str) -> &'a str {
    body[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {body}"))
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|a| field(a, "id").to_string())
        .collect()
}

fn read_only_key_scopes() -> ScopeSet {
    ScopeSet::from_scopes([Scope::KbRead])
}

async fn patch_ok(app: &TestApp, key: &str, article: &Value, body: Value) -> Value {
    let path = format!("/kb/articles/{}", field(article, "id"));
    app.patch(&path, key, body).await.assert_status(200).clone()
}

async fn new_category(app: &TestApp, key: &str, body: Value) -> Value {
    app.post("/kb/categories", key, body)
        .await
        .assert_status(201)
        .clone()
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
