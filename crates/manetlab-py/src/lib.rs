#![allow(unexpected_cfgs)] // pyo3 0.22's create_exception! checks a `gil-refs` cfg that rustc >= 1.80 reports.
//! Thin PyO3 bindings: parse + validate, and run, a scenario given as JSON.
//! The GIL is released while a run executes, so Python threads (and a Dask
//! worker's other tasks) keep running.

use manetlab_core::scenario::load::inline_movement_file;
use manetlab_core::{Scenario, ScenarioError as CoreScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

create_exception!(_core, ScenarioError, PyValueError, "A scenario that cannot be run: the message names the key path, the value and what is allowed.");

fn to_py(e: CoreScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Validate a scenario given as JSON; returns the normalised scenario JSON.
/// With `base_dir` (the scenario file's folder), files the scenario names
/// relative to it (an ns-2 movement file) are read in first.
#[pyfunction]
#[pyo3(signature = (scenario_json, base_dir=None))]
fn validate(scenario_json: &str, base_dir: Option<&str>) -> PyResult<String> {
    let mut value: serde_json::Value =
        serde_json::from_str(scenario_json).map_err(|e| ScenarioError::new_err(format!("(file): not valid JSON: {e}")))?;
    if let Some(dir) = base_dir {
        inline_movement_file(&mut value, std::path::Path::new(dir)).map_err(to_py)?;
    }
    Scenario::from_value(value).map(|s| s.to_json()).map_err(to_py)
}

/// Run a scenario given as JSON and return the results (summary.json text).
/// Trace files the scenario's `[outputs]` asks for are written into `out_dir`.
#[pyfunction]
#[pyo3(signature = (scenario_json, out_dir=None))]
fn run(py: Python<'_>, scenario_json: &str, out_dir: Option<&str>) -> PyResult<String> {
    let scenario = Scenario::from_json_str(scenario_json).map_err(to_py)?;
    let dir = out_dir.map(std::path::PathBuf::from);
    let result = py.allow_threads(move || manetlab_core::run_with_outputs(&scenario, dir.as_deref()));
    match result {
        Ok(r) => Ok(r.to_json()),
        Err(manetlab_core::RunError::Scenario(e)) => Err(to_py(e)),
        Err(e @ manetlab_core::RunError::Io { .. }) => Err(PyOSError::new_err(e.to_string())),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", manetlab_core::VERSION)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
