//! The new part of a reply: the quoted history (`> ` lines, "On … wrote:",
//! Outlook's "-----Original Message-----" and its header block) and the
//! signature (after `-- `) are cut from the comment; the full message is
//! kept beside it.

/// The text of `body` before its quoted history and signature. A body
/// that is nothing but a quote stays whole (better a long comment than an
/// empty one).
pub fn new_part(body: &str) -> String {
    let lines: Vec<&str> = body.lines().collect();
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate() {
        if starts_history(line, lines.get(i + 1).copied()) {
            end = i;
            break;
        }
    }
    let kept = lines[..end].join("\n");
    let kept = kept.trim_end();
    if kept.trim().is_empty() {
        body.trim_end().to_string()
    } else {
        kept.to_string()
    }
}

fn starts_history(line: &str, next: Option<&str>) -> bool {
    let trimmed = line.trim();
    line == "-- "
        || line == "--"
        || trimmed.starts_with('>')
        || trimmed.eq_ignore_ascii_case("-----original message-----")
        || trimmed.starts_with("________________________________")
        || attribution(trimmed)
        || attribution(&format!("{trimmed} {}", next.unwrap_or_default().trim()))
        || (trimmed.starts_with("From:") && next.is_some_and(|n| n.trim().starts_with("Sent:")))
}

/// "On Mon, 1 Jan 2026, Ada <ada@…> wrote:" and its translations' common
/// shape: a line starting with "On" and ending with "wrote:".
fn attribution(line: &str) -> bool {
    (line.starts_with("On ") && line.ends_with("wrote:"))
        || (line.starts_with("Le ") && line.ends_with("a écrit :"))
        || (line.starts_with("Am ") && line.ends_with("schrieb:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_history_and_signature_are_cut() {
        let body = "Thanks, that fixed it.\n\n-- \nAda\nShop Ltd\n\nOn Mon, 1 Jan 2026, Desk <support@acme.example> wrote:\n> Try turning it off.";
        assert_eq!(new_part(body), "Thanks, that fixed it.");
        let wrapped =
            "Still broken.\nOn Mon, 1 Jan 2026 at 10:00, Desk\n<support@acme.example> wrote:\n> hi";
        assert_eq!(new_part(wrapped), "Still broken.");
        let outlook = "Yes please.\n\nFrom: Desk\nSent: Monday\nTo: Ada\n\nhello";
        assert_eq!(new_part(outlook), "Yes please.");
    }

    #[test]
    fn a_body_that_is_only_a_quote_stays_whole() {
        assert_eq!(new_part("> only a quote"), "> only a quote");
    }
}
