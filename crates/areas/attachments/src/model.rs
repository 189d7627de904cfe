//! What an attachment looks like in the API, and the pure rules about
//! uploads: the name kept for display, the type served, which types a
//! browser may show inline, and the `attachmentIds` a record names.

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::links::Signer;
use crate::error::FieldError;
use crate::time::Timestamp;
use crate::validate::problem;

/// Most attachments one ticket, comment or message may name.
pub const PER_RECORD_MAX: usize = 10;
/// Longest filename kept, in bytes.
pub const FILENAME_MAX: usize = 255;
/// The name given to an upload whose name is empty once sanitised.
const FALLBACK_NAME: &str = "file";

/// An upload: the answer to `POST /attachments` and `GET /attachments/{id}`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub id: Uuid,
    pub filename: String,
    /// Sniffed from the bytes; the client's claim only when the bytes say
    /// nothing.
    pub content_type: String,
    /// Bytes.
    pub size: i64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    pub created_at: Timestamp,
}

/// An attachment as the record naming it shows it, with a link signed by
/// the [`Signer`] of the answer or event it is read for: made only with
/// its link, it is never written out with `url: null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentRef {
    pub id: Uuid,
    pub filename: String,
    pub content_type: String,
    pub size: i64,
    /// A link a browser opens without a key (`/files/{id}?exp=…&sig=…`),
    /// valid for 15 minutes from when the record was read.
    url: String,
}

impl AttachmentRef {
    /// The attachment `id` as stored, with its link from `signer`.
    pub fn signed(
        id: Uuid,
        filename: String,
        content_type: String,
        size: i64,
        signer: &Signer,
    ) -> AttachmentRef {
        AttachmentRef {
            id,
            filename,
            content_type,
            size,
            url: signer.url(id),
        }
    }
}

/// The name kept for display: the last path segment, without control
/// characters or leading dots, trimmed, at most 255 bytes (cut on a
/// character boundary, the extension kept when it is short).
pub fn sanitize_filename(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = last.chars().filter(|c| !c.is_control()).collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim();
    if cleaned.is_empty() {
        return FALLBACK_NAME.to_string();
    }
    if cleaned.len() <= FILENAME_MAX {
        return cleaned.to_string();
    }
    let extension = cleaned
        .rfind('.')
        .map(|dot| &cleaned[dot..])
        .filter(|ext| ext.len() <= 16)
        .unwrap_or("");
    let mut stem_end = FILENAME_MAX - extension.len();
    while !cleaned.is_char_boundary(stem_end) {
        stem_end -= 1;
    }
    format!("{}{extension}", &cleaned[..stem_end])
}

/// The type an upload is stored and served as. The bytes decide when they
/// have a known signature; otherwise text stays the claimed text type (or
/// `text/plain`) and anything else is `application/octet-stream`, so a
/// claim alone never makes bytes an image or a PDF.
pub fn content_type(head: &[u8], claimed: Option<&str>) -> String {
    if let Some(kind) = infer::get(head) {
        return kind.mime_type().to_string();
    }
    let claimed = claimed
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty());
    if looks_like_text(head) {
        return match claimed {
            Some(claim) if claim.starts_with("text/") || claim == "application/json" => claim,
            _ => "text/plain".to_string(),
        };
    }
    "application/octet-stream".to_string()
}

/// UTF-8 without NULs, allowing a character cut at the end of the sample.
fn looks_like_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(err) => err.error_len().is_none() && head.len() - err.valid_up_to() < 4,
    }
}

/// Types a browser may show inline: raster images that run no script.
pub fn is_inline(content_type: &str) -> bool {
    matches!(
        content_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
}

/// Types a visitor may upload: images and PDFs.
pub fn visitor_may_upload(content_type: &str) -> bool {
    is_inline(content_type) || content_type == "application/pdf"
}

/// The `filename` of a `Content-Disposition` header: `filename*=UTF-8''…`
/// (percent-encoded) wins over `filename="…"`.
pub fn disposition_filename(header: &str) -> Option<String> {
    let mut plain = None;
    for param in header.split(';').skip(1) {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "filename*" {
            let encoded = value.split_once("''").map_or(value, |(_, rest)| rest);
            let decoded: Vec<u8> = percent_decode(encoded.as_bytes());
            if let Ok(text) = String::from_utf8(decoded) {
                return Some(text);
            }
        } else if name == "filename" {
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            plain = Some(unquoted.replace("\\\"", "\""));
        }
    }
    plain
}

fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// `attachmentIds` of a body: absent or null is none; otherwise an array
/// of at most ten distinct ids, in the order given.
pub fn attachment_ids(field: &str, value: Option<&Value>) -> Result<Vec<Uuid>, FieldError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(problem(field, "must be an array of attachment ids")),
    };
    if items.len() > PER_RECORD_MAX {
        return Err(problem(
            field,
            format!("at most {PER_RECORD_MAX} attachments"),
        ));
    }
    let mut ids = Vec::with_capacity(items.len());
    for item in items {
        let id = item
            .as_str()
            .and_then(|text| Uuid::parse_str(text).ok())
            .ok_or_else(|| problem(field, "must be an array of attachment ids"))?;
        if ids.contains(&id) {
            return Err(problem(field, format!("{id} is given twice")));
        }
        ids.push(id);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filenames_lose_paths_controls_and_leading_dots() {
        assert_eq!(sanitize_filename("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_filename("C:\\temp\\a.txt"), "a.txt");
        assert_eq!(sanitize_filename("in\u{0}voice\n.pdf"), "invoice.pdf");
        assert_eq!(sanitize_filename(" .hidden "), "hidden");
        assert_eq!(sanitize_filename(".."), "file");
    }

    #[test]
    fn long_filenames_keep_their_extension_within_255_bytes() {
        let name = format!("{}.pdf", "é".repeat(200));
        let kept = sanitize_filename(&name);
        assert!(kept.len() <= FILENAME_MAX);
        assert!(kept.ends_with("é.pdf"));
    }

    #[test]
    fn the_bytes_beat_the_claim() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(content_type(png, Some("text/html")), "image/png");
        assert_eq!(content_type(b"hello", Some("image/png")), "text/plain");
        assert_eq!(content_type(b"<p>hi</p>", Some("text/html")), "text/html");
        assert_eq!(
            content_type(&[0, 1, 2, 3], Some("image/png")),
            "application/octet-stream"
        );
    }

    #[test]
    fn disposition_names_prefer_the_encoded_form() {
        assert_eq!(
            disposition_filename(r#"attachment; filename="a b.txt""#).as_deref(),
            Some("a b.txt")
        );
        assert_eq!(
            disposition_filename(
                r#"attachment; filename="x.txt"; filename*=UTF-8''%C3%A9t%C3%A9.txt"#
            )
            .as_deref(),
            Some("été.txt")
        );
        assert_eq!(disposition_filename("attachment"), None);
    }

    #[test]
    fn attachment_ids_are_at_most_ten_distinct_ids() {
        let id = Uuid::now_v7();
        assert_eq!(
            attachment_ids("attachmentIds", Some(&serde_json::json!([id]))),
            Ok(vec![id])
        );
        let eleven: Vec<String> = (0..11).map(|_| Uuid::now_v7().to_string()).collect();
        assert!(attachment_ids("attachmentIds", Some(&serde_json::json!(eleven))).is_err());
        assert!(attachment_ids("attachmentIds", Some(&serde_json::json!([id, id]))).is_err());
        assert!(attachment_ids("attachmentIds", Some(&serde_json::json!(["x"]))).is_err());
    }
}
