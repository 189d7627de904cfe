//! Values on chat sessions: set on create and PATCH, filtered on, and the
//! widget's visitor-writable fields (which visitors never read back).

use super::*;
use crate::widget::{start_chat, widget_post};

backend_tests!(
    sessions_carry_values_and_filter_on_them,
    visitors_may_set_only_visitor_writable_fields,
    an_agent_only_field_from_a_visitor_is_ignored_and_the_chat_starts
);

async fn define_chat_fields(app: &TestApp, acme: &TestCompany) {
    define(
        app,
        acme,
        json!({"key": "plan", "label": "Plan", "type": "select", "appliesTo": ["chat"],
               "options": ["basic", "pro"]}),
    )
    .await;
    define(
        app,
        acme,
        json!({"key": "order_id", "label": "Order", "type": "text", "appliesTo": ["chat"],
               "visitorWritable": true, "required": true}),
    )
    .await;
}

async fn sessions_carry_values_and_filter_on_them(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_chat_fields(&app, &acme).await;
    let start = |fields: Value| {
        app.post(
            "/chat/sessions",
            &acme.key,
            json!({"entityId": acme.entity.id, "customFields": fields}),
        )
    };
    let r = start(json!({"plan": "pro", "order_id": "A-1"})).await;
    let pro = r.assert_status(201).clone();
    assert_eq!(
        pro["customFields"],
        json!({"order_id": "A-1", "plan": "pro"})
    );
    let r = start(json!({"order_id": "A-2"})).await;
    let other = id_of(r.assert_status(201));
    let r = start(json!({"plan": "pro"})).await;
    assert_invalid(&r, &["customFields.order_id"]);

    let r = app
        .patch(
            &format!("/chat/sessions/{other}"),
            &acme.key,
            json!({"customFields": {"plan": "basic"}}),
        )
        .await;
    assert_eq!(
        r.assert_status(200)["customFields"],
        json!({"order_id": "A-2", "plan": "basic"})
    );
    let r = app.get("/chat/sessions?cf.plan=pro", &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(body["total"], 1);
    assert_eq!(body["data"][0]["id"], pro["id"]);
    let r = app.get("/chat/sessions?cf.plan=gold", &acme.key).await;
    assert_invalid(&r, &["cf.plan"]);
}

async fn visitors_may_set_only_visitor_writable_fields(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_chat_fields(&app, &acme).await;
    let widget_key = acme.entity.widget_key_test.clone();
    // The required visitor-writable field is the visitor's to give.
    let r = widget_post(
        &app,
        "/widget/v1/sessions",
        json!({"widgetKey": widget_key}),
    )
    .await;
    assert_invalid(&r, &["customFields.order_id"]);

    let session = start_chat(
        &app,
        &widget_key,
        json!({"customFields": {"order_id": "A-1"}}),
    )
    .await;
    assert!(session.get("customFields").is_none(), "{session}");
    let r = app
        .get(&format!("/chat/sessions/{}", id_of(&session)), &acme.key)
        .await;
    assert_eq!(
        r.assert_status(200)["customFields"],
        json!({"order_id": "A-1"})
    );
}

/// A page's `setCustomFields` that names a field only agents may set must
/// not refuse every chat the page starts: the field is left out, named in
/// the answer (the widget warns in the browser's console), the rest kept.
async fn an_agent_only_field_from_a_visitor_is_ignored_and_the_chat_starts(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_chat_fields(&app, &acme).await;
    let widget_key = acme.entity.widget_key_test.clone();
    let r = widget_post(
        &app,
        "/widget/v1/sessions",
        json!({"widgetKey": widget_key, "customFields": {"order_id": "A-1", "plan": "pro"}}),
    )
    .await;
    let started = r.assert_status(201);
    assert_eq!(started["ignoredCustomFields"], json!(["plan"]), "{started}");
    let r = app
        .get(&format!("/chat/sessions/{}", id_of(started)), &acme.key)
        .await;
    assert_eq!(
        r.assert_status(200)["customFields"],
        json!({"order_id": "A-1"})
    );
}
