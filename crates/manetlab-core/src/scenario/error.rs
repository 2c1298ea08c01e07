//! Scenario errors: always the key path, the offending value and what is allowed.
//!
//! A message is one line and quotes at most a bounded, escaped excerpt of a
//! value ([`quote`], [`excerpt`]): a scenario is untrusted data, and a value with
//! a newline or a terminal escape, or 70 kB long, must not reach a terminal or a
//! log as it is. [`ScenarioError::new`] enforces this for every message (control
//! and format characters escaped, length bounded) as a last line of defence.

use std::fmt;

/// A scenario that cannot be run, with the key path where the problem is
/// (`flows[2].dst`) and a one-line message saying what is wrong and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    /// An error at `path`. Both parts are made one line here (control and
    /// format characters escaped) and bounded ([`MAX_PATH_CHARS`],
    /// [`MAX_MESSAGE_CHARS`]), whatever the caller put in them.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: one_line(&path.into(), MAX_PATH_CHARS),
            message: one_line(&message.into(), MAX_MESSAGE_CHARS),
        }
    }

    /// Turn a serde error at `path` into our wording: unknown and missing keys are
    /// reported at the key itself, and Rust type names become words a user knows.
    pub(crate) fn from_serde(path: &str, raw: &str) -> Self {
        let raw = strip_position(raw);
        let join = |key: &str| {
            if path.is_empty() || path == "." {
                key.to_string()
            } else {
                format!("{path}.{key}")
            }
        };
        if let Some(rest) = raw.strip_prefix("unknown field `") {
            if let Some((key, allowed)) = rest.split_once('`') {
                let allowed = allowed.trim_start_matches(", ");
                let allowed = allowed
                    .strip_prefix("expected one of ")
                    .or_else(|| allowed.strip_prefix("expected "))
                    .unwrap_or(allowed)
                    .replace('`', "");
                let allowed = if allowed.contains("there are no fields") {
                    "none".to_string()
                } else {
                    allowed
                };
                // The path already ends at the unknown key.
                let at = if path.ends_with(key) {
                    path.to_string()
                } else {
                    join(key)
                };
                return ScenarioError::new(at, format!("unknown key (allowed here: {allowed})"));
            }
        }
        if let Some(rest) = raw.strip_prefix("missing field `") {
            let key = rest.trim_end_matches('`');
            return ScenarioError::new(join(key), "required key is missing");
        }
        if let Some(rest) = raw.strip_prefix("unknown variant `") {
            if let Some((value, allowed)) = rest.split_once('`') {
                let allowed = allowed
                    .trim_start_matches(", ")
                    .trim_start_matches("expected one of ")
                    .trim_start_matches("expected ")
                    .replace('`', "\"");
                return ScenarioError::new(
                    path_or_root(path),
                    format!("{} is not allowed (allowed: {allowed})", quote(value)),
                );
            }
        }
        ScenarioError::new(path_or_root(path), humanize_types(&bound_quoted(&raw)))
    }
}

/// Most characters of a value a message quotes ([`excerpt`]).
pub const MAX_EXCERPT_CHARS: usize = 60;
/// Most characters of an error's key path (a key is user-given text too).
pub const MAX_PATH_CHARS: usize = 200;
/// Most characters of an error's message: far above any message we write
/// (the longest lists what is allowed), so only runaway text is cut.
pub const MAX_MESSAGE_CHARS: usize = 1000;

/// Whether `c` is a control or format character: Unicode general categories
/// Cc (control: NUL, tab, newline, ESC, DEL, C1), Cf (format: soft hyphen,
/// zero-width and bidirectional marks and overrides, BOM, tags …), Zl (line
/// separator) and Zp (paragraph separator). These are what names may not hold
/// and what messages escape. The Cf list is Unicode 15.1's.
pub fn is_control_or_format(c: char) -> bool {
    const CF: &[(u32, u32)] = &[
        (0x00AD, 0x00AD),
        (0x0600, 0x0605),
        (0x061C, 0x061C),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x0890, 0x0891),
        (0x08E2, 0x08E2),
        (0x180E, 0x180E),
        (0x200B, 0x200F),
        (0x202A, 0x202E),
        (0x2060, 0x2064),
        (0x2066, 0x206F),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x1343F),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0001, 0xE0001),
        (0xE0020, 0xE007F),
    ];
    let u = c as u32;
    c.is_control()
        || u == 0x2028
        || u == 0x2029
        || CF.iter().any(|&(lo, hi)| (lo..=hi).contains(&u))
}

