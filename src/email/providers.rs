//! Each provider's inbound post read into raw MIME bytes, after its
//! authentication: Postmark's JSON (`RawEmail` when the server includes
//! it, else the parsed fields), Mailgun's form (`body-mime` on a MIME
//! route, else the parsed fields; signed with HMAC-SHA256 of timestamp and
//! token), SendGrid's Inbound Parse form (`email` with "POST the raw, full
//! MIME message", else the parsed fields).

use std::collections::HashMap;

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use subtle::ConstantTimeEq;

use super::compose::{self, Fields, File};
use crate::time::Timestamp;

/// How far a Mailgun timestamp may be from the clock (a replayed post
/// older than this is refused).
const MAILGUN_SKEW_SECS: i64 = 15 * 60;

/// Why a post was refused.
#[derive(Debug)]
pub enum Refused {
    /// Not the provider's: a wrong signature or secret (401).
    Unauthenticated,
    /// The provider's, but unreadable (400).
    Unreadable(String),
}

fn same(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// A shared secret, given as the password of HTTP basic auth or as the
/// `secret` query parameter.
pub fn check_secret(
    headers: &HeaderMap,
    query_secret: Option<&str>,
    secret: &str,
) -> Result<(), Refused> {
    let basic = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|pair| pair.split_once(':').map(|(_, p)| p.to_string()));
    let given = basic.or(query_secret.map(str::to_string));
    match given {
        Some(given) if same(&given, secret) => Ok(()),
        _ => Err(Refused::Unauthenticated),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PostmarkAddress {
    email: String,
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PostmarkHeader {
    name: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PostmarkFile {
    name: String,
    content: String,
    content_type: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PostmarkInbound {
    from_full: Option<PostmarkAddress>,
    from: Option<String>,
    #[serde(default)]
    to_full: Vec<PostmarkAddress>,
    #[serde(default)]
    cc_full: Vec<PostmarkAddress>,
    #[serde(default)]
    subject: String,
    #[serde(rename = "MessageID")]
    message_id: Option<String>,
    text_body: Option<String>,
    html_body: Option<String>,
    #[serde(default)]
    headers: Vec<PostmarkHeader>,
    #[serde(default)]
    attachments: Vec<PostmarkFile>,
    raw_email: Option<String>,
}

fn mailbox(address: &PostmarkAddress) -> String {
    match address.name.trim() {
        "" => address.email.clone(),
        name => format!("\"{}\" <{}>", name.replace('"', ""), address.email),
    }
}

/// Postmark's inbound JSON as MIME.
pub fn postmark(body: &[u8], boundary: &str) -> Result<Vec<u8>, Refused> {
    let inbound: PostmarkInbound =
        serde_json::from_slice(body).map_err(|e| Refused::Unreadable(e.to_string()))?;
    if let Some(raw) = inbound.raw_email.filter(|raw| !raw.trim().is_empty()) {
        return Ok(raw.into_bytes());
    }
    let mut headers: Vec<(String, String)> = inbound
        .headers
        .into_iter()
        .map(|h| (h.name, h.value))
        .collect();
    let has_id = headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("message-id"));
    if let (false, Some(id)) = (has_id, inbound.message_id) {
        headers.push(("Message-ID".into(), format!("<{id}@postmark>")));
    }
    let mut files = Vec::new();
    for file in inbound.attachments {
        let bytes = STANDARD
            .decode(file.content.as_bytes())
            .map_err(|e| Refused::Unreadable(format!("attachment {}: {e}", file.name)))?;
        files.push(File {
            name: file.name,
            content_type: file.content_type,
            bytes,
        });
    }
    let fields = Fields {
        from: inbound
            .from_full
            .as_ref()
            .map(mailbox)
            .or(inbound.from)
            .unwrap_or_default(),
        to: inbound.to_full.iter().map(mailbox).collect(),
        cc: inbound.cc_full.iter().map(mailbox).collect(),
        subject: inbound.subject,
        headers,
        text: inbound.text_body,
        html: inbound.html_body,
        files,
    };
    Ok(compose::compose(&fields, boundary))
}

/// A form's text fields and files.
#[derive(Default)]
pub struct Form {
    pub fields: HashMap<String, String>,
    pub files: Vec<File>,
}

/// Reads a `multipart/form-data` or `application/x-www-form-urlencoded`
/// body.
pub async fn form(headers: &HeaderMap, body: Bytes) -> Result<Form, Refused> {
    let content_type = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut form = Form::default();
    let Ok(boundary) = multer::parse_boundary(content_type) else {
        for (name, value) in form_urlencoded::parse(&body) {
            form.fields.insert(name.into_owned(), value.into_owned());
        }
        return Ok(form);
    };
    let stream = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(body) });
    let mut multipart = multer::Multipart::new(stream, boundary);
    let unreadable = |e: multer::Error| Refused::Unreadable(e.to_string());
    while let Some(field) = multipart.next_field().await.map_err(unreadable)? {
        let name = field.name().unwrap_or_default().to_string();
        let file_name = field.file_name().map(str::to_string);
        let content_type = field
            .content_type()
            .map(|m| m.essence_str().to_string())
            .unwrap_or_else(|| "application/octet-stream".into());
        let bytes = field.bytes().await.map_err(unreadable)?;
        match file_name {
            Some(file_name) => form.files.push(File {
                name: file_name,
                content_type,
                bytes: bytes.to_vec(),
            }),
            None => {
                form.fields
                    .insert(name, String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    Ok(form)
}

/// Mailgun's signature: the hex HMAC-SHA256 of `timestamp` and `token`
/// under the signing key, with a timestamp near `now`.
pub fn check_mailgun(form: &Form, signing_key: &str, now: Timestamp) -> Result<(), Refused> {
    let field = |name: &str| {
        form.fields
            .get(name)
            .map(String::as_str)
            .unwrap_or_default()
    };
    let (timestamp, token, signature) = (field("timestamp"), field("token"), field("signature"));
    let fresh = timestamp
        .parse::<i64>()
        .is_ok_and(|t| (t - now.0.timestamp()).abs() <= MAILGUN_SKEW_SECS);
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(signing_key.as_bytes())
        .map_err(|_| Refused::Unauthenticated)?;
    mac.update(timestamp.as_bytes());
    mac.update(token.as_bytes());
    let expected = hex::encode(mac.finalize().into_bytes());
    match fresh && !token.is_empty() && same(&expected, &signature.to_ascii_lowercase()) {
        true => Ok(()),
        false => Err(Refused::Unauthenticated),
    }
}

/// Mailgun's post as MIME.
pub fn mailgun(form: Form, boundary: &str) -> Vec<u8> {
    let Form { mut fields, files } = form;
    if let Some(mime) = fields.remove("body-mime") {
        return mime.into_bytes();
    }
    let mut headers: Vec<(String, String)> = fields
        .get("message-headers")
        .and_then(|h| serde_json::from_str::<Vec<(String, String)>>(h).ok())
        .unwrap_or_default();
    for name in ["Message-Id", "In-Reply-To", "References"] {
        if let Some(value) = fields.get(name)
            && !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            headers.push((name.to_string(), value.clone()));
        }
    }
    let to = fields
        .get("To")
        .or_else(|| fields.get("recipient"))
        .cloned()
        .into_iter()
        .collect();
    let composed = Fields {
        from: fields
            .get("from")
            .or_else(|| fields.get("sender"))
            .cloned()
            .unwrap_or_default(),
        to,
        cc: fields.get("Cc").cloned().into_iter().collect(),
        subject: fields.get("subject").cloned().unwrap_or_default(),
        headers,
        text: fields.get("body-plain").cloned(),
        html: fields.get("body-html").cloned(),
        files,
    };
    compose::compose(&composed, boundary)
}

/// SendGrid's Inbound Parse post as MIME.
pub fn sendgrid(form: Form, boundary: &str) -> Vec<u8> {
    let Form { mut fields, files } = form;
    if let Some(raw) = fields.remove("email") {
        return raw.into_bytes();
    }
    let headers = fields
        .get("headers")
        .map(|block| compose::header_lines(block))
        .unwrap_or_default();
    let list = |name: &str| -> Vec<String> {
        fields
            .get(name)
            .map(|v| vec![v.clone()])
            .unwrap_or_default()
    };
    let composed = Fields {
        from: fields.get("from").cloned().unwrap_or_default(),
        to: list("to"),
        cc: list("cc"),
        subject: fields.get("subject").cloned().unwrap_or_default(),
        headers,
        text: fields.get("text").cloned(),
        html: fields.get("html").cloned(),
        files,
    };
    compose::compose(&composed, boundary)
}
