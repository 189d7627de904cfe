//! A channel with a DKIM key signs its replies: the message that reaches
//! the SMTP server carries a DKIM-Signature that verifies against the
//! key's public half (relaxed canonicalization, RFC 6376 §3.4), and a key
//! that cannot sign is refused when it is set.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::sha2::{Digest, Sha256};
use rsa::{Pkcs1v15Sign, RsaPrivateKey};
use serde_json::json;

use super::outbound::{delivered_containing, header, sink};
use super::{deliver, first_message, imap_channel, opened};
use crate::backend_tests;
use crate::outbound::support::fast_retries;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_reply_of_a_channel_with_a_key_carries_a_signature_that_verifies,
    a_reply_signed_with_an_ed25519_seed_verifies,
    a_key_that_cannot_sign_is_refused,
);

/// A 2048-bit RSA key made for this test only (PKCS#1, as channels take it).
const KEY: &str = include_str!("dkim_test_key.pem");

/// The tags of a DKIM-Signature value.
fn tag<'a>(signature: &'a str, name: &str) -> &'a str {
    signature
        .split(';')
        .map(str::trim)
        .find_map(|t| t.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("tag {name} in {signature}"))
}

/// The raw (folded) header lines of `name`, as sent.
fn raw_header(head: &str, name: &str) -> Option<String> {
    let prefix = format!("{}:", name.to_ascii_lowercase());
    let lines: Vec<&str> = head.split("\r\n").collect();
    let start = lines
        .iter()
        .position(|l| l.to_ascii_lowercase().starts_with(&prefix))?;
    let mut out = lines[start].to_string();
    for next in lines[start + 1..]
        .iter()
        .take_while(|l| l.starts_with([' ', '\t']))
    {
        out.push_str("\r\n");
        out.push_str(next);
    }
    Some(out)
}

/// Relaxed header canonicalization: name lower-cased, value unfolded,
/// runs of white space one space, none around the colon or at the end.
fn relaxed_header(raw: &str) -> String {
    let (name, value) = raw.split_once(':').expect("a header");
    let unfolded = value.replace("\r\n", "");
    let value = unfolded.split([' ', '\t']).filter(|w| !w.is_empty());
    format!(
        "{}:{}",
        name.trim().to_ascii_lowercase(),
        value.collect::<Vec<_>>().join(" ")
    )
}

/// Relaxed body canonicalization: runs of white space one space, none at
/// a line's end, no empty lines at the end.
fn relaxed_body(body: &str) -> String {
    let mut lines: Vec<String> = body.split("\r\n").map(relaxed_line).collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines.iter().map(|l| format!("{l}\r\n")).collect()
}

fn relaxed_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut space = false;
    for c in line.chars() {
        if c == ' ' || c == '\t' {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    out
}

/// The public half of a signing key.
enum Public {
    Rsa(rsa::RsaPublicKey),
    Ed25519(ed25519_dalek::VerifyingKey),
}

/// Checks the message's DKIM-Signature against `key`.
fn verify(raw: &str, key: &Public) -> Result<(), String> {
    let (head, body) = raw.split_once("\r\n\r\n").expect("head and body");
    let signature_line = raw_header(head, "DKIM-Signature").ok_or("no DKIM-Signature")?;
    let unfolded = signature_line.replace("\r\n", "");
    let value = unfolded.split_once(':').expect("value").1.to_string();
    let body_hash = STANDARD.encode(Sha256::digest(relaxed_body(body).as_bytes()));
    if tag(&value, "bh") != body_hash {
        return Err(format!("body hash {} != {body_hash}", tag(&value, "bh")));
    }
    let mut signed = String::new();
    for name in tag(&value, "h").split(':') {
        if let Some(line) = raw_header(head, name.trim()) {
            signed.push_str(&relaxed_header(&line));
            signed.push_str("\r\n");
        }
    }
    // The signature's own header, its `b=` emptied, without a line end.
    let b = tag(&value, "b");
    let emptied = unfolded.replacen(b, "", 1);
    signed.push_str(&relaxed_header(&emptied));
    let b: String = b.split_whitespace().collect();
    let b = STANDARD.decode(b).map_err(|e| e.to_string())?;
    let digest = Sha256::digest(signed.as_bytes());
    match key {
        Public::Rsa(key) => key
            .verify(Pkcs1v15Sign::new::<Sha256>(), &digest, &b)
            .map_err(|e| e.to_string()),
        // RFC 8463: Ed25519 over the SHA-256 of the signed data.
        Public::Ed25519(key) => {
            let signature = ed25519_dalek::Signature::from_slice(&b).map_err(|e| e.to_string())?;
            key.verify_strict(&digest, &signature)
                .map_err(|e| e.to_string())
        }
    }
}

/// A reply sent by a channel with `private_key`, as the SMTP server got it.
async fn signed_reply(backend: Backend, private_key: &str) -> String {
    let (sink, port) = sink::start();
    let app = TestApp::spawn_with(backend, |c| {
        fast_retries(c);
        c.smtp_url = Some(format!("smtp://127.0.0.1:{port}"));
    })
    .await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    app.patch(
        &format!("/channels/email/{}", channel.id),
        &acme.key,
        json!({"dkim": {"selector": "desk", "privateKey": private_key}}),
    )
    .await
    .assert_status(200);
    let id = opened(&deliver(&app, &acme, &channel, &first_message("d1@shop.example", "")).await);
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "Signed and sealed."}),
    )
    .await
    .assert_status(201);
    delivered_containing(&app, &sink, "Signed and sealed.").await
}

async fn a_reply_of_a_channel_with_a_key_carries_a_signature_that_verifies(backend: Backend) {
    let raw = signed_reply(backend, KEY).await;
    let key = Public::Rsa(
        RsaPrivateKey::from_pkcs1_pem(KEY)
            .expect("test key")
            .to_public_key(),
    );
    let signature = header(&raw, "DKIM-Signature").expect("a DKIM-Signature");
    // The headers that thread the reply are signed with those a reader sees.
    let signed: String = tag(&signature, "h").split_whitespace().collect();
    assert_eq!(
        (
            tag(&signature, "d"),
            tag(&signature, "s"),
            signed.as_str(),
            verify(&raw, &key)
        ),
        (
            "acme.example",
            "desk",
            "from:reply-to:to:subject:date:message-id:in-reply-to:references",
            Ok(())
        ),
        "{raw}"
    );
}

async fn a_reply_signed_with_an_ed25519_seed_verifies(backend: Backend) {
    let seed = [42u8; 32];
    let raw = signed_reply(backend, &STANDARD.encode(seed)).await;
    let key = Public::Ed25519(ed25519_dalek::SigningKey::from_bytes(&seed).verifying_key());
    let signature = header(&raw, "DKIM-Signature").expect("a DKIM-Signature");
    assert_eq!(
        (tag(&signature, "a"), verify(&raw, &key)),
        ("ed25519-sha256", Ok(())),
        "{raw}"
    );
}

async fn a_key_that_cannot_sign_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    let pkcs8 = "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----";
    let r = app
        .patch(
            &format!("/channels/email/{}", channel.id),
            &acme.key,
            json!({"dkim": {"selector": "desk", "privateKey": pkcs8}}),
        )
        .await;
    r.assert_status(400);
}
