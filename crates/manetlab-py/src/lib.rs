#![allow(unexpected_cfgs)]
// pyo3 0.22's create_exception! checks a `gil-refs` cfg that rustc >= 1.80 reports.
// pyo3 0.22's #[pyfunction] expansion converts a PyResult's PyErr into PyErr;
// clippy reports that on our functions' lines.
#![allow(clippy::useless_conversion)]
//! Thin PyO3 bindings: parse + validate, and run, a scenario given as JSON.
//! The GIL is released while a run executes, so Python threads (and a Dask
//! worker's other tasks) keep running.

use manetlab_core::scenario::load::{inline_referenced_files_with, json_error};
use manetlab_core::{Scenario, ScenarioError as CoreScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

mod parquet_table;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be run: the message names the key path, the value and what is allowed."
);

create_exception!(_core, InternalError, PyRuntimeError, "A bug in manetlab: the core panicked. The message is one line (what failed, where, and how to report it).");

fn to_py(e: CoreScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

thread_local! {
    /// Where the last panic on this thread happened, recorded by the hook.
    static PANIC_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Record a panic's location instead of printing it (the caller turns the
/// panic into an [`InternalError`] whose message says it all, on one line).
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        PANIC_AT.with(|p| *p.borrow_mut() = at);
    }));
}

/// Characters of a panic message kept in the one-line error.
const PANIC_MESSAGE_CHARS: usize = 300;

/// The one-line message of a panic with `payload`: its text (control
/// characters replaced by spaces, at most [`PANIC_MESSAGE_CHARS`]), where, and
/// the bug-report hint.
fn internal_error_message(payload: &(dyn std::any::Any + Send), at: Option<&str>) -> String {
    let raw = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    let mut text: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(PANIC_MESSAGE_CHARS)
        .collect();
    if raw.chars().count() > PANIC_MESSAGE_CHARS {
        text.push('…');
    }
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = at.map(|a| format!(" at {a}")).unwrap_or_default();
    format!(
        "internal error in manetlab {}: {text}{at}; this is a bug, please report it with the scenario and seed",
        manetlab_core::VERSION
    )
}

/// Run `f`, turning a panic into an [`InternalError`] (never PyO3's
/// PanicException, a BaseException with a Rust backtrace).
fn no_panic<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let at = PANIC_AT.with(|p| p.borrow_mut().take());
            Err(InternalError::new_err(internal_error_message(
                payload.as_ref(),
                at.as_deref(),
            )))
        }
    }
}

/// `MANETLAB_MAX_MEMORY` when set (bytes, or with a K, M, G or T suffix:
/// powers of 1024), else half of this machine's physical memory (`MemTotal`
/// in /proc/meminfo): the memory limit of a run that names none. No limit
/// where neither is known; a malformed variable is a one-line ScenarioError.
fn default_memory_limit() -> Result<u64, CoreScenarioError> {
    if let Ok(v) = std::env::var("MANETLAB_MAX_MEMORY") {
        return parse_size(&v).ok_or_else(|| {
            let shown: String = v.chars().take(40).map(|c| if c.is_control() { '?' } else { c }).collect();
            CoreScenarioError::new("MANETLAB_MAX_MEMORY", format!("{shown} is not a memory size (allowed: a number of bytes >= 1, or with a K, M, G or T suffix, e.g. 8G)"))
        });
    }
    Ok(physical_half())
}

/// `"8G"` → 8·2³⁰; `"512M"`, `"1.5T"`, `"1000000"`; an optional `B`/`iB`.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_uppercase();
    let t = t
        .strip_suffix("IB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(&t)
        .trim_end();
    let (num, mult) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1u64 << 10),
        'M' => (&t[..t.len() - 1], 1 << 20),
        'G' => (&t[..t.len() - 1], 1 << 30),
        'T' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let num = num.trim();
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let v = num.parse::<f64>().ok()? * mult as f64;
    (1.0..9.2e18).contains(&v).then_some(v as u64)
}

fn physical_half() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib.saturating_mul(1024) / 2)
        })
        .unwrap_or(u64::MAX)
}

/// The memory limit a run without `max_memory_bytes` gets (bytes).
#[pyfunction]
fn default_max_memory_bytes() -> PyResult<u64> {
    default_memory_limit().map_err(to_py)
}

/// The core's estimate of a scenario's peak memory (bytes), for checking it
/// against real runs (docs/python.md, "Memory").
#[pyfunction]
fn estimate_memory_bytes(scenario_json: &str) -> PyResult<u64> {
    no_panic(|| {
        let scenario = Scenario::from_json_str(scenario_json).map_err(to_py)?;
        Ok(manetlab_core::world::memory::estimate(&scenario).bytes)
    })
}

/// Every parameter the models declare (crate `manetlab_core::param`), as JSON
/// rows: `section`, `key`, `unit`, `scale` (model units per scenario unit),
/// `allowed`, `defaults` per fidelity profile, `source`, `ns2_tcl`, `doc`.
/// export-ns2 maps keys to ns-2 Tcl variables from it.
#[pyfunction]
fn param_table() -> String {
    manetlab_core::scenario::param_table().to_string()
}

/// Panic on purpose, inside the same guard as `run` and `validate`: lets
/// tests check that a panic reaches Python as one-line `InternalError`
/// (and the CLI's exit status 70). Not part of the API.
#[pyfunction]
fn _panic_for_tests(message: &str) -> PyResult<()> {
    no_panic(|| panic!("{message}"))
}

