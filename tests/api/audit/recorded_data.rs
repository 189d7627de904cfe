//! The changes that carry a secret or read a person's data write their
//! entry too: an email channel's create, change and delete (its inbound
//! secret said to change, never recorded), and a person's export, asked
//! for and downloaded.

use serde_json::json;

use super::{all_entries_text, assert_by_key_on, entries_of, key_id, only_entry};
use crate::backend_tests;
use crate::contacts::person::{run_request, store};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    an_email_channels_create_is_recorded_without_its_secret,
    an_email_channels_new_secret_is_recorded_without_it,
    an_email_channels_delete_is_recorded,
    an_export_request_is_recorded_with_its_requester,
    an_export_download_is_recorded_as_its_requesters,
);

const SECRET: &str = "inbound-s3cret-0042";

/// A postmark channel with the inbound secret `SECRET`; its id.
async fn channel(app: &TestApp, acme: &TestCompany) -> String {
    let body = json!({"address": "support@acme.example", "entityId": acme.entity.id,
        "inbound": {"kind": "postmark", "secret": SECRET}});
    let made = app.post("/channels/email", &acme.key, body).await;
    made.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

async fn an_email_channels_create_is_recorded_without_its_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;

    let id = channel(&app, &acme).await;

    let entry = only_entry(&app, &acme, "email_channel.created").await;
    assert_by_key_on(&entry, &actor, "email_channel", &id);
    assert_eq!(
        (
            &entry["changes"]["after"]["address"],
            &entry["changes"]["secret"]
        ),
        (&json!("support@acme.example"), &json!("created"))
    );
    let text = all_entries_text(&app, &acme).await;
    assert!(!text.contains(SECRET), "the secret in {text}");
}

async fn an_email_channels_new_secret_is_recorded_without_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let id = channel(&app, &acme).await;

    let body = json!({"inbound": {"kind": "postmark", "secret": "next-s3cret-0043"}});
    app.patch(&format!("/channels/email/{id}"), &acme.key, body)
        .await
        .assert_status(200);

    let entry = only_entry(&app, &acme, "email_channel.updated").await;
    assert_by_key_on(&entry, &actor, "email_channel", &id);
    assert_eq!(entry["changes"]["secret"], "rotated", "{entry}");
    let text = all_entries_text(&app, &acme).await;
    assert!(!text.contains("next-s3cret-0043"), "the secret in {text}");
}

async fn an_email_channels_delete_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let id = channel(&app, &acme).await;

    app.delete(&format!("/channels/email/{id}"), &acme.key)
        .await
        .assert_status(200);

    let entry = only_entry(&app, &acme, "email_channel.deleted").await;
    assert_by_key_on(&entry, &actor, "email_channel", &id);
    assert_eq!(
        entry["changes"]["before"]["address"], "support@acme.example",
        "{entry}"
    );
}

async fn an_export_request_is_recorded_with_its_requester(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let kim = store(&app, &acme).await;

    let job = run_request(&app, &acme, &kim.contact, "export").await;

    let entry = only_entry(&app, &acme, "export.requested").await;
    assert_by_key_on(&entry, &actor, "contact", &kim.contact);
    assert_eq!(entry["changes"]["jobId"], job["id"], "{entry}");
}

async fn an_export_download_is_recorded_as_its_requesters(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let kim = store(&app, &acme).await;
    let job = run_request(&app, &acme, &kim.contact, "export").await;
    assert!(
        entries_of(&app, &acme, "export.downloaded")
            .await
            .is_empty()
    );

    let url = job["downloadUrl"].as_str().expect("downloadUrl");
    let response = app.client.get(url).send().await.expect("download");
    assert_eq!(response.status().as_u16(), 200);

    let entry = only_entry(&app, &acme, "export.downloaded").await;
    assert_by_key_on(&entry, &actor, "contact", &kim.contact);
    assert_eq!(entry["changes"]["jobId"], job["id"], "{entry}");
}
