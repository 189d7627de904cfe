//! Normalisation, limits, create / PATCH / POST …/tags semantics, events,
//! timeline, concurrency.

use super::*;

backend_tests!(
    create_normalises_collapses_and_sorts,
    invalid_tags_are_400_and_change_nothing,
    patch_replaces_the_set,
    post_adds_and_removes,
    an_edit_that_changes_nothing_announces_nothing,
    adding_past_fifty_is_400_and_adds_none,
    concurrent_adds_keep_every_tag,
    tag_changes_are_announced_and_recorded,
);

async fn create_normalises_collapses_and_sorts(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(
        &app,
        &acme,
        json!({"tags": ["  VIP ", "billing", "vip", "Plan:Pro", "eu-west.2_b"]}),
    )
    .await;
    let expected = strings(&["billing", "eu-west.2_b", "plan:pro", "vip"]);
    assert_eq!(tags_of(&t), expected);
    assert_eq!(stored_tags(&app, &acme.key, &id_of(&t)).await, expected);
    let untagged = ticket(&app, &acme, json!({})).await;
    assert_eq!(untagged["tags"], json!([]));
}

async fn invalid_tags_are_400_and_change_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({"tags": ["keep"]})).await;
    let id = id_of(&t);
    let fifty_one: Vec<String> = (0..51).map(|i| format!("t{i}")).collect();
    let bad_sets = [
        json!(["two words"]),
        json!(["   "]),
        json!(["x".repeat(51)]),
        json!(["a/b"]),
        json!([7]),
        json!("vip"),
        json!(fifty_one),
    ];
    for bad in &bad_sets {
        let mut body = json!({"subject": "Bad", "entityId": acme.entity.id});
        body["tags"] = bad.clone();
        assert_invalid(&app.post("/tickets", &acme.key, body).await, &["tags"]);
        let path = format!("/tickets/{id}");
        assert_invalid(
            &app.patch(&path, &acme.key, json!({"tags": bad})).await,
            &["tags"],
        );
        let r = app
            .post(&format!("{path}/tags"), &acme.key, json!({"add": bad}))
            .await;
        assert_invalid(&r, &["add"]);
        let r = app
            .post(&format!("{path}/tags"), &acme.key, json!({"remove": bad}))
            .await;
        assert_invalid(&r, &["remove"]);
    }
    let r = app
        .post(
            &format!("/tickets/{id}/tags"),
            &acme.key,
            json!({"add": ["x"], "remove": ["X"]}),
        )
        .await;
    assert_invalid(&r, &["remove"]);
    assert_invalid(
        &app.post(&format!("/tickets/{id}/tags"), &acme.key, json!({}))
            .await,
        &["body"],
    );
    assert_eq!(stored_tags(&app, &acme.key, &id).await, ["keep"]);
    let list = app.get("/tickets", &acme.key).await;
    assert_eq!(list.assert_status(200)["total"], 1, "no ticket created");
}

async fn patch_replaces_the_set(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({"tags": ["a", "b"]})).await;
    let path = format!("/tickets/{}", id_of(&t));
    let r = app
        .patch(&path, &acme.key, json!({"tags": ["C", "b"]}))
        .await;
    assert_eq!(tags_of(r.assert_status(200)), ["b", "c"]);
    let r = app.patch(&path, &acme.key, json!({"tags": []})).await;
    assert_eq!(r.assert_status(200)["tags"], json!([]));
    assert_eq!(
        stored_tags(&app, &acme.key, &id_of(&t)).await,
        Vec::<String>::new()
    );
}

async fn post_adds_and_removes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({"tags": ["a", "b"]})).await;
    let path = format!("/tickets/{}/tags", id_of(&t));
    let r = app
        .post(
            &path,
            &acme.key,
            json!({"add": ["c", "A", "d"], "remove": ["b", "zzz"]}),
        )
        .await;
    assert_eq!(tags_of(r.assert_status(200)), ["a", "c", "d"]);
    let r = app.post(&path, &acme.key, json!({"remove": ["a"]})).await;
    assert_eq!(tags_of(r.assert_status(200)), ["c", "d"]);
    assert_eq!(stored_tags(&app, &acme.key, &id_of(&t)).await, ["c", "d"]);
}

async fn an_edit_that_changes_nothing_announces_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({"tags": ["a"]})).await;
    let id = id_of(&t);
    let r = app
        .post(
            &format!("/tickets/{id}/tags"),
            &acme.key,
            json!({"add": ["a"], "remove": ["b"]}),
        )
        .await;
    assert_eq!(r.assert_status(200)["updatedAt"], t["updatedAt"]);
    let r = app
        .patch(&format!("/tickets/{id}"), &acme.key, json!({"tags": ["A"]}))
        .await;
    assert_eq!(r.assert_status(200)["updatedAt"], t["updatedAt"]);
    assert!(updated_events(&app, acme.company.id).await.is_empty());
}

async fn adding_past_fifty_is_400_and_adds_none(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let forty_nine: Vec<String> = (0..49).map(|i| format!("t{i:02}")).collect();
    let t = ticket(&app, &acme, json!({ "tags": forty_nine })).await;
    let path = format!("/tickets/{}/tags", id_of(&t));
    let r = app
        .post(&path, &acme.key, json!({"add": ["new1", "new2"]}))
        .await;
    assert_invalid(&r, &["add"]);
    assert_eq!(stored_tags(&app, &acme.key, &id_of(&t)).await, forty_nine);
    // Making room in the same request is fine.
    let r = app
        .post(
            &path,
            &acme.key,
            json!({"add": ["new1", "new2"], "remove": ["t00"]}),
        )
        .await;
    assert_eq!(tags_of(r.assert_status(200)).len(), 50);
}

async fn concurrent_adds_keep_every_tag(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({})).await;
    let path = format!("/tickets/{}/tags", id_of(&t));
    let expected = add_twenty_at_once(&app, &acme.key, &path).await;
    assert_eq!(stored_tags(&app, &acme.key, &id_of(&t)).await, expected);
}

async fn tag_changes_are_announced_and_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({"tags": ["a", "b"]})).await;
    let id = id_of(&t);
    app.post(
        &format!("/tickets/{id}/tags"),
        &acme.key,
        json!({"add": ["c"], "remove": ["a"]}),
    )
    .await
    .assert_status(200);
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"tags": ["x"], "priority": "HIGH"}),
    )
    .await
    .assert_status(200);

    let events = updated_events(&app, acme.company.id).await;
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[0]["changes"],
        json!({"tags": {"added": ["c"], "removed": ["a"]}})
    );
    assert_eq!(events[0]["tags"], json!(["b", "c"]));
    assert_eq!(
        events[1]["changes"]["tags"],
        json!({"added": ["x"], "removed": ["b", "c"]})
    );
    assert_eq!(events[1]["changes"]["priority"]["to"], "HIGH");
    assert_eq!(events[1]["tags"], json!(["x"]));

    let r = app
        .get(&format!("/tickets/{id}/activities"), &acme.key)
        .await;
    let tag_entries: Vec<Value> = r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|a| a["type"] == "tags_changed")
        .map(|a| a["details"].clone())
        .collect();
    assert_eq!(
        tag_entries,
        [
            json!({"added": ["c"], "removed": ["a"]}),
            json!({"added": ["x"], "removed": ["b", "c"]}),
        ]
    );
}
