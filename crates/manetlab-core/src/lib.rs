//! # manetlab-core
//!
//! The simulator behind manetlab: a deterministic discrete-event kernel and the
//! protocol models of a MANET node stack. It knows nothing of Python; the
//! `manetlab-py` crate wraps [`run_json`] for the Python front.
//!
//! A tour of the layers (see ARCHITECTURE.md):
//! - [`sim`]: integer-nanosecond time, the (time, sequence) event queue,
//!   cancellable timers, per-(seed, entity, component) random streams.
//! - [`scenario`]: the scenario schema, strict parsing and validation.
//! - [`wire`]: typed packets with on-the-wire header sizes, every protocol's
//!   messages and per-packet extensions, drop reasons and transport notices.
//! - [`app`] → [`transport`] → [`routing`] → [`queue`] → [`link`] / [`mac`] →
//!   [`phy`]: the stack.
//! - [`mobility`]: trajectories (placements, random waypoint, scripted, ns-2
//!   movement files) and connectivity reports; [`faults`]: node switches and
//!   link failures. Both are wired into runs by [`world`] (docs/mobility.md).
//! - [`metrics`]: per-flow/node/link counters, the run's results.
//! - [`world`]: the arenas and the event loop that joins the layers.
//!
//! The modules form a strict stack; a module uses only those below it, and
//! `tests/layers.rs` fails on an upward reference or a cycle:
//! `sim` ← `wire` (+ `ids`) ← the models (`phy`, `mac`, `queue`, `link`,
//! `routing`, `transport`, `app`, `mobility`, `faults`) ← output (`metrics`,
//! `trace`) ← `scenario` ← `world`.

pub mod app;
pub mod faults;
pub mod ids;
pub mod link;
pub mod mac;
pub mod metrics;
pub mod mobility;
pub mod param;
pub mod phy;
pub mod queue;
pub mod routing;
pub mod scenario;
pub mod sim;
pub mod trace;
pub mod transport;
pub mod wire;
pub mod world;

pub use metrics::RunResult;
pub use scenario::{Scenario, ScenarioError};
pub use world::Simulator;

/// The crate version, recorded in every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Run a validated scenario.
pub fn run(scenario: &Scenario) -> RunResult {
    Simulator::new(scenario).run()
}

/// Parse, validate and run a scenario given as JSON; returns `summary.json` text.
pub fn run_json(scenario_json: &str) -> Result<String, ScenarioError> {
    let s = Scenario::from_json_str(scenario_json)?;
    Ok(run(&s).to_json())
}

/// Why a run with outputs could not complete.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    #[error("cannot write outputs to {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
}

/// Run a scenario, writing the trace files its `[outputs]` asks for into
/// `out_dir` (which must be given when it asks for any); the files and their
/// sizes are listed in the result's `outputs`.
pub fn run_with_outputs(
    scenario: &Scenario,
    out_dir: Option<&std::path::Path>,
) -> Result<RunResult, RunError> {
    run_with_control(scenario, out_dir, &mut |_, _| true).map(|(r, _)| r)
}

/// [`run_with_outputs`] with a stop hook: `check(now, events)` is called every
/// few thousand events ([`world::CHECK_EVERY_EVENTS`]) and stops the run when
/// it returns `false`. Returns the results and `None`, or, for a stopped run,
/// the results up to the stop time and that time (trace files are closed
/// cleanly up to it).
pub fn run_with_control(
    scenario: &Scenario,
    out_dir: Option<&std::path::Path>,
    check: &mut dyn FnMut(sim::SimTime, u64) -> bool,
) -> Result<(RunResult, Option<sim::SimTime>), RunError> {
    let wants = scenario.outputs.as_ref().is_some_and(|o| o.any());
    let mut sim = Simulator::new(scenario);
    fn io_err(dir: &std::path::Path) -> impl FnOnce(std::io::Error) -> RunError {
        let dir = dir.display().to_string();
        move |source| RunError::Io { dir, source }
    }
    match (wants, out_dir) {
        (true, None) => {
            return Err(ScenarioError::new(
                "outputs",
                "trace files need an output directory (manetlab run --out DIR)",
            )
            .into())
        }
        (true, Some(dir)) => sim.open_outputs(dir).map_err(io_err(dir))?,
        (false, _) => {}
    }
    let stopped = (!sim.run_to_end_checked(check)).then(|| sim.now());
    let files = match out_dir {
        Some(dir) if wants => sim.finish_outputs().map_err(io_err(dir))?,
        _ => Vec::new(),
    };
    let mut r = sim.results();
    r.outputs = files;
    Ok((r, stopped))
}