/// Validate a scenario given as JSON; returns the normalised scenario JSON.
/// With `base_dir` (the scenario file's folder), files the scenario names
/// relative to it (an ns-2 movement or traffic file) are read in first; they
/// must lie inside `base_dir`'s tree unless `allow_outside`.
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=None, allow_outside=false))]
fn validate(scenario_json: &str, base_dir: Option<&str>, allow_outside: bool) -> PyResult<String> {
    no_panic(|| validate_inner(scenario_json, base_dir, allow_outside))
}

fn validate_inner(
    scenario_json: &str,
    base_dir: Option<&str>,
    allow_outside: bool,
) -> PyResult<String> {
    let mut value: serde_json::Value =
        serde_json::from_str(scenario_json).map_err(|e| to_py(json_error(e)))?;
    if let Some(dir) = base_dir {
        inline_referenced_files_with(&mut value, std::path::Path::new(dir), allow_outside)
            .map_err(to_py)?;
    }
    Scenario::from_value(value)
        .map(|s| s.to_json())
        .map_err(to_py)
}

/// How often (wall time) a run re-acquires the GIL to look for Ctrl-C
/// (`Python::check_signals`) and to report progress.
const POLL_WALL: std::time::Duration = std::time::Duration::from_millis(50);

/// Run a scenario given as JSON and return the results (summary.json text).
/// Trace files the scenario's `[outputs]` asks for are written into `out_dir`.
///
/// Every ~50 ms of wall time the run briefly takes the GIL to run pending
/// signal handlers (Ctrl-C raises KeyboardInterrupt) and to call
/// `progress(sim_time_s, events)` if given. When either raises, the run stops
/// within a few milliseconds; the exception is re-raised, or, with
/// `keep_partial`, the results up to the stop time are returned, marked
/// `"partial": true` with `"stopped_at_s"`. A run that reached its end is
/// marked `"partial": false`.
///
/// Before the run, the core estimates its peak memory and raises ScenarioError
/// naming the key that drives it when that exceeds `max_memory_bytes`
/// (default: [`default_max_memory_bytes`], half of the machine's memory).
/// A panic in the core raises InternalError.
#[pyfunction]
#[pyo3(signature = (scenario_json, out_dir=None, progress=None, keep_partial=false, max_memory_bytes=None))]
fn run(
    py: Python<'_>,
    scenario_json: &str,
    out_dir: Option<&str>,
    progress: Option<PyObject>,
    keep_partial: bool,
    max_memory_bytes: Option<u64>,
) -> PyResult<String> {
    no_panic(|| {
        run_inner(
            py,
            scenario_json,
            out_dir,
            progress,
            keep_partial,
            max_memory_bytes,
        )
    })
}

fn run_inner(
    py: Python<'_>,
    scenario_json: &str,
    out_dir: Option<&str>,
    progress: Option<PyObject>,
    keep_partial: bool,
    max_memory_bytes: Option<u64>,
) -> PyResult<String> {
    let scenario = Scenario::from_json_str(scenario_json).map_err(to_py)?;
    let limit = match max_memory_bytes {
        Some(b) => b,
        None => default_memory_limit().map_err(to_py)?,
    };
    manetlab_core::world::memory::check(&scenario, limit).map_err(to_py)?;
    let dir = out_dir.map(std::path::PathBuf::from);
    let mut stop_error: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        let mut last = std::time::Instant::now();
        let mut check = |now: manetlab_core::sim::SimTime, events: u64| {
            if last.elapsed() < POLL_WALL {
                return true;
            }
            last = std::time::Instant::now();
            Python::with_gil(|py| {
                let r = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb.call1(py, (now.as_secs_f64(), events)).map(|_| ()),
                    None => Ok(()),
                });
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        stop_error = Some(e);
                        false
                    }
                }
            })
        };
        // A panic inside the run is caught here, on the thread that ran it,
        // and re-raised after the GIL is back (the guard around `run` turns it
        // into InternalError).
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            manetlab_core::run_with_control(&scenario, dir.as_deref(), &mut check)
        }))
    });
    let result = match result {
        Ok(r) => r,
        Err(payload) => std::panic::resume_unwind(payload),
    };
    match result {
        Ok((r, None)) => Ok(mark(&r.to_json(), "\"partial\": false")),
        Ok((r, Some(at))) => match stop_error {
            Some(e) if !keep_partial => Err(e),
            _ => Ok(mark(
                &r.to_json(),
                &format!(
                    "\"partial\": true,\n  \"stopped_at_s\": {}",
                    at.as_secs_f64()
                ),
            )),
        },
        Err(manetlab_core::RunError::Scenario(e)) => Err(to_py(e)),
        Err(e @ manetlab_core::RunError::Io { .. }) => Err(PyOSError::new_err(e.to_string())),
    }
}

/// The core's summary text with `fields` as its first members. Done on the
/// text (not by re-serialising) so the core's member order and number
/// formatting are kept byte for byte.
fn mark(summary_json: &str, fields: &str) -> String {
    let rest = summary_json
        .strip_prefix("{\n")
        .expect("the core writes pretty JSON objects");
    format!("{{\n  {fields},\n{rest}")
}

/// The git commit the extension was built from (`None` outside a checkout).
const BUILD_GIT_COMMIT: Option<&str> = option_env!("MANETLAB_BUILD_GIT_COMMIT");

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", manetlab_core::VERSION)?;
    m.add("__build_git_commit__", BUILD_GIT_COMMIT)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("InternalError", m.py().get_type_bound::<InternalError>())?;
    install_panic_hook();
    m.add_function(wrap_pyfunction!(default_max_memory_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(param_table, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(parquet_table::write_parquet, m)?)?;
    Ok(())
}
