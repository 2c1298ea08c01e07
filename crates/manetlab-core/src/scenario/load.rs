//! Loading a scenario from a file: the one place the core reads files named in
//! a scenario.
//!
//! [`Scenario::from_file`] reads a TOML (or, with a `.json` extension, JSON)
//! scenario and, for `mobility.model = "ns2_file"` with a `path` but no
//! `ns2_text`, reads the movement file (relative to the scenario file's folder)
//! into `mobility.ns2_text` before validating, and `traffic.ns2_file` into
//! `traffic.ns2_text` likewise. [`Scenario::from_value`] and the
//! string parsers never touch the file system; the Python front does the same
//! inlining, through [`inline_referenced_files`], before validation.
//!
//! A scenario is untrusted data, so a file it names is read only when it is
//! (docs/scenarios.md#files-a-scenario-names):
//! * inside the folder tree of the file that names it, after resolving
//!   symbolic links (a link that stays inside is followed; `../x`, an absolute
//!   path or a link leading out is refused), unless the caller allows files
//!   outside (`allow_outside`; the CLI's `--allow-outside`);
//! * a regular file: FIFOs, devices, sockets and directories are refused. It
//!   is opened without blocking (`O_NONBLOCK`), so a FIFO swapped in after the
//!   check cannot hang the loader, and checked again on the open file;
//! * at most [`MAX_REFERENCED_FILE_BYTES`] (a scenario file itself:
//!   [`MAX_SCENARIO_FILE_BYTES`]).
//!
//! Errors name the key and quote the file name as written; a file's content
//! reaches a message only as a bounded, escaped excerpt of one line.

use super::{quote, Scenario, ScenarioError};
use serde_json::Value;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

impl Scenario {
    /// Read, inline referenced files, parse and validate a scenario file.
    /// Files it names must lie inside its folder tree.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        Scenario::from_file_with(path, false)
    }

    /// [`from_file`](Self::from_file); with `allow_outside`, files the scenario
    /// names may lie anywhere (they must still be regular files within the size cap).
    pub fn from_file_with(
        path: impl AsRef<Path>,
        allow_outside: bool,
    ) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = read_scenario_file(path)?;
        // A UTF-8 byte order mark some editors write is not part of the document.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut value: Value = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(text).map_err(json_error)?
        } else {
            toml::from_str(text).map_err(|e| {
                ScenarioError::new("(file)", format!("not valid TOML: {}", e.message()))
            })?
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        inline_referenced_files_with(&mut value, parent, allow_outside)?;
        Scenario::from_value(value)
    }
}

/// Largest scenario (or study) file read (bytes): hand-written scenarios are a
/// few kB. A JSON scenario may carry a movement file's text (a result folder's
/// `scenario.json`), so JSON files may also hold up to
/// [`MAX_REFERENCED_FILE_BYTES`] more.
pub const MAX_SCENARIO_FILE_BYTES: u64 = 1 << 20;

/// Largest movement or traffic file read (bytes). ns-2.35's biggest scenario file
/// is 190 kB; the text is held a few times over (scenario, normalised JSON, the
/// Python front's copy), so the bound keeps a run's loading well under 1 GB.
pub const MAX_REFERENCED_FILE_BYTES: u64 = 64 << 20;

/// A scenario file's text: a regular file, at most [`MAX_SCENARIO_FILE_BYTES`]
/// (plus [`MAX_REFERENCED_FILE_BYTES`] for `.json`), UTF-8. Errors at `(file)`.
pub fn read_scenario_file(path: &Path) -> Result<String, ScenarioError> {
    let shown = quote(&path.display().to_string());
    let json = path.extension().is_some_and(|e| e == "json");
    let cap = MAX_SCENARIO_FILE_BYTES + if json { MAX_REFERENCED_FILE_BYTES } else { 0 };
    read_regular(path, cap)
        .map_err(|e| ScenarioError::new("(file)", format!("cannot read {shown}: {e}")))
}

/// Read every file a scenario names (movement file, traffic file) relative to
/// `base_dir`, which must hold them (see the module docs).
pub fn inline_referenced_files(value: &mut Value, base_dir: &Path) -> Result<(), ScenarioError> {
    inline_referenced_files_with(value, base_dir, false)
}

/// [`inline_referenced_files`]; with `allow_outside`, the files may lie anywhere.
pub fn inline_referenced_files_with(
    value: &mut Value,
    base_dir: &Path,
    allow_outside: bool,
) -> Result<(), ScenarioError> {
    check_nesting(value)?;
    inline_movement_file(value, base_dir, allow_outside)?;
    inline_traffic_file(value, base_dir, allow_outside)
}

