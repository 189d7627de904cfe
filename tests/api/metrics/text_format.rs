//! A strict parser of the Prometheus text exposition format (version
//! 0.0.4), as Prometheus itself reads it: `# HELP` / `# TYPE` lines, then
//! samples `name{label="value",…} value`. Anything else is an error, as is
//! a family typed twice, a sample before or outside its family's type, a
//! histogram sample without its suffix, or the same series twice.

use std::collections::{BTreeMap, HashMap, HashSet};

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

#[derive(Debug, Default)]
pub struct Exposition {
    /// Family name → type (`counter`, `gauge`, `histogram`, …).
    pub types: HashMap<String, String>,
    pub samples: Vec<Sample>,
}

impl Exposition {
    /// The samples named `name` (a family's own name, or `x_bucket` …).
    pub fn series(&self, name: &str) -> Vec<&Sample> {
        self.samples.iter().filter(|s| s.name == name).collect()
    }

    /// Every sample name present.
    pub fn sample_names(&self) -> HashSet<&str> {
        self.samples.iter().map(|s| s.name.as_str()).collect()
    }
}

const TYPES: [&str; 5] = ["counter", "gauge", "histogram", "summary", "untyped"];

pub fn parse(text: &str) -> Result<Exposition, String> {
    let mut exposition = Exposition::default();
    let mut seen = HashSet::new();
    for (number, line) in text.lines().enumerate() {
        let at = |message: String| format!("line {}: {message}: {line:?}", number + 1);
        if line.trim().is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let mut words = comment.trim_start().splitn(3, ' ');
            match (words.next(), words.next(), words.next()) {
                (Some("TYPE"), Some(name), Some(kind)) => {
                    check_metric_name(name).map_err(at)?;
                    if !TYPES.contains(&kind) {
                        return Err(at(format!("unknown type {kind}")));
                    }
                    if exposition
                        .samples
                        .iter()
                        .any(|s| family_of(&s.name) == name)
                    {
                        return Err(at("TYPE after the family's samples".into()));
                    }
                    if exposition
                        .types
                        .insert(name.to_string(), kind.to_string())
                        .is_some()
                    {
                        return Err(at("family typed twice".into()));
                    }
                }
                (Some("HELP"), Some(name), _) => check_metric_name(name).map_err(at)?,
                _ => {} // other comments are allowed
            }
            continue;
        }
        let sample = parse_sample(line).map_err(at)?;
        check_family(&exposition.types, &sample).map_err(at)?;
        if !seen.insert((sample.name.clone(), sample.labels.clone())) {
            return Err(at("series repeated".into()));
        }
        exposition.samples.push(sample);
    }
    Ok(exposition)
}

/// The family a sample belongs to: `x_bucket`, `x_sum`, `x_count` are x's
/// when x is a histogram or summary; otherwise the name itself.
fn family_of(name: &str) -> &str {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = name.strip_suffix(suffix) {
            return base;
        }
    }
    name
}

fn check_family(types: &HashMap<String, String>, sample: &Sample) -> Result<(), String> {
    let base = family_of(&sample.name);
    match types.get(base).map(String::as_str) {
        Some("histogram") if base != sample.name => {
            if sample.name.ends_with("_bucket") && !sample.labels.contains_key("le") {
                return Err("a bucket without le".into());
            }
            Ok(())
        }
        Some("histogram") => Err("a histogram sample without a suffix".into()),
        Some(_) if base != sample.name && !types.contains_key(&sample.name) => {
            Err("a suffixed sample of a family that is not a histogram".into())
        }
        _ if types.contains_key(&sample.name) => Ok(()),
        _ => Err("a sample without a TYPE line".into()),
    }
}

fn check_metric_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
        Ok(())
    } else {
        Err(format!("invalid metric name {name:?}"))
    }
}

fn check_label_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(format!("invalid label name {name:?}"))
    }
}

fn parse_sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(['{', ' '])
        .ok_or_else(|| "a sample without a value".to_string())?;
    let name = &line[..name_end];
    check_metric_name(name)?;
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(inside) = rest.strip_prefix('{') {
        let (parsed, after) = parse_labels(inside)?;
        labels = parsed;
        rest = after;
    }
    let rest = rest
        .strip_prefix(' ')
        .ok_or_else(|| "no space before the value".to_string())?;
    let mut parts = rest.split(' ');
    let value = parse_value(parts.next().unwrap_or_default())?;
    if let Some(timestamp) = parts.next() {
        timestamp
            .parse::<i64>()
            .map_err(|_| format!("invalid timestamp {timestamp:?}"))?;
    }
    if parts.next().is_some() {
        return Err("text after the timestamp".into());
    }
    Ok(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// Labels after `{` up to `}`; answers them and the text after `}`.
fn parse_labels(mut text: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    loop {
        if let Some(after) = text.strip_prefix('}') {
            return Ok((labels, after));
        }
        let eq = text.find('=').ok_or("a label without =")?;
        let name = &text[..eq];
        check_label_name(name)?;
        let quoted = text[eq + 1..]
            .strip_prefix('"')
            .ok_or("a label value without quotes")?;
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("an unterminated label value".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    _ => return Err("an invalid escape in a label value".into()),
                },
                Some((_, c)) => value.push(c),
            }
        };
        if labels.insert(name.to_string(), value).is_some() {
            return Err(format!("label {name} repeated"));
        }
        text = &quoted[end + 1..];
        if let Some(after) = text.strip_prefix(',') {
            text = after;
        } else if !text.starts_with('}') {
            return Err("labels not separated by commas".into());
        }
    }
}

fn parse_value(text: &str) -> Result<f64, String> {
    match text {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ => text
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("invalid value {text:?}")),
    }
}

/// The metric names a PromQL expression reads: identifiers that are not
/// functions (followed by `(`), aggregation operators, keywords, label names inside `{…}` or the
/// lists of `by`/`without`/`on`/`ignoring`/`group_left`/`group_right`, nor
/// durations in `[…]`.
pub fn promql_metric_names(expr: &str) -> Vec<String> {
    // Aggregation operators may be followed by `by (…)` rather than `(`.
    const KEYWORDS: [&str; 24] = [
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "and",
        "or",
        "unless",
        "bool",
        "offset",
        "inf",
    ];
    let chars: Vec<char> = expr.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    // Depth of `{…}` and `[…]`; a list after a grouping keyword.
    let (mut braces, mut brackets, mut in_grouping) = (0, 0, false);
    let mut after_grouping_keyword = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            // A string literal: skip it.
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        match c {
            '{' => braces += 1,
            '}' => braces -= 1,
            '[' => brackets += 1,
            ']' => brackets -= 1,
            '(' if after_grouping_keyword => {
                in_grouping = true;
                after_grouping_keyword = false;
            }
            ')' if in_grouping => in_grouping = false,
            _ => {}
        }
        if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let next = chars[i..].iter().find(|c| !c.is_whitespace());
            let lower = word.to_ascii_lowercase();
            if [
                "by",
                "without",
                "on",
                "ignoring",
                "group_left",
                "group_right",
            ]
            .contains(&lower.as_str())
            {
                after_grouping_keyword = true;
                continue;
            }
            let is_number_part = start > 0 && chars[start - 1].is_ascii_digit();
            if braces == 0
                && brackets == 0
                && !in_grouping
                && next != Some(&'(')
                && !KEYWORDS.contains(&lower.as_str())
                && !is_number_part
            {
                names.push(word);
            }
            continue;
        }
        i += 1;
    }
    names
}
