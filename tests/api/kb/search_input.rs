//! Search input: parameters, limits, any query text, scopes; and the
//! query plan on 50,000 articles.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};

use super::{create, field, urlencode};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    search_parameters_are_validated,
    search_returns_10_hits_by_default_and_at_most_50,
    no_query_text_causes_a_server_error,
    nul_and_overlong_queries_are_refused,
    a_quoted_query_is_searched,
    search_needs_kb_read,
    search_on_50000_articles_is_one_indexed_query,
);

/// An app whose company has 60 published "Widget guide i" articles.
async fn with_widgets(backend: Backend) -> (TestApp, TestCompany) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for i in 0..60 {
        create(
            &app,
            &acme.key,
            json!({"title": format!("Widget guide {i}"), "entityId": acme.entity.id,
                   "isPublished": true}),
        )
        .await;
    }
    (app, acme)
}

async fn search_parameters_are_validated(backend: Backend) {
    let (app, acme) = with_widgets(backend).await;
    let key = acme.key.as_str();
    for bad in ["", "?q=", "?q=%20%20", "?entityId=x"] {
        let r = app.get(&format!("/kb/search{bad}"), key).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], "q", "{bad}");
    }
    for bad in ["limit=0", "limit=-3", "limit=ten", "entityId=nope"] {
        app.get(&format!("/kb/search?q=widget&{bad}"), key)
            .await
            .assert_error(400, "validation_failed");
    }
    app.get(
        &format!("/kb/search?q=widget&entityId={}", uuid::Uuid::now_v7()),
        key,
    )
    .await
    .assert_error(400, "validation_failed");
}

async fn search_returns_10_hits_by_default_and_at_most_50(backend: Backend) {
    let (app, acme) = with_widgets(backend).await;
    let key = acme.key.as_str();
    let r = app.get("/kb/search?q=widget", key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 10);
    let r = app.get("/kb/search?q=widget&limit=500", key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 50);
    let r = app.get("/kb/search?q=guid&limit=3", key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 3);
}

async fn no_query_text_causes_a_server_error(backend: Backend) {
    let (app, acme) = with_widgets(backend).await;
    // FTS syntax, quotes, operators, stop words only, odd Unicode.
    let nasty = [
        "\"",
        "\"widget",
        "widget\"",
        "*",
        "widget*",
        "(",
        "widget)",
        "NEAR(widget guide)",
        "widget OR",
        "AND",
        "-widget",
        "widget:guide",
        "title:widget",
        "^widget",
        "'",
        "\\",
        "!!!",
        "the of and",
        "widget & | ! <->",
        ":*",
        "日本語 widget",
        "ﬁle",
        "%",
        "_",
        "{}[]",
        "x".repeat(300).as_str(),
        "widget   guide  ",
    ]
    .map(str::to_string);
    for q in nasty {
        let r = app
            .get(&format!("/kb/search?q={}", urlencode(&q)), &acme.key)
            .await;
        assert_eq!(r.status, 200, "query {q:?}: {}", r.text);
        assert!(r.body.is_array(), "query {q:?}: {}", r.text);
    }
}

async fn nul_and_overlong_queries_are_refused(backend: Backend) {
    let (app, acme) = with_widgets(backend).await;
    // NUL is refused in every text field, search included (Postgres
    // cannot hold it): a clear 400, never a 500.
    app.get("/kb/search?q=a%00b", &acme.key)
        .await
        .assert_error(400, "validation_failed");
    let r = app
        .get(&format!("/kb/search?q={}", "w".repeat(501)), &acme.key)
        .await;
    r.assert_error(400, "validation_failed");
}

async fn a_quoted_query_is_searched(backend: Backend) {
    let (app, acme) = with_widgets(backend).await;
    let r = app.get("/kb/search?q=%22widget%22", &acme.key).await;
    assert_eq!(r.assert_status(200).as_array().expect("array").len(), 10);
}