/// `c` as an escape a reader can type back: `\n`, `\t`, `\r`, `\x1b`, `\u{202e}`.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
    }
}

/// A value as a message may show it: control and format characters escaped
/// (`\n`, `\x1b`, `\u{202e}`), at most [`MAX_EXCERPT_CHARS`] characters of it
/// and then `…`. No quotes around it (see [`quote`]).
pub fn excerpt(value: &str) -> String {
    escaped(value, false)
}

/// A value in double quotes, as [`excerpt`] but with `"` and `\` escaped too,
/// so the quoted text reads back unambiguously: `"a\nb"`.
pub fn quote(value: &str) -> String {
    format!("\"{}\"", escaped(value, true))
}

fn escaped(value: &str, in_quotes: bool) -> String {
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        if i == MAX_EXCERPT_CHARS {
            out.push('…');
            break;
        }
        match c {
            '"' | '\\' if in_quotes => {
                out.push('\\');
                out.push(c);
            }
            c if is_control_or_format(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// A JSON value as a message may show it: its JSON text (strings quoted and
/// escaped by JSON's rules), at most [`MAX_EXCERPT_CHARS`] characters and then `…`.
pub fn value_excerpt(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => quote(s),
        v => {
            let text = v.to_string();
            let mut out: String = text.chars().take(MAX_EXCERPT_CHARS).collect();
            if out.len() < text.len() {
                out.push('…');
            }
            // JSON escapes control characters but not format characters.
            one_line(&out, MAX_EXCERPT_CHARS + 1)
        }
    }
}

/// `s` on one line: control and format characters escaped, and cut after
/// `max` characters (with `…`).
fn one_line(s: &str, max: usize) -> String {
    if s.chars().all(|c| !is_control_or_format(c)) && s.len() <= max {
        return s.to_string();
    }
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if is_control_or_format(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// serde quotes a string value it cannot use Rust-escaped (`invalid type:
/// string "…"`), but whole: cut each quoted part to [`MAX_EXCERPT_CHARS`].
fn bound_quoted(raw: &str) -> String {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        // The closing quote: the first `"` not escaped by a backslash.
        let mut close = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    close = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        let inner = &rest[..close];
        if inner.chars().count() > MAX_EXCERPT_CHARS {
            let mut cut: String = inner.chars().take(MAX_EXCERPT_CHARS).collect();
            // Do not leave half an escape (`\u{20`) at the cut.
            if let Some(b) = cut.rfind('\\').filter(|&b| cut.len() - b < 10) {
                cut.truncate(b);
            }
            out.push_str(&cut);
            out.push('…');
        } else {
            out.push_str(inner);
        }
        out.push('"');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn path_or_root(path: &str) -> String {
    if path.is_empty() || path == "." {
        "(top level)".into()
    } else {
        path.to_string()
    }
}

/// serde_json appends " at line L column C"; our JSON is internal, so drop it.
fn strip_position(raw: &str) -> String {
    match raw.rfind(" at line ") {
        Some(i) if raw[i..].contains(" column ") => raw[..i].to_string(),
        _ => raw.to_string(),
    }
}

fn humanize_types(raw: &str) -> String {
    let mut s = raw.replace("invalid type: ", "wrong type: got ");
    for (rust, human) in [
        ("expected u8", "expected an integer in 0..=255"),
        ("expected u16", "expected an integer in 0..=65535"),
        ("expected u32", "expected an integer in 0..=4294967295"),
        (
            "expected u64",
            "expected an integer in 0..=18446744073709551615",
        ),
        (
            "expected usize",
            "expected an integer in 0..=18446744073709551615",
        ),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a sequence", "expected a list"),
        ("expected a string", "expected a string"),
    ] {
        s = s.replace(rust, human);
    }
    // "expected struct Nodes" names a Rust type; the user wrote a TOML table.
    if let Some(i) = s.find("expected struct ") {
        s.truncate(i);
        s.push_str("expected a table");
    }
    if s.starts_with("invalid value: integer") {
        s = s.replace("invalid value: integer", "out of range: integer");
    }
    s
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ScenarioError {}
