//! The change feed (`GET /changes`): a follower's mirror, commit order,
//! cursors and their expiry, scopes. Shared helpers here; the tests in the
//! submodules.

mod chat_retention;
mod concurrency;
mod cursors;
mod mirror;
mod numbering;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use supportdesk::changes::store as feed;
use supportdesk::db::Query;
use supportdesk::retention::{self, Policy};
use supportdesk::time::Timestamp;

use crate::support::{TestApp, TestCompany};

/// A record of the mirror: (type, id).
pub type Key = (String, String);

/// What a client following the feed holds, and what it saw.
#[derive(Default)]
pub struct Follower {
    pub cursor: Option<String>,
    pub mirror: BTreeMap<Key, Value>,
    /// Every entry read, in feed order.
    pub seen: Vec<Value>,
}

impl Follower {
    /// Reads pages until one comes back short, applying every entry.
    pub async fn catch_up(&mut self, app: &TestApp, key: &str) {
        loop {
            let body = read(app, key, self.cursor.as_deref(), 50).await;
            let entries = body["data"].as_array().expect("data").clone();
            for entry in &entries {
                self.apply(entry);
            }
            self.cursor = Some(body["nextCursor"].as_str().expect("nextCursor").to_string());
            if entries.len() < 50 {
                return;
            }
        }
    }

    fn apply(&mut self, entry: &Value) {
        let key = key_of(entry);
        match entry["op"].as_str() {
            Some("upsert") => {
                self.mirror.insert(key, entry["record"].clone());
            }
            Some("delete") => {
                assert!(entry["record"].is_null(), "a delete carries no record");
                self.mirror.remove(&key);
            }
            other => panic!("unexpected op {other:?}"),
        }
        self.seen.push(entry.clone());
    }
}

pub fn key_of(entry: &Value) -> Key {
    (
        entry["type"].as_str().expect("type").to_string(),
        entry["id"].as_str().expect("id").to_string(),
    )
}

/// One page of the feed after `since` (from the start when None).
pub async fn read(app: &TestApp, key: &str, since: Option<&str>, limit: usize) -> Value {
    let path = match since {
        Some(cursor) => format!("/changes?since={cursor}&limit={limit}"),
        None => format!("/changes?limit={limit}"),
    };
    app.get(&path, key).await.assert_status(200).clone()
}

/// Every record of the five types the store holds, as their GETs return
/// them.
pub async fn store_records(app: &TestApp, acme: &TestCompany) -> BTreeMap<Key, Value> {
    let key = &acme.key;
    let mut records = BTreeMap::new();
    for ticket in list_all(app, key, "/tickets").await {
        let id = id_of(&ticket);
        let full = app
            .get(&format!("/tickets/{id}"), key)
            .await
            .assert_status(200)
            .clone();
        records.insert(("ticket".to_string(), id.clone()), full);
        for comment in list_all(app, key, &format!("/tickets/{id}/comments")).await {
            records.insert(("comment".to_string(), id_of(&comment)), comment);
        }
    }
    for session in list_all(app, key, "/chat/sessions").await {
        let id = id_of(&session);
        let mut full = app
            .get(&format!("/chat/sessions/{id}"), key)
            .await
            .assert_status(200)
            .clone();
        let messages = full
            .as_object_mut()
            .and_then(|object| object.remove("messages"))
            .expect("messages");
        for message in messages.as_array().expect("messages").iter() {
            records.insert(
                ("chat_message".to_string(), id_of(message)),
                message.clone(),
            );
        }
        records.insert(("chat_session".to_string(), id), full);
    }
    for article in list_all(app, key, "/kb/articles").await {
        let id = id_of(&article);
        let full = app
            .get(&format!("/kb/articles/{id}"), key)
            .await
            .assert_status(200)
            .clone();
        records.insert(("kb_article".to_string(), id), full);
    }
    records
}

/// Every item of an offset-paged list.
async fn list_all(app: &TestApp, key: &str, path: &str) -> Vec<Value> {
    let mut items = Vec::new();
    loop {
        let page = app
            .get(&format!("{path}?limit=100&offset={}", items.len()), key)
            .await
            .assert_status(200)
            .clone();
        let data = page["data"].as_array().expect("data").clone();
        let short = data.len() < 100;
        items.extend(data);
        if short {
            return items;
        }
    }
}

pub fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

pub async fn new_ticket(app: &TestApp, acme: &TestCompany, subject: &str) -> Value {
    app.post(
        "/tickets",
        &acme.key,
        json!({"entityId": acme.entity.id, "subject": subject}),
    )
    .await
    .assert_status(201)
    .clone()
}

pub async fn new_session(app: &TestApp, acme: &TestCompany) -> Value {
    app.post(
        "/chat/sessions",
        &acme.key,
        json!({"entityId": acme.entity.id, "visitorName": "Vera"}),
    )
    .await
    .assert_status(201)
    .clone()
}

pub async fn new_article(app: &TestApp, acme: &TestCompany, title: &str) -> Value {
    app.post(
        "/kb/articles",
        &acme.key,
        json!({"entityId": acme.entity.id, "title": title, "content": "Body of the article",
               "isPublished": true}),
    )
    .await
    .assert_status(201)
    .clone()
}

/// Numbers every feed entry still without a number, as the numbering
/// worker does each second (Postgres; SQLite numbers entries as written).
pub async fn number_every_entry(app: &TestApp) {
    let db = &app.state.db;
    for tenant in feed::tenants_with_unnumbered(db, 1000)
        .await
        .expect("tenants")
    {
        feed::number_committed(db, &tenant).await.expect("numbered");
    }
}

/// Makes every event of the database older than retention and runs a
/// pass; returns how many events it deleted.
pub async fn expire_every_event(app: &TestApp) -> u64 {
    let old = Timestamp::from_datetime(Timestamp::now().0 - chrono::Duration::hours(2));
    Query::new("UPDATE events SET created_at = $1")
        .bind(old)
        .execute(&app.state.db)
        .await
        .expect("events made old");
    let policy = Policy {
        retention: Duration::from_secs(60),
        job_retention: Duration::from_secs(60),
        chat_retention: None,
    };
    let report = retention::run_pass(
        &app.state.db,
        &app.state.attachments,
        policy,
        app.state.clock.now(),
    )
    .await
    .expect("pass")
    .expect("lock");
    report.table("events").expect("events").rows_deleted
}
