#![allow(unexpected_cfgs)] // pyo3 0.22's create_exception! checks a `gil-refs` cfg that rustc >= 1.80 reports.
//! Thin PyO3 bindings: parse + validate, and run, a scenario given as JSON.
//! The GIL is released while a run executes, so Python threads (and a Dask
//! worker's other tasks) keep running.

use manetlab_core::scenario::load::{inline_referenced_files_with, json_error};
use manetlab_core::{Scenario, ScenarioError as CoreScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

mod parquet_table;

create_exception!(_core, ScenarioError, PyValueError, "A scenario that cannot be run: the message names the key path, the value and what is allowed.");

fn to_py(e: CoreScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Validate a scenario given as JSON; returns the normalised scenario JSON.
/// With `base_dir` (the scenario file's folder), files the scenario names
/// relative to it (an ns-2 movement or traffic file) are read in first; they
/// must lie inside `base_dir`'s tree unless `allow_outside`.
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=None, allow_outside=false))]
fn validate(scenario_json: &str, base_dir: Option<&str>, allow_outside: bool) -> PyResult<String> {
    let mut value: serde_json::Value =
        serde_json::from_str(scenario_json).map_err(|e| to_py(json_error(e)))?;
    if let Some(dir) = base_dir {
        inline_referenced_files_with(&mut value, std::path::Path::new(dir), allow_outside).map_err(to_py)?;
    }
    Scenario::from_value(value).map(|s| s.to_json()).map_err(to_py)
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
#[pyfunction]
#[pyo3(signature = (scenario_json, out_dir=None, progress=None, keep_partial=false))]
fn run(py: Python<'_>, scenario_json: &str, out_dir: Option<&str>, progress: Option<PyObject>, keep_partial: bool) -> PyResult<String> {
    let scenario = Scenario::from_json_str(scenario_json).map_err(to_py)?;
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
        manetlab_core::run_with_control(&scenario, dir.as_deref(), &mut check)
    });
    match result {
        Ok((r, None)) => Ok(mark(&r.to_json(), "\"partial\": false")),
        Ok((r, Some(at))) => match stop_error {
            Some(e) if !keep_partial => Err(e),
            _ => Ok(mark(&r.to_json(), &format!("\"partial\": true,\n  \"stopped_at_s\": {}", at.as_secs_f64()))),
        },
        Err(manetlab_core::RunError::Scenario(e)) => Err(to_py(e)),
        Err(e @ manetlab_core::RunError::Io { .. }) => Err(PyOSError::new_err(e.to_string())),
    }
}

/// The core's summary text with `fields` as its first members. Done on the
/// text (not by re-serialising) so the core's member order and number
/// formatting are kept byte for byte.
fn mark(summary_json: &str, fields: &str) -> String {
    let rest = summary_json.strip_prefix("{\n").expect("the core writes pretty JSON objects");
    format!("{{\n  {fields},\n{rest}")
}

/// The git commit the extension was built from (`None` outside a checkout).
const BUILD_GIT_COMMIT: Option<&str> = option_env!("MANETLAB_BUILD_GIT_COMMIT");

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", manetlab_core::VERSION)?;
    m.add("__build_git_commit__", BUILD_GIT_COMMIT)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(parquet_table::write_parquet, m)?)?;
    Ok(())
}
