//! Text helpers of the knowledge base: slugs from titles, the plain text of
//! Markdown (what search indexes and excerpts show), and automatic excerpts.

/// Longest slug, generated or given.
pub const SLUG_MAX: usize = 100;
/// Length of an automatic excerpt, in characters (before the ellipsis).
pub const EXCERPT_LEN: usize = 160;

/// A URL slug from a title: lower-case ASCII letters and digits separated by
/// single `-`, at most [`SLUG_MAX`] characters. Common Latin accents are
/// folded (`é` → `e`); other characters separate words. A title with no
/// usable character gives `fallback`.
pub fn slugify(title: &str, fallback: &str) -> String {
    let mut slug = String::with_capacity(title.len().min(SLUG_MAX));
    let mut pending_dash = false;
    for c in title.chars() {
        let folded = fold(c);
        if folded.is_empty() {
            pending_dash = true;
            continue;
        }
        for f in folded.chars() {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push(f);
        }
    }
    let slug = truncate_slug(&slug, SLUG_MAX);
    if slug.is_empty() {
        fallback.to_string()
    } else {
        slug
    }
}

/// `slug` cut to at most `max` characters, without a trailing `-`.
pub fn truncate_slug(slug: &str, max: usize) -> String {
    // Slugs are ASCII, so bytes are characters.
    let cut = if slug.len() > max { &slug[..max] } else { slug };
    cut.trim_end_matches('-').to_string()
}

/// `base-n`, shortening `base` so the whole stays within [`SLUG_MAX`].
pub fn with_suffix(base: &str, n: u32) -> String {
    let suffix = format!("-{n}");
    format!(
        "{}{suffix}",
        truncate_slug(base, SLUG_MAX.saturating_sub(suffix.len()))
    )
}

/// Whether `slug` is a valid explicit slug: `a-z`, `0-9` and single inner
/// hyphens, 1..=[`SLUG_MAX`] characters.
pub fn is_valid_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.len() <= SLUG_MAX
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-')
        && !slug.contains("--")
}

/// Lower-case ASCII for one character: itself, a folded accent, or "".
fn fold(c: char) -> &'static str {
    const ALNUM: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
    let lower = c.to_ascii_lowercase();
    if lower.is_ascii_alphanumeric() {
        let i = ALNUM.find(lower).unwrap_or(0);
        return &ALNUM[i..i + 1];
    }
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' => "a",
        'ç' | 'Ç' => "c",
        'è' | 'é' | 'ê' | 'ë' | 'È' | 'É' | 'Ê' | 'Ë' => "e",
        'ì' | 'í' | 'î' | 'ï' | 'Ì' | 'Í' | 'Î' | 'Ï' => "i",
        'ñ' | 'Ñ' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' => "o",
        'ù' | 'ú' | 'û' | 'ü' | 'Ù' | 'Ú' | 'Û' | 'Ü' => "u",
        'ý' | 'ÿ' | 'Ý' => "y",
        'ß' => "ss",
        'æ' | 'Æ' => "ae",
        'œ' | 'Œ' => "oe",
        _ => "",
    }
}

/// The plain text of Markdown, on one line: headings, list and quote
/// markers, emphasis, code fences and backticks, HTML tags, link targets and
/// images (their alt text stays) are removed; whitespace is collapsed.
pub fn plain_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut in_fence = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            out.push(' ');
            continue;
        }
        if in_fence {
            out.push_str(line);
            out.push(' ');
            continue;
        }
        if is_rule_or_table_rule(trimmed) || is_reference_definition(trimmed) {
            out.push(' ');
            continue;
        }
        let mut rest = trimmed;
        while let Some(r) = rest.strip_prefix('>') {
            rest = r.trim_start();
        }
        if rest.starts_with('#') {
            rest = rest.trim_start_matches('#').trim();
            rest = rest.trim_end_matches('#');
        }
        rest = strip_list_marker(rest);
        inline_text(rest, &mut out);
        out.push(' ');
    }
    collapse_whitespace(&out)
}

/// An excerpt from plain text: all of it when short, else about
/// [`EXCERPT_LEN`] characters cut at a word boundary, with `…`.
pub fn excerpt_of(plain: &str) -> String {
    let plain = plain.trim();
    if plain.chars().count() <= EXCERPT_LEN {
        return plain.to_string();
    }
    let end = plain
        .char_indices()
        .nth(EXCERPT_LEN)
        .map_or(plain.len(), |(i, _)| i);
    let head = &plain[..end];
    let cut = match head.rfind(char::is_whitespace) {
        Some(space) if space > end / 2 => &head[..space],
        _ => head,
    };
    let cut = cut.trim_end_matches(|c: char| c.is_whitespace() || ",;:-–—".contains(c));
    format!("{cut}…")
}

/// Collapses runs of whitespace (and control characters) to one space.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(|c: char| c.is_whitespace() || c.is_control()) {
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn is_rule_or_table_rule(line: &str) -> bool {
    let line = line.trim_end();
    if line.len() < 3 {
        return false;
    }
    let rule = |c: char| line.chars().all(|x| x == c || x == ' ') && line.contains(c);
    if rule('-') || rule('*') || rule('_') || rule('=') {
        return true;
    }
    line.contains('-') && line.chars().all(|c| "|:- ".contains(c))
}

fn is_reference_definition(line: &str) -> bool {
    line.starts_with('[') && line.contains("]:") && !line.starts_with("[]")
}

