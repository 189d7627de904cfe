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

use serde_json::{Value, json};
use supportdesk::auth::{Scope, ScopeSet};

use crate::support::{TestApp, TestCompany};

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

/// The titles of a list of hits (search or suggestions), in order.
pub(crate) fn titles(hits: &Value) -> Vec<String> {
    hits.as_array()
        .unwrap_or_else(|| panic!("array in {hits}"))
        .iter()
        .map(|hit| hit["title"].as_str().expect("title").to_string())
        .collect()
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

/// An article of the company's entity, published or a draft; answers its
/// id.
pub(crate) async fn article(
    app: &TestApp,
    acme: &TestCompany,
    title: &str,
    content: &str,
    published: bool,
) -> String {
    let body = json!({"title": title, "entityId": acme.entity.id, "content": content,
                      "isPublished": published});
    field(&create(app, &acme.key, body).await, "id").to_string()
}

/// Replaces the company's synonym groups.
pub(crate) async fn set_synonyms(app: &TestApp, key: &str, groups: Value) {
    app.put("/kb/synonyms", key, json!({ "groups": groups }))
        .await
        .assert_status(200);
}

/// Published articles of the company's entity, each `(title, content)`,
/// and the company's synonym groups: where a ranking with synonyms starts.
pub(crate) async fn published_with_synonyms(
    app: &TestApp,
    acme: &TestCompany,
    articles: &[(&str, &str)],
    groups: Value,
) {
    for (title, content) in articles {
        article(app, acme, title, content, true).await;
    }
    set_synonyms(app, &acme.key, groups).await;
}
