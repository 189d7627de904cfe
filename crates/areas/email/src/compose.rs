//! A MIME message made from a provider's parsed fields, for providers
//! that post a message's parts rather than the message (Postmark without
//! its raw option, SendGrid without "raw", Mailgun's parsed routes): every
//! source then enters by the same door, raw MIME bytes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The headers kept from a provider's header list: those that thread a
/// reply and those that say a machine sent it. Any other is dropped (it
/// could contradict the parts the message is remade of).
const KEPT: &[&str] = &[
    "message-id",
    "in-reply-to",
    "references",
    "date",
    "auto-submitted",
    "precedence",
    "list-id",
    "x-autoreply",
    "x-autorespond",
    "x-auto-response-suppress",
    "x-failed-recipients",
];

/// A file of the message.
pub struct File {
    pub name: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// What a provider told of a message.
#[derive(Default)]
pub struct Fields {
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    /// Header names and values as the provider listed them.
    pub headers: Vec<(String, String)>,
    pub text: Option<String>,
    pub html: Option<String>,
    pub files: Vec<File>,
}

/// A header value on one line (a CR or LF would start another header).
fn one_line(value: &str) -> String {
    value.replace(['\r', '\n'], " ")
}

/// A header value that may hold any text, encoded when not plain ASCII.
fn encoded(value: &str) -> String {
    let value = one_line(value);
    if value.is_ascii() {
        value
    } else {
        format!("=?utf-8?b?{}?=", STANDARD.encode(value.as_bytes()))
    }
}

fn base64_lines(bytes: &[u8]) -> String {
    let text = STANDARD.encode(bytes);
    let mut out = String::with_capacity(text.len() + text.len() / 76 * 2 + 2);
    for chunk in text.as_bytes().chunks(76) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push_str("\r\n");
    }
    out
}

fn quoted_name(name: &str) -> String {
    one_line(name).replace(['"', '\\'], "")
}

/// The message `fields` describe, as MIME bytes. `boundary` separates its
/// parts (any token the parts cannot contain: a random id).
pub fn compose(fields: &Fields, boundary: &str) -> Vec<u8> {
    let mut out = String::new();
    out.push_str(&format!("From: {}\r\n", one_line(&fields.from)));
    if !fields.to.is_empty() {
        out.push_str(&format!("To: {}\r\n", one_line(&fields.to.join(", "))));
    }
    if !fields.cc.is_empty() {
        out.push_str(&format!("Cc: {}\r\n", one_line(&fields.cc.join(", "))));
    }
    out.push_str(&format!("Subject: {}\r\n", encoded(&fields.subject)));
    for (name, value) in &fields.headers {
        let lower = name.trim().to_ascii_lowercase();
        if KEPT.contains(&lower.as_str()) {
            out.push_str(&format!("{}: {}\r\n", name.trim(), one_line(value)));
        }
    }
    let mixed = format!("mixed-{boundary}");
    let alternative = format!("alt-{boundary}");
    out.push_str("MIME-Version: 1.0\r\n");
    out.push_str(&format!(
        "Content-Type: multipart/mixed; boundary=\"{mixed}\"\r\n\r\n"
    ));
    out.push_str(&format!("--{mixed}\r\n"));
    out.push_str(&format!(
        "Content-Type: multipart/alternative; boundary=\"{alternative}\"\r\n\r\n"
    ));
    let bodies = [
        ("text/plain", fields.text.as_deref()),
        ("text/html", fields.html.as_deref()),
    ];
    for (kind, body) in bodies {
        if let Some(body) = body {
            out.push_str(&format!("--{alternative}\r\n"));
            out.push_str(&format!(
                "Content-Type: {kind}; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
            ));
            out.push_str(&base64_lines(body.as_bytes()));
        }
    }
    out.push_str(&format!("--{alternative}--\r\n"));
    for file in &fields.files {
        let name = quoted_name(&file.name);
        out.push_str(&format!("--{mixed}\r\n"));
        out.push_str(&format!(
            "Content-Type: {}; name=\"{name}\"\r\nContent-Disposition: attachment; \
             filename=\"{name}\"\r\nContent-Transfer-Encoding: base64\r\n\r\n",
            one_line(&file.content_type)
        ));
        out.push_str(&base64_lines(&file.bytes));
    }
    out.push_str(&format!("--{mixed}--\r\n"));
    out.into_bytes()
}

/// A raw header block (`Name: value` lines, folded lines joined) as names
/// and values.
pub fn header_lines(block: &str) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = headers.last_mut() {
                value.push(' ');
                value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    #[test]
    fn a_composed_message_reads_back() {
        let fields = Fields {
            from: "Ada <ada@shop.example>".into(),
            to: vec!["support@acme.example".into()],
            cc: vec![],
            subject: "Café\r\nBcc: evil@x.example".into(),
            headers: vec![
                ("Message-ID".into(), "<m1@shop.example>".into()),
                ("X-Spam".into(), "no".into()),
            ],
            text: Some("Hello".into()),
            html: Some("<p>Hello</p>".into()),
            files: vec![File {
                name: "a.txt".into(),
                content_type: "text/plain".into(),
                bytes: b"file body".to_vec(),
            }],
        };
        let parsed = parse(&compose(&fields, "b1"));
        assert_eq!(parsed.message_id.as_deref(), Some("m1@shop.example"));
        assert_eq!(parsed.from.as_deref(), Some("ada@shop.example"));
        assert_eq!(parsed.subject, "Café  Bcc: evil@x.example");
        assert_eq!(parsed.text.as_deref(), Some("Hello"));
        assert_eq!(parsed.parts.len(), 1);
        assert_eq!(parsed.parts[0].bytes, b"file body");
    }

    #[test]
    fn folded_header_lines_are_joined() {
        let lines = header_lines("Message-ID: <a@b>\r\nReferences: <x@y>\r\n <z@y>\r\n");
        assert_eq!(lines[1], ("References".into(), "<x@y> <z@y>".into()));
    }
}
