//! Run a scenario with its outputs in a fresh temporary directory and return
//! the result and the lines of its ns-2 trace (`trace.tr`).

use manetlab_core::{run_with_outputs, RunResult, Scenario};

/// `tag` names the directory (test binaries run in parallel).
pub fn run_traced(tag: &str, text: &str) -> (RunResult, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("manetlab-{tag}-{}", std::process::id()));
    let s = Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    let r = run_with_outputs(&s, Some(&dir)).unwrap();
    let trace = std::fs::read_to_string(dir.join("trace.tr")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    (r, trace.lines().map(str::to_owned).collect())
}
