//! Search results come in rank order, which no cursor can hold: they page
//! by offset, answer `nextCursor: null`, and refuse `after`.

use super::*;

backend_tests!(
    search_pages_by_offset_without_a_cursor,
    after_with_q_is_400_on_after
);

async fn search_pages_by_offset_without_a_cursor(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for n in 0..3 {
        ticket(&app, &acme, json!({"subject": format!("Router {n}")})).await;
    }
    let first = app.get("/tickets?q=router&limit=2", &acme.key).await;
    let first = first.assert_status(200);
    assert_eq!(first["nextCursor"], Value::Null);
    let second = app
        .get("/tickets?q=router&limit=2&offset=2", &acme.key)
        .await;
    assert_eq!(
        second.assert_status(200)["data"].as_array().map(Vec::len),
        Some(1)
    );
}

async fn after_with_q_is_400_on_after(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for n in 0..3 {
        ticket(&app, &acme, json!({"subject": format!("Router {n}")})).await;
    }
    let plain = app
        .get("/tickets?q=router&limit=1&offset=1", &acme.key)
        .await;
    assert_eq!(plain.assert_status(200)["nextCursor"], Value::Null);
    let listed = app.get("/tickets?limit=1", &acme.key).await;
    let cursor = listed.assert_status(200)["nextCursor"]
        .as_str()
        .expect("a cursor")
        .to_string();
    let r = app
        .get(&format!("/tickets?q=router&after={cursor}"), &acme.key)
        .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"][0]["field"], "after", "{}", r.text);
}
