//! Loading a scenario from a file: the one place the core reads files named in
//! a scenario.
//!
//! [`Scenario::from_file`] reads a TOML (or, with a `.json` extension, JSON)
//! scenario and, for `mobility.model = "ns2_file"` with a `path` but no
//! `ns2_text`, reads the movement file (relative to the scenario file's folder)
//! into `mobility.ns2_text` before validating, and `traffic.ns2_file` into
//! `traffic.ns2_text` likewise. [`Scenario::from_value`] and the
//! string parsers never touch the file system; the Python front does the same
//! inlining in Python before handing the scenario to the core.

use super::{Scenario, ScenarioError};
use serde_json::Value;
use std::path::Path;

impl Scenario {
    /// Read, inline referenced movement files, parse and validate a scenario file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::new("(file)", format!("cannot read {}: {e}", path.display())))?;
        // A UTF-8 byte order mark some editors write is not part of the document.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut value: Value = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(text).map_err(json_error)?
        } else {
            toml::from_str(text).map_err(|e| ScenarioError::new("(file)", format!("not valid TOML: {}", e.message())))?
        };
        inline_referenced_files(&mut value, path.parent().unwrap_or(Path::new(".")))?;
        Scenario::from_value(value)
    }
}

/// Read every file a scenario names (movement file, traffic file) relative to `base_dir`.
pub fn inline_referenced_files(value: &mut Value, base_dir: &Path) -> Result<(), ScenarioError> {
    check_nesting(value)?;
    inline_movement_file(value, base_dir)?;
    inline_traffic_file(value, base_dir)
}

/// If `value` has `traffic.ns2_file` (a string) and neither `ns2_text` nor the
/// normalised form's `flows_from_file`, read `base_dir/ns2_file` into
/// `traffic.ns2_text`. Anything else is left for validation to judge.
pub fn inline_traffic_file(value: &mut Value, base_dir: &Path) -> Result<(), ScenarioError> {
    let Some(t) = value.get_mut("traffic").and_then(Value::as_object_mut) else { return Ok(()) };
    if t.contains_key("ns2_text") || t.contains_key("flows_from_file") {
        return Ok(());
    }
    let Some(rel) = t.get("ns2_file").and_then(Value::as_str) else { return Ok(()) };
    let full = base_dir.join(rel);
    let text = read_text(&full).map_err(|e| ScenarioError::new("traffic.ns2_file", format!("cannot read traffic file {}: {e}", full.display())))?;
    t.insert("ns2_text".into(), Value::String(text));
    Ok(())
}

/// A referenced file's text, refusing anything too large to be a scenario's file
/// (reading a device or a huge file by mistake must not exhaust memory).
fn read_text(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(MAX_REFERENCED_FILE_BYTES + 1).read_to_string(&mut text).map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_REFERENCED_FILE_BYTES {
        return Err(format!(
            "larger than {} MB (allowed: at most that; a movement file's `$god_` lines are ignored anyway, so `grep -v god_` shrinks it)",
            MAX_REFERENCED_FILE_BYTES >> 20
        ));
    }
    Ok(text)
}

/// Largest movement or traffic file read (bytes). ns-2.35's biggest scenario file
/// is 190 kB; the text is held a few times over (scenario, normalised JSON, the
/// Python front's copy), so the bound keeps a run's loading well under 1 GB.
pub const MAX_REFERENCED_FILE_BYTES: u64 = 64 << 20;

/// If `value` has `mobility.model = "ns2_file"` with a string `path` and no
/// `ns2_text`, read `base_dir/path` into `mobility.ns2_text` (`path` stays, as a
/// record). Anything else is left for validation to judge.
pub fn inline_movement_file(value: &mut Value, base_dir: &Path) -> Result<(), ScenarioError> {
    let Some(m) = value.get_mut("mobility").and_then(Value::as_object_mut) else { return Ok(()) };
    if m.get("model").and_then(Value::as_str) != Some("ns2_file") || m.contains_key("ns2_text") {
        return Ok(());
    }
    let Some(rel) = m.get("path").and_then(Value::as_str) else { return Ok(()) };
    let full = base_dir.join(rel);
    let text = read_text(&full).map_err(|e| ScenarioError::new("mobility.path", format!("cannot read movement file {}: {e}", full.display())))?;
    m.insert("ns2_text".into(), Value::String(text));
    Ok(())
}

/// Deepest nesting of tables and lists a scenario may have. Real scenarios
/// need four levels; the bound keeps every recursive step (parsing,
/// deserialising, dropping) far from the stack limit.
pub const MAX_NESTING: usize = 64;

/// A clear error for a document nested deeper than [`MAX_NESTING`], naming the
/// top-level key it happens under. Iterative, so any depth is safe to check.
pub fn check_nesting(value: &Value) -> Result<(), ScenarioError> {
    let mut stack: Vec<(&Value, usize, Option<&str>)> = vec![(value, 0, None)];
    while let Some((v, depth, top)) = stack.pop() {
        if depth > MAX_NESTING {
            let at = top.unwrap_or("(top level)");
            return Err(ScenarioError::new(at, format!("nested more than {MAX_NESTING} levels deep (allowed: at most {MAX_NESTING} levels of tables and lists)")));
        }
        match v {
            Value::Object(m) => stack.extend(m.iter().map(|(k, c)| (c, depth + 1, top.or(Some(k.as_str()))))),
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, depth + 1, top))),
            _ => {}
        }
    }
    Ok(())
}

/// A JSON syntax error as a scenario error; hitting the parser's nesting limit
/// (128) is reported as what it is rather than as bad syntax.
pub fn json_error(e: serde_json::Error) -> ScenarioError {
    if e.to_string().starts_with("recursion limit exceeded") {
        ScenarioError::new("(file)", format!("nested more than 128 levels deep (allowed: at most {MAX_NESTING} levels of tables and lists)"))
    } else {
        ScenarioError::new("(file)", format!("not valid JSON: {e}"))
    }
}
