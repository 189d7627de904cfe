//! Eight writers doing random creates, updates and deletes across the five
//! types while a follower reads the feed: at the end the follower's mirror
//! equals the store, and each writer's creates appear in the order the
//! writer made them (a change committed later never comes first).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use super::{Follower, Key, id_of, new_article, new_session, new_ticket, store_records};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(eight_writers_and_a_follower_end_with_the_same_records);

const WRITERS: u64 = 8;
const STEPS: usize = 30;

/// A small deterministic generator, one per writer.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % sides as u64).expect("small")
    }

    fn pick(&mut self, ids: &[String]) -> Option<String> {
        (!ids.is_empty()).then(|| ids[self.roll(ids.len())].clone())
    }
}

/// What one writer holds, and the records it created, in order.
#[derive(Default)]
struct Writer {
    tickets: Vec<String>,
    sessions: Vec<String>,
    articles: Vec<String>,
    created: Vec<Key>,
}

async fn write(app: Arc<TestApp>, acme: Arc<TestCompany>, shared: String, seed: u64) -> Vec<Key> {
    let key = &acme.key;
    let mut dice = Dice(seed * 0x9E37_79B9 + 1);
    let mut w = Writer::default();
    for step in 0..STEPS {
        match dice.roll(13) {
            0 => {
                let id = id_of(&new_ticket(&app, &acme, &format!("w{seed} s{step}")).await);
                w.created.push(("ticket".into(), id.clone()));
                w.tickets.push(id);
            }
            1 => {
                if let Some(id) = dice.pick(&w.tickets) {
                    let status = ["IN_PROGRESS", "RESOLVED", "CLOSED", "OPEN"][dice.roll(4)];
                    app.patch(&format!("/tickets/{id}"), key, json!({"status": status}))
                        .await
                        .assert_status(200);
                }
            }
            2 | 11 => {
                let target = if dice.roll(2) == 0 {
                    Some(shared.clone())
                } else {
                    dice.pick(&w.tickets)
                };
                if let Some(id) = target {
                    let comment = app
                        .post(
                            &format!("/tickets/{id}/comments"),
                            key,
                            json!({"body": "note"}),
                        )
                        .await
                        .assert_status(201)
                        .clone();
                    w.created.push(("comment".into(), id_of(&comment)));
                }
            }
            3 => {
                if let Some(id) = dice.pick(&w.tickets) {
                    app.delete(&format!("/tickets/{id}"), key)
                        .await
                        .assert_status(200);
                    w.tickets.retain(|t| *t != id);
                }
            }
            4 => {
                let id = id_of(&new_session(&app, &acme).await);
                w.created.push(("chat_session".into(), id.clone()));
                w.sessions.push(id);
            }
            5 => {
                if let Some(id) = dice.pick(&w.sessions) {
                    let message = app
                        .post(
                            &format!("/chat/sessions/{id}/messages"),
                            key,
                            json!({"body": format!("m{step}"), "senderType": "visitor"}),
                        )
                        .await
                        .assert_status(201)
                        .clone();
                    w.created.push(("chat_message".into(), id_of(&message)));
                }
            }
            6 => {
                if let Some(id) = dice.pick(&w.sessions) {
                    app.patch(
                        &format!("/chat/sessions/{id}"),
                        key,
                        json!({"status": "CLOSED"}),
                    )
                    .await
                    .assert_status(200);
                    w.sessions.retain(|s| *s != id);
                }
            }
            7 => {
                let id = id_of(&new_article(&app, &acme, &format!("w{seed} s{step}")).await);
                w.created.push(("kb_article".into(), id.clone()));
                w.articles.push(id);
            }
            8 => {
                if let Some(id) = dice.pick(&w.articles) {
                    app.patch(
                        &format!("/kb/articles/{id}"),
                        key,
                        json!({"title": format!("w{seed} s{step} edited")}),
                    )
                    .await
                    .assert_status(200);
                }
            }
            9 => {
                if let Some(id) = dice.pick(&w.articles) {
                    app.delete(&format!("/kb/articles/{id}"), key)
                        .await
                        .assert_status(200);
                    w.articles.retain(|a| *a != id);
                }
            }
            10 => {
                if let Some(id) = dice.pick(&w.articles) {
                    app.post(
                        &format!("/kb/articles/{id}/helpful"),
                        key,
                        json!({"helpful": true}),
                    )
                    .await
                    .assert_status(200);
                }
            }
            _ => {
                let priority = ["LOW", "MEDIUM", "HIGH", "URGENT"][dice.roll(4)];
                app.patch(
                    &format!("/tickets/{shared}"),
                    key,
                    json!({"priority": priority}),
                )
                .await
                .assert_status(200);
            }
        }
    }
    w.created
}

async fn eight_writers_and_a_follower_end_with_the_same_records(backend: Backend) {
    let app = Arc::new(TestApp::spawn(backend).await);
    let acme = Arc::new(app.company().await);
    let shared = id_of(&new_ticket(&app, &acme, "Shared").await);
    let done = Arc::new(AtomicBool::new(false));
    let follower = {
        let (app, key, done) = (app.clone(), acme.key.clone(), done.clone());
        tokio::spawn(async move {
            let mut follower = Follower::default();
            while !done.load(Ordering::SeqCst) {
                follower.catch_up(&app, &key).await;
                // A client polling the feed now and then while the
                // writers run: its reads land between their commits.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            follower
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|seed| tokio::spawn(write(app.clone(), acme.clone(), shared.clone(), seed)))
        .collect();
    let mut created = Vec::new();
    for writer in writers {
        created.push(writer.await.expect("writer"));
    }
    done.store(true, Ordering::SeqCst);
    let mut follower = follower.await.expect("follower");
    follower.catch_up(&app, &acme.key).await;

    assert_eq!(follower.mirror, store_records(&app, &acme).await);
    let first_seen: HashMap<Key, usize> = follower
        .seen
        .iter()
        .enumerate()
        .rev()
        .map(|(position, entry)| (super::key_of(entry), position))
        .collect();
    for records in &created {
        let positions: Vec<usize> = records.iter().map(|key| first_seen[key]).collect();
        let mut sorted = positions.clone();
        sorted.sort_unstable();
        assert_eq!(positions, sorted, "a writer's creates in its order");
    }
}
