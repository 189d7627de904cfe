//! TEST/LIVE and company isolation, and events that commit or roll back
//! with their change.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::{count_events, count_users};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    modes_and_companies_are_isolated,
    a_change_and_its_event_commit_or_roll_back_together,
);

// ---------------------------------------------------------------- isolation

async fn modes_and_companies_are_isolated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let acme_live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;

    // Keys carry a mode: a TEST key sees and manages TEST keys only.
    let created = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "ci", "scopes": ["tickets:read"]}),
        )
        .await;
    let created = created.assert_status(201).clone();
    assert_eq!(created["type"], "TEST");
    let test_key_path = format!("/api-keys/{}", created["id"].as_str().expect("id"));
    let live_list = app.get("/api-keys", &acme_live).await;
    let live_list = live_list.assert_status(200);
    assert!(
        live_list["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|k| k["type"] == "LIVE"),
        "{live_list}"
    );
    app.get(&test_key_path, &acme_live)
        .await
        .assert_error(404, "not_found");
    app.patch(&test_key_path, &acme_live, json!({"name": "x"}))
        .await
        .assert_error(404, "not_found");
    app.delete(&test_key_path, &acme_live)
        .await
        .assert_error(404, "not_found");
    let cross = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "live", "type": "LIVE", "scopes": ["tickets:read"]}),
        )
        .await;
    cross.assert_error(400, "validation_failed");
    assert_eq!(cross.body["details"][0]["field"], "type");
    let live_made = app
        .post(
            "/api-keys",
            &acme_live,
            json!({"name": "live", "scopes": ["tickets:read"]}),
        )
        .await;
    let live_made = live_made.assert_status(201);
    assert_eq!(live_made["type"], "LIVE");
    assert!(
        live_made["key"]
            .as_str()
            .expect("key")
            .starts_with("svc_live_")
    );
    let test_list = app.get("/api-keys", &acme.key).await;
    assert!(
        test_list.assert_status(200)["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|k| k["type"] == "TEST")
    );

    // Users and entities are shared by both modes; events keep the mode.
    let user = app
        .post(
            "/users",
            &acme_live,
            json!({"name": "Lee", "email": "lee@acme.test", "role": "ADMIN"}),
        )
        .await;
    let user_path = format!(
        "/users/{}",
        user.assert_status(201)["id"].as_str().expect("id")
    );
    app.get(&user_path, &acme.key).await.assert_status(200);
    let mode: String = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, String>(
        "SELECT mode FROM events WHERE company_id = $1 AND name = 'user.created'")
        .bind(acme.company.id).fetch_one(c).await.expect("event"));
    assert_eq!(mode, "live");
    let entity_path = format!("/entities/{}", acme.entity.id);
    app.get(&entity_path, &acme_live).await.assert_status(200);

    // Company B never sees company A's records: 404, and absent from lists.
    for path in [&user_path, &entity_path, &test_key_path] {
        app.get(path, &other.key)
            .await
            .assert_error(404, "not_found");
        app.patch(path, &other.key, json!({"name": "Mine"}))
            .await
            .assert_error(404, "not_found");
    }
    app.delete(&test_key_path, &other.key)
        .await
        .assert_error(404, "not_found");
    for list in ["/users", "/entities", "/api-keys"] {
        let body = app.get(list, &other.key).await;
        let text = &body.text;
        assert_eq!(body.status, 200, "{text}");
        assert!(
            !text.contains(&acme.company.id.to_string()),
            "{list}: {text}"
        );
        assert!(!text.contains("lee@acme.test"), "{list}: {text}");
    }
    // Referring to another company's entity in a body is a 400.
    let r = app
        .post(
            "/entities",
            &other.key,
            json!({"name": "Sub", "parentId": acme.entity.id}),
        )
        .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"][0]["field"], "parentId");
}

// ---------------------------------------------------------------- events

async fn a_change_and_its_event_commit_or_roll_back_together(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let company = acme.company.id;
    let tenant = supportdesk::auth::Tenant::new(company, Mode::Test);

    // Committed: the user and its event.
    app.post(
        "/users",
        &acme.key,
        json!({"name": "A", "email": "a@acme.test"}),
    )
    .await
    .assert_status(201);
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (1, 1)
    );

    // Refused (duplicate email): neither.
    app.post(
        "/users",
        &acme.key,
        json!({"name": "B", "email": "a@acme.test"}),
    )
    .await
    .assert_error(409, "conflict");
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (1, 1)
    );

    // A transaction that is not committed leaves neither behind...
    let mut tx = app.state.db.begin().await.expect("begin");
    let new = |email: &str| supportdesk::users::store::NewUser {
        id: None,
        name: "C".into(),
        email: email.into(),
        role: supportdesk::users::Role::Agent.into(),
    };
    supportdesk::users::store::create_in(
        &mut tx,
        &tenant,
        new("c@acme.test"),
        app.state.clock.now(),
    )
    .await
    .expect("created in tx");
    drop(tx);
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (1, 1)
    );
    // ...and a committed one leaves both.
    let mut tx = app.state.db.begin().await.expect("begin");
    supportdesk::users::store::create_in(
        &mut tx,
        &tenant,
        new("c@acme.test"),
        app.state.clock.now(),
    )
    .await
    .expect("created in tx");
    tx.commit().await.expect("commit");
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (2, 2)
    );
    let data: Value = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, sqlx::types::Json<Value>>(
        "SELECT data FROM events WHERE company_id = $1 AND name = 'user.created' ORDER BY created_at, id")
        .bind(company).fetch_all(c).await.expect("events"))
        .into_iter()
        .map(|j| j.0)
        .next()
        .expect("first event");
    assert_eq!(data["email"], "a@acme.test");
}