async fn search_needs_kb_read(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let no_kb = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::KbRead),
        )
        .await;
    let r = app.get("/kb/search?q=widget", &no_kb).await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"], "Missing required permission: kb:read");
}

async fn search_on_50000_articles_is_one_indexed_query(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme: TestCompany = app.company().await;
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    bulk_insert(&app, &acme, 50_000).await;

    let plan = supportdesk::kb::store::explain_search(
        &app.state.db,
        &tenant,
        Some(acme.entity.id),
        "zebra cross",
        10,
    )
    .await
    .expect("explain");
    let text = plan.join("\n");
    match backend {
        Backend::Postgres => {
            assert!(
                text.contains("Bitmap Index Scan on kb_articles_search"),
                "plan:\n{text}"
            );
        }
        Backend::Sqlite => {
            assert!(
                plan[0].starts_with("SCAN kb_articles_fts VIRTUAL TABLE INDEX"),
                "plan:\n{text}"
            );
            assert!(
                text.contains("SEARCH a USING INTEGER PRIMARY KEY"),
                "plan:\n{text}"
            );
            assert!(!text.contains("TEMP B-TREE"), "plan:\n{text}");
        }
    }

    // And it answers: the 50 zebra articles, 10 at a time.
    let r = app
        .get(
            &format!("/kb/search?q=zebra%20cross&entityId={}", acme.entity.id),
            &acme.key,
        )
        .await;
    let hits = r.assert_status(200).as_array().expect("array").clone();
    assert_eq!(hits.len(), 10);
    for hit in &hits {
        assert!(field(hit, "excerpt").contains("zebra crossing"), "{hit}");
    }
}

/// Inserts `n` published articles in one statement; one in 1000 mentions a
/// zebra crossing.
async fn bulk_insert(app: &TestApp, acme: &TestCompany, n: i64) {
    use supportdesk::db::Db;
    let now = supportdesk::time::Timestamp::now();
    let body = "CASE WHEN i % 1000 = 0 THEN 'How to use the zebra crossing near office ' || i \
                ELSE 'Ordinary help text about settings and preferences ' || i END";
    match &app.state.db {
        Db::Postgres(pool) => {
            let pool = pool.sqlx();
            let sql = format!(
                "INSERT INTO kb_articles (id, company_id, mode, entity_id, title, slug, content, \
                 content_text, excerpt, is_published, created_at, updated_at) \
                 SELECT md5('kb' || i)::uuid, $1, 'test', $2, 'Bulk article ' || i, \
                   'bulk-' || i, {body}, {body}, '', TRUE, $3, $3 \
                 FROM generate_series(1, $4::bigint) AS i"
            );
            // A seed of this size may outlast the service's statement
            // timeout on a loaded machine; the limit is the service's.
            let mut seed = pool.begin().await.expect("seed transaction");
            sqlx::query("SET LOCAL statement_timeout = 0")
                .execute(&mut *seed)
                .await
                .expect("seed without a statement timeout");
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(acme.company.id)
                .bind(acme.entity.id)
                .bind(now)
                .bind(n)
                .execute(&mut *seed)
                .await
                .expect("bulk insert");
            seed.commit().await.expect("seed committed");
            sqlx::query("ANALYZE kb_articles")
                .execute(pool)
                .await
                .expect("analyze");
        }
        Db::Sqlite(pool) => {
            let pool = pool.sqlx();
            let sql = format!(
                "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $4) \
                 INSERT INTO kb_articles (id, company_id, mode, entity_id, title, slug, content, \
                 content_text, excerpt, is_published, created_at, updated_at) \
                 SELECT randomblob(16), $1, 'test', $2, 'Bulk article ' || i, 'bulk-' || i, \
                   {body}, {body}, '', 1, $3, $3 FROM s"
            );
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(acme.company.id)
                .bind(acme.entity.id)
                .bind(now)
                .bind(n)
                .execute(pool)
                .await
                .expect("bulk insert");
            sqlx::query("ANALYZE").execute(pool).await.expect("analyze");
        }
    }
}