fn strip_list_marker(line: &str) -> &str {
    for marker in ["- [ ] ", "- [x] ", "* [ ] ", "* [x] ", "- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return rest;
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits < 10 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest;
        }
    }
    line
}

/// Inline Markdown of one line to text, appended to `out`.
fn inline_text(line: &str, out: &mut String) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() && chars[i + 1].is_ascii_punctuation() => {
                out.push(chars[i + 1]);
                i += 2;
            }
            '!' if chars.get(i + 1) == Some(&'[') => {
                // Image: keep the alt text.
                i = link(&chars, i + 1, out);
            }
            '[' => i = link(&chars, i, out),
            '<' => i = tag(&chars, i, out),
            '`' | '*' | '~' => i += 1,
            '|' => {
                out.push(' ');
                i += 1;
            }
            '_' => {
                let before = i.checked_sub(1).and_then(|j| chars.get(j));
                let after = chars.get(i + 1);
                let inner = before.is_some_and(|b| b.is_alphanumeric())
                    && after.is_some_and(|a| a.is_alphanumeric());
                if inner {
                    out.push('_');
                }
                i += 1;
            }
            '&' => i = entity(&chars, i, out),
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// `[text](url)`, `[text][ref]` or `[text]` at `start`: appends the text and
/// returns the index after the construct.
fn link(chars: &[char], start: usize, out: &mut String) -> usize {
    let Some(close) = chars[start..].iter().position(|&c| c == ']') else {
        out.push('[');
        return start + 1;
    };
    let close = start + close;
    let text: String = chars[start + 1..close].iter().collect();
    let mut nested = String::new();
    inline_text(&text, &mut nested);
    out.push_str(&nested);
    let after = close + 1;
    let target_end = |open: char, end: char| -> Option<usize> {
        (chars.get(after) == Some(&open))
            .then(|| chars[after..].iter().position(|&c| c == end))
            .flatten()
            .map(|p| after + p + 1)
    };
    target_end('(', ')')
        .or_else(|| target_end('[', ']'))
        .unwrap_or(after)
}

/// An HTML tag or autolink at `start`: tags are dropped, autolinks keep
/// their address; a lone `<` stays.
fn tag(chars: &[char], start: usize, out: &mut String) -> usize {
    let next = chars.get(start + 1);
    let looks_like_tag = next.is_some_and(|c| c.is_ascii_alphabetic() || *c == '/' || *c == '!');
    if let (true, Some(end)) = (
        looks_like_tag,
        chars[start..].iter().position(|&c| c == '>'),
    ) {
        let inner: String = chars[start + 1..start + end].iter().collect();
        if inner.starts_with("http://") || inner.starts_with("https://") || inner.contains('@') {
            out.push_str(&inner);
        } else {
            out.push(' ');
        }
        return start + end + 1;
    }
    out.push('<');
    start + 1
}

/// A common HTML entity at `start`, decoded.
fn entity(chars: &[char], start: usize, out: &mut String) -> usize {
    const ENTITIES: [(&str, char); 6] = [
        ("&amp;", '&'),
        ("&lt;", '<'),
        ("&gt;", '>'),
        ("&quot;", '"'),
        ("&#39;", '\''),
        ("&nbsp;", ' '),
    ];
    for (name, value) in ENTITIES {
        let len = name.chars().count();
        if chars.len() >= start + len && chars[start..start + len].iter().copied().eq(name.chars())
        {
            out.push(value);
            return start + len;
        }
    }
    out.push('&');
    start + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lower_case_ascii_with_single_dashes() {
        assert_eq!(
            slugify("Reset your Password!", "article"),
            "reset-your-password"
        );
        assert_eq!(
            slugify("  Über café -- crème  ", "article"),
            "uber-cafe-creme"
        );
        assert_eq!(slugify("C++ & Rust: 2 ways", "article"), "c-rust-2-ways");
        assert_eq!(slugify("日本語", "article"), "article");
        let long = slugify(&"word ".repeat(60), "article");
        assert!(long.len() <= SLUG_MAX && !long.ends_with('-'), "{long}");
        assert_eq!(with_suffix("reset", 2), "reset-2");
        assert_eq!(with_suffix(&"a".repeat(100), 12).len(), 100);
        assert!(is_valid_slug("getting-started-2"));
        assert!(!is_valid_slug("Getting-Started"));
        assert!(!is_valid_slug("a--b"));
        assert!(!is_valid_slug("-a"));
        assert!(!is_valid_slug(""));
    }

    #[test]
    fn markdown_becomes_plain_text() {
        let md = "# Reset your *password*\n\n\
                  1. Open **Settings** > [Security](https://x.test/s)\n\
                  - Click `Reset`, see ![the button](b.png)\n\
                  > Note: <b>snake_case</b> &amp; _emphasis_\n\
                  ```\nlet code = 1;\n```\n---\n[ref]: https://x.test";
        assert_eq!(
            plain_text(md),
            "Reset your password Open Settings > Security Click Reset, see the button \
             Note: snake_case & emphasis let code = 1;"
        );
    }

    #[test]
    fn excerpts_cut_at_a_word_boundary() {
        assert_eq!(excerpt_of("Short text."), "Short text.");
        let long = "word ".repeat(100);
        let excerpt = excerpt_of(&long);
        assert!(excerpt.ends_with("word…"), "{excerpt}");
        assert!(excerpt.chars().count() <= EXCERPT_LEN + 1);
    }
}
