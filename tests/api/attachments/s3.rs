//! Attachments in an S3-compatible bucket, against a real S3-compatible
//! server on loopback (`TEST_S3_ENDPOINT`, started by `.ci/run`), on the
//! Postgres backend: nodes share the files, bytes are stored once, ranges
//! work. Without `TEST_S3_ENDPOINT` these tests report themselves skipped,
//! unless `CI=true`, where the absence fails them.

use super::*;
use supportdesk::config::S3Config;

/// A Postgres-backed app whose attachments go to a bucket of its own on
/// the test S3 server, or `None` (skipped) when either is not configured.
async fn s3_app(test: &str) -> Option<(TestApp, S3Config)> {
    s3_app_with(test, |_| {}).await
}

/// `s3_app` with its configuration changed by `adjust` too.
pub(crate) async fn s3_app_with(
    test: &str,
    adjust: impl FnOnce(&mut supportdesk::config::Config),
) -> Option<(TestApp, S3Config)> {
    let backend = Backend::postgres(test)?;
    let endpoint = std::env::var("TEST_S3_ENDPOINT")
        .ok()
        .filter(|url| !url.is_empty());
    let Some(endpoint) = endpoint else {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "CI=true needs TEST_S3_ENDPOINT: the S3 tests must run in CI"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "SKIPPED (no TEST_S3_ENDPOINT): {test}"
        );
        return None;
    };
    let s3 = S3Config {
        bucket: format!("sdt-{}", uuid::Uuid::new_v4().simple()),
        endpoint: Some(endpoint.clone()),
        region: Some("us-east-1".into()),
        access_key_id: Some("test".into()),
        secret_access_key: Some("test".into()),
    };
    // The test server takes an unsigned bucket creation; the service
    // itself never creates buckets.
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{}", s3.bucket))
        .send()
        .await
        .expect("bucket created");
    assert!(
        created.status().is_success(),
        "bucket: {}",
        created.status()
    );
    let config = s3.clone();
    let app = TestApp::spawn_with(backend, move |c| {
        c.s3 = Some(config);
        adjust(c);
    })
    .await;
    Some((app, s3))
}

/// Bytes that no compression or dedupe shortcut can fake: 12 MiB, so the
/// upload takes three multipart parts.
fn large_bytes() -> Vec<u8> {
    (0..12 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

async fn content(app: &TestApp, key: &str, id: &str, range: Option<&str>) -> reqwest::Response {
    let url = app.url(&format!("/api/v1/attachments/{id}/content"));
    let mut request = app.client.get(url).header("X-API-Key", key);
    if let Some(range) = range {
        request = request.header("Range", range);
    }
    request.send().await.expect("request sent")
}

#[tokio::test]
async fn s3_a_file_uploaded_on_one_node_downloads_on_another() {
    let Some((app, _)) =
        s3_app("attachments::s3::s3_a_file_uploaded_on_one_node_downloads_on_another").await
    else {
        return;
    };
    let acme = app.company().await;
    let bytes = large_bytes();
    let file = upload_raw(
        &app,
        &acme.key,
        "big.bin",
        "application/octet-stream",
        bytes.clone(),
    )
    .await
    .assert_status(201)
    .clone();
    // The other node has a data dir of its own: it can only read the bucket.
    let other_dir = tempfile::tempdir().expect("temp dir");
    let other_path = other_dir.path().to_path_buf();
    let peer = app.spawn_peer_with(move |c| c.data_dir = other_path).await;
    let response = content(&peer, &acme.key, &id_of(&file), None).await;
    assert_eq!(response.status(), 200);
    let downloaded = response.bytes().await.expect("body");
    assert!(downloaded.as_ref() == bytes.as_slice(), "the bytes differ");
    assert!(stored_files(&app).is_empty(), "nothing was written to disk");
}

#[tokio::test]
async fn s3_the_same_bytes_are_stored_once() {
    let Some((app, _)) = s3_app("attachments::s3::s3_the_same_bytes_are_stored_once").await else {
        return;
    };
    let acme = app.company().await;
    let first = uploaded(&app, &acme, b"twice the same").await;
    let second = uploaded(&app, &acme, b"twice the same").await;
    assert_ne!(first["id"], second["id"]);
    let objects = app
        .state
        .attachments
        .storage
        .count_objects()
        .await
        .expect("list");
    assert_eq!(objects, 1);
}

#[tokio::test]
async fn s3_a_range_gives_206_with_those_bytes() {
    let Some((app, _)) = s3_app("attachments::s3::s3_a_range_gives_206_with_those_bytes").await
    else {
        return;
    };
    let acme = app.company().await;
    let bytes = large_bytes();
    let file = upload_raw(
        &app,
        &acme.key,
        "big.bin",
        "application/octet-stream",
        bytes.clone(),
    )
    .await
    .assert_status(201)
    .clone();
    let response = content(&app, &acme.key, &id_of(&file), Some("bytes=0-99")).await;
    assert_eq!(response.status(), 206);
    assert_eq!(
        response.bytes().await.expect("body").as_ref(),
        &bytes[..100]
    );
}
