//! Incoming HTML made safe to show: ammonia's safe subset (no scripts, no
//! event handlers, no styles), links opened without the desk's referrer,
//! only `https:` and `mailto:` URLs, and no remote images by default (a
//! remote image is a tracking pixel: it tells the sender when and where
//! the message was read).

use std::collections::HashSet;

/// Whether images from other servers stay (off by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RemoteImages {
    #[default]
    Dropped,
    Kept,
}

/// `html` cleaned for display.
pub fn sanitize(html: &str, images: RemoteImages) -> String {
    let mut builder = ammonia::Builder::default();
    builder
        .link_rel(Some("noopener noreferrer nofollow"))
        .url_schemes(HashSet::from(["https", "mailto"]));
    if images == RemoteImages::Dropped {
        builder.attribute_filter(|element, attribute, value| match (element, attribute) {
            ("img", "src" | "srcset") => None,
            _ => Some(value.into()),
        });
    }
    builder.clean(html).to_string()
}

/// The text of `html`, every tag dropped (scripts and styles with their
/// content): what a message without a plain part says.
pub fn text_of(html: &str) -> String {
    ammonia::Builder::empty().clean(html).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = r#"<p onclick="steal()">Hi <b>there</b></p>
<script>alert(1)</script><img src="https://tracker.example/p.gif" onerror="x()">
<a href="javascript:alert(1)">x</a><a href="https://ok.example/">ok</a>"#;

    #[test]
    fn scripts_event_handlers_and_remote_images_are_dropped() {
        let clean = sanitize(HOSTILE, RemoteImages::Dropped);
        assert!(!clean.contains("<script"), "{clean}");
        assert!(!clean.contains("alert"), "{clean}");
        assert!(!clean.contains("onclick"), "{clean}");
        assert!(!clean.contains("onerror"), "{clean}");
        assert!(!clean.contains("tracker.example"), "{clean}");
        assert!(!clean.contains("javascript:"), "{clean}");
        assert!(clean.contains("<b>there</b>"), "{clean}");
        assert!(
            clean.contains(
                r#"<a href="https://ok.example/" rel="noopener noreferrer nofollow">ok</a>"#
            ),
            "{clean}"
        );
    }

    #[test]
    fn remote_images_stay_when_asked() {
        let clean = sanitize(HOSTILE, RemoteImages::Kept);
        assert!(clean.contains("https://tracker.example/p.gif"), "{clean}");
        assert!(!clean.contains("onerror"), "{clean}");
    }
}
