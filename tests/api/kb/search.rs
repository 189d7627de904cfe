//! Ranked search over the corpus: the same top results on both backends,
//! tenancy, the hit shape, excerpts, and the index following edits.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::corpus::{CORPUS, Doc, Place, QUERIES};
use super::{create, field, ids, new_category, urlencode};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    search_ranks_the_corpus_the_same_on_both_backends,
    search_without_an_entity_covers_every_entity_of_the_company,
    search_in_the_other_mode_finds_only_that_modes_articles,
    search_by_another_company_finds_only_its_own,
    hits_have_the_documented_shape,
    a_title_only_match_shows_the_stored_excerpt,
    a_content_match_shows_the_matching_passage,
    an_edit_reaches_the_index,
    unpublished_and_deleted_articles_drop_out,
);

/// The corpus, stored: each article where its `Place` says.
struct Searchable {
    app: TestApp,
    acme: TestCompany,
    other_company: TestCompany,
    live: String,
    by_id: HashMap<String, &'static Doc>,
}

impl Searchable {
    fn keys_of(&self, hits: &Value) -> Vec<&'static str> {
        ids(hits).iter().map(|id| self.by_id[id].key).collect()
    }

    /// `/kb/search` in the main entity, as the main key.
    async fn search(&self, query: &str) -> Value {
        let path = format!(
            "/kb/search?entityId={}&q={}",
            self.acme.entity.id,
            urlencode(query)
        );
        self.app
            .get(&path, &self.acme.key)
            .await
            .assert_status(200)
            .clone()
    }
}

async fn searchable(backend: Backend) -> Searchable {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let other_company = app.company().await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let second = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Two",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity");
    let mut categories = HashMap::new();
    for name in ["Account", "Billing", "Reports"] {
        let c = new_category(&app, key, json!({"name": name, "entityId": acme.entity.id})).await;
        categories.insert(name, c["id"].clone());
    }
    let mut by_id = HashMap::new();
    for d in CORPUS {
        let (k, entity): (&str, uuid::Uuid) = match d.place {
            Place::Main | Place::Draft => (key, acme.entity.id),
            Place::OtherEntity => (key, second.id),
            Place::LiveMode => (&live, acme.entity.id),
            Place::OtherCompany => (&other_company.key, other_company.entity.id),
        };
        let category = match (d.place, d.category) {
            (Place::Main | Place::Draft, Some(name)) => categories[name].clone(),
            _ => Value::Null,
        };
        let article = create(
            &app,
            k,
            json!({"title": d.title, "content": d.content, "entityId": entity,
                   "categoryId": category, "isPublished": d.place != Place::Draft}),
        )
        .await;
        by_id.insert(field(&article, "id").to_string(), d);
    }
    Searchable {
        app,
        acme,
        other_company,
        live,
        by_id,
    }
}

async fn search_ranks_the_corpus_the_same_on_both_backends(backend: Backend) {
    let s = searchable(backend).await;
    for (q, expected) in QUERIES {
        let hits = s.search(q).await;
        let got = s.keys_of(&hits);
        let top: Vec<&str> = got.iter().take(3).copied().collect();
        assert_eq!(top, *expected, "query {q:?} gave {got:?} on {backend:?}");
        for hit in hits.as_array().expect("array") {
            let d = s.by_id[field(hit, "id")];
            assert!(d.place == Place::Main, "{q:?} found {}", d.key);
        }
    }
}

async fn search_without_an_entity_covers_every_entity_of_the_company(backend: Backend) {
    let s = searchable(backend).await;
    // Never drafts, the other mode or another company.
    let r = s
        .app
        .get("/kb/search?q=password%20reset", &s.acme.key)
        .await;
    let got: HashSet<&str> = s.keys_of(r.assert_status(200)).into_iter().collect();
    assert_eq!(got, HashSet::from(["reset-password", "other-entity"]));
}

async fn search_in_the_other_mode_finds_only_that_modes_articles(backend: Backend) {
    let s = searchable(backend).await;
    let r = s.app.get("/kb/search?q=password", &s.live).await;
    let got = s.keys_of(r.assert_status(200));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|k| k.starts_with("live-")), "{got:?}");
}

async fn search_by_another_company_finds_only_its_own(backend: Backend) {
    let s = searchable(backend).await;
    let r = s
        .app
        .get("/kb/search?q=password", &s.other_company.key)
        .await;
    assert_eq!(s.keys_of(r.assert_status(200)), vec!["other-company"]);
}

async fn hits_have_the_documented_shape(backend: Backend) {
    let s = searchable(backend).await;
    // A bare array of {id, title, slug, excerpt, category}.
    let hits = s.search("password").await;
    let first = hits[0].as_object().expect("hit");
    let keys: HashSet<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        HashSet::from(["id", "title", "slug", "excerpt", "category"])
    );
    assert_eq!(hits[0]["title"], "Reset your password");
    assert_eq!(hits[0]["slug"], "reset-your-password");
    assert_eq!(
        hits[0]["category"],
        json!({"name": "Account", "slug": "account"})
    );
}

async fn a_title_only_match_shows_the_stored_excerpt(backend: Backend) {
    let s = searchable(backend).await;
    let hits = s.search("portability").await;
    assert_eq!(hits[0]["category"], Value::Null);
    assert!(field(&hits[0], "excerpt").starts_with("Every ticket can be exported"));
}

async fn a_content_match_shows_the_matching_passage(backend: Backend) {
    let s = searchable(backend).await;
    // Deep in the content: that passage, not the stored excerpt.
    let hits = s.search("backup codes").await;
    let hit = &hits[0];
    let excerpt = field(hit, "excerpt");
    assert!(excerpt.contains("backup codes"), "{excerpt}");
    assert!(
        !excerpt.contains('\u{2}') && !excerpt.contains('\u{3}'),
        "{excerpt:?}"
    );
    let full = s
        .app
        .get(&format!("/kb/articles/{}", field(hit, "id")), &s.acme.key)
        .await;
    let stored = field(full.assert_status(200), "excerpt").to_string();
    assert!(!stored.contains("backup"), "{stored}");
}

/// Retitles the article found by "backup codes" so that only "recovery"
/// finds it; returns its id.
async fn retitle_two_factor(s: &Searchable) -> String {
    let hits = s.search("backup codes").await;
    let id = field(&hits[0], "id").to_string();
    s.app
        .patch(
            &format!("/kb/articles/{id}"),
            &s.acme.key,
            json!({"title": "Second factor sign-in", "content": "Use recovery keys."}),
        )
        .await
        .assert_status(200);
    id
}

async fn an_edit_reaches_the_index(backend: Backend) {
    let s = searchable(backend).await;
    // A new title is found, the old one is not.
    let id = retitle_two_factor(&s).await;
    assert_eq!(s.search("backup codes").await, json!([]));
    assert_eq!(ids(&s.search("recovery").await), vec![id]);
}

async fn unpublished_and_deleted_articles_drop_out(backend: Backend) {
    let s = searchable(backend).await;
    let key = s.acme.key.as_str();
    let id = retitle_two_factor(&s).await;
    s.app
        .patch(
            &format!("/kb/articles/{id}"),
            key,
            json!({"isPublished": false}),
        )
        .await
        .assert_status(200);
    assert_eq!(s.search("recovery").await, json!([]));
    let refund_first = ids(&s.search("refund").await)[0].clone();
    s.app
        .delete(&format!("/kb/articles/{refund_first}"), key)
        .await
        .assert_status(200);
    assert_eq!(
        s.keys_of(&s.search("refund").await),
        vec!["cancel-subscription", "billing-faq"]
    );
}
