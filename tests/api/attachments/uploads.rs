//! `POST /attachments`: the raw and the multipart form, the sniffed type,
//! the sanitised name, the hash, deduplication, the size limit and empty
//! files.

use super::*;
use sha2::{Digest, Sha256};

backend_tests!(
    a_raw_upload_is_stored_with_its_hash,
    a_multipart_upload_takes_the_file_part,
    the_sniffed_type_beats_the_claim,
    filenames_are_sanitised,
    the_query_names_a_raw_upload,
    the_same_bytes_are_stored_once,
    an_upload_past_the_limit_is_413_and_stores_nothing,
    an_empty_upload_is_400,
    a_form_without_a_file_part_is_400,
);

async fn a_raw_upload_is_stored_with_its_hash(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bytes = b"hello attachments\n".to_vec();
    let r = upload_raw(&app, &acme.key, "hello.txt", "text/plain", bytes.clone()).await;
    let body = r.assert_status(201);
    assert_eq!(body["filename"], "hello.txt");
    assert_eq!(body["contentType"], "text/plain");
    assert_eq!(body["size"], bytes.len());
    assert_eq!(body["sha256"], hex::encode(Sha256::digest(&bytes)));
    assert!(body["createdAt"].is_string());
    let got = app
        .get(&format!("/attachments/{}", id_of(body)), &acme.key)
        .await;
    assert_eq!(got.assert_status(200), body);
}

async fn a_multipart_upload_takes_the_file_part(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let form = reqwest::multipart::Form::new()
        .text("note", "ignored")
        .part(
            "file",
            reqwest::multipart::Part::bytes(PNG.to_vec())
                .file_name("pixel.png")
                .mime_str("image/png")
                .expect("mime"),
        );
    let r = TestResponse::from(
        app.api(Method::POST, "/attachments", Some(&acme.key))
            .multipart(form)
            .send()
            .await,
    )
    .await;
    let body = r.assert_status(201);
    assert_eq!(body["filename"], "pixel.png");
    assert_eq!(body["contentType"], "image/png");
    assert_eq!(body["size"], PNG.len());
}

async fn the_sniffed_type_beats_the_claim(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = upload_raw(&app, &acme.key, "page.html", "text/html", PNG.to_vec()).await;
    assert_eq!(r.assert_status(201)["contentType"], "image/png");
}

async fn filenames_are_sanitised(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = TestResponse::from(
        app.api(Method::POST, "/attachments", Some(&acme.key))
            .header(
                "Content-Disposition",
                "attachment; filename*=UTF-8''..%2F..%2Fetc%2Fin%09voice.txt",
            )
            .body("x")
            .send()
            .await,
    )
    .await;
    assert_eq!(r.assert_status(201)["filename"], "invoice.txt");
}

async fn the_query_names_a_raw_upload(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = TestResponse::from(
        app.api(
            Method::POST,
            "/attachments?filename=log.txt",
            Some(&acme.key),
        )
        .body("line\n")
        .send()
        .await,
    )
    .await;
    assert_eq!(r.assert_status(201)["filename"], "log.txt");
}

async fn the_same_bytes_are_stored_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let first = uploaded(&app, &acme, b"same bytes").await;
    let second = uploaded(&app, &acme, b"same bytes").await;
    assert_ne!(first["id"], second["id"]);
    assert_eq!(first["sha256"], second["sha256"]);
    assert_eq!(attachment_rows(&app).await, 2);
    assert_eq!(stored_files(&app).len(), 1);
}

async fn an_upload_past_the_limit_is_413_and_stores_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    // 30 MiB against the default 25 MiB limit, sent in 1 MiB chunks.
    let chunks = (0..30).map(|_| vec![b'a'; 1024 * 1024]).collect();
    let r = post_refused_body(
        &app,
        "/attachments?filename=big.bin",
        &acme.key,
        "application/octet-stream",
        chunks,
    )
    .await;
    r.assert_error(413, "payload_too_large");
    assert_eq!(attachment_rows(&app).await, 0);
    assert_eq!(stored_files(&app), Vec::<std::path::PathBuf>::new());
}

async fn an_empty_upload_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = upload_raw(&app, &acme.key, "empty.txt", "text/plain", Vec::new()).await;
    assert_invalid(&r, &["file"]);
    assert_eq!(attachment_rows(&app).await, 0);
}

async fn a_form_without_a_file_part_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let form = reqwest::multipart::Form::new().text("other", "x");
    let r = TestResponse::from(
        app.api(Method::POST, "/attachments", Some(&acme.key))
            .multipart(form)
            .send()
            .await,
    )
    .await;
    assert_invalid(&r, &["file"]);
}
