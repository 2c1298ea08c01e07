//! Scenario errors: always the key path, the offending value and what is allowed.

use std::fmt;

/// A scenario that cannot be run, with the key path where the problem is
/// (`flows[2].dst`) and a one-line message saying what is wrong and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }

    /// Turn a serde error at `path` into our wording: unknown and missing keys are
    /// reported at the key itself, and Rust type names become words a user knows.
    pub(crate) fn from_serde(path: &str, raw: &str) -> Self {
        let raw = strip_position(raw);
        let join = |key: &str| if path.is_empty() || path == "." { key.to_string() } else { format!("{path}.{key}") };
        if let Some(rest) = raw.strip_prefix("unknown field `") {
            if let Some((key, allowed)) = rest.split_once('`') {
                let allowed = allowed.trim_start_matches(", ");
                let allowed = allowed
                    .strip_prefix("expected one of ")
                    .or_else(|| allowed.strip_prefix("expected "))
                    .unwrap_or(allowed)
                    .replace('`', "");
                let allowed = if allowed.contains("there are no fields") { "none".to_string() } else { allowed };
                // The path already ends at the unknown key.
                let at = if path.ends_with(key) { path.to_string() } else { join(key) };
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
                return ScenarioError::new(path_or_root(path), format!("\"{value}\" is not allowed (allowed: {allowed})"));
            }
        }
        ScenarioError::new(path_or_root(path), humanize_types(&raw))
    }
}

fn path_or_root(path: &str) -> String {
    if path.is_empty() || path == "." { "(top level)".into() } else { path.to_string() }
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
        ("expected u64", "expected an integer in 0..=18446744073709551615"),
        ("expected usize", "expected an integer in 0..=18446744073709551615"),
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