/// If `value` has `traffic.ns2_file` (a string) and neither `ns2_text` nor the
/// normalised form's `flows_from_file`, read `base_dir/ns2_file` into
/// `traffic.ns2_text`. Anything else is left for validation to judge.
pub fn inline_traffic_file(
    value: &mut Value,
    base_dir: &Path,
    allow_outside: bool,
) -> Result<(), ScenarioError> {
    let Some(t) = value.get_mut("traffic").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if t.contains_key("ns2_text") || t.contains_key("flows_from_file") {
        return Ok(());
    }
    let Some(rel) = t.get("ns2_file").and_then(Value::as_str) else {
        return Ok(());
    };
    let text = read_named_file(base_dir, rel, allow_outside).map_err(|e| {
        ScenarioError::new(
            "traffic.ns2_file",
            format!("cannot read traffic file {}: {e}", quote(rel)),
        )
    })?;
    t.insert("ns2_text".into(), Value::String(text));
    Ok(())
}

/// If `value` has `mobility.model = "ns2_file"` with a string `path` and no
/// `ns2_text`, read `base_dir/path` into `mobility.ns2_text` (`path` stays, as a
/// record). Anything else is left for validation to judge.
pub fn inline_movement_file(
    value: &mut Value,
    base_dir: &Path,
    allow_outside: bool,
) -> Result<(), ScenarioError> {
    let Some(m) = value.get_mut("mobility").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if m.get("model").and_then(Value::as_str) != Some("ns2_file") || m.contains_key("ns2_text") {
        return Ok(());
    }
    let Some(rel) = m.get("path").and_then(Value::as_str) else {
        return Ok(());
    };
    let text = read_named_file(base_dir, rel, allow_outside).map_err(|e| {
        ScenarioError::new(
            "mobility.path",
            format!("cannot read movement file {}: {e}", quote(rel)),
        )
    })?;
    m.insert("ns2_text".into(), Value::String(text));
    Ok(())
}

/// The text of the file `name` names, relative to `base_dir` (an absolute
/// `name` stands for itself): inside `base_dir`'s tree unless `allow_outside`,
/// a regular file of at most [`MAX_REFERENCED_FILE_BYTES`]. The error says
/// what is wrong (the caller adds the key and the name).
pub fn read_named_file(base_dir: &Path, name: &str, allow_outside: bool) -> Result<String, String> {
    let full = resolve_named(base_dir, name, allow_outside)?;
    read_regular(&full, MAX_REFERENCED_FILE_BYTES)
}

/// Where `name` (relative to `base_dir`) leads, symbolic links resolved;
/// outside `base_dir`'s tree is an error unless `allow_outside`.
pub fn resolve_named(base_dir: &Path, name: &str, allow_outside: bool) -> Result<PathBuf, String> {
    if name.is_empty() {
        return Err(
            "an empty file name (allowed: a file name relative to the file that names it)".into(),
        );
    }
    if name.contains('\0') {
        return Err("the name holds a NUL byte (allowed: a file name)".into());
    }
    let base = std::fs::canonicalize(base_dir).map_err(|e| {
        format!(
            "its folder {} cannot be opened ({})",
            quote(&base_dir.display().to_string()),
            io_reason(&e)
        )
    })?;
    let full = base.join(name);
    let real = match std::fs::canonicalize(&full) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "it does not exist (looked for {})",
                quote(&full.display().to_string())
            ))
        }
        Err(e) => return Err(io_reason(&e)),
    };
    if !allow_outside && !real.starts_with(&base) {
        return Err(format!(
            "it is outside the folder of the file that names it, {} (allowed: a file in that folder or below, symbolic links resolved; --allow-outside, or allow_outside=True in Python, reads it anyway)",
            quote(&base.display().to_string())
        ));
    }
    Ok(real)
}

/// A regular file's text, at most `cap` bytes of UTF-8. FIFOs, devices,
/// sockets and directories are refused before opening, and the open never
/// blocks (`O_NONBLOCK`): the opened file is checked again.
pub fn read_regular(path: &Path, cap: u64) -> Result<String, String> {
    let before = std::fs::metadata(path).map_err(|e| io_reason(&e))?;
    not_special(&before)?;
    let f = open_nonblocking(path).map_err(|e| io_reason(&e))?;
    let after = f.metadata().map_err(|e| io_reason(&e))?;
    not_special(&after)?;
    let mut bytes = Vec::new();
    f.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_reason(&e))?;
    if bytes.len() as u64 > cap {
        return Err(format!(
            "larger than {} (allowed: at most that; a movement file's `$god_` lines are ignored anyway, so `grep -v god_` shrinks it)",
            size_text(cap)
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!("not UTF-8 text (a byte that is not UTF-8 at offset {at}; is it the right file?)")
    })
}

fn size_text(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{:.1} MB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// Refuse what is not a regular file, saying what it is.
fn not_special(m: &std::fs::Metadata) -> Result<(), String> {
    let t = m.file_type();
    if t.is_file() {
        return Ok(());
    }
    let what = if t.is_dir() {
        "a directory"
    } else {
        special_kind(&t)
    };
    Err(format!(
        "it is {what}, not a regular file (allowed: regular files only)"
    ))
}

#[cfg(unix)]
fn special_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "a special file"
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// An I/O error's reason without Rust's "(os error N)" suffix.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_lowercase(),
        None => s,
    }
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
            Value::Object(m) => stack.extend(
                m.iter()
                    .map(|(k, c)| (c, depth + 1, top.or(Some(k.as_str())))),
            ),
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
