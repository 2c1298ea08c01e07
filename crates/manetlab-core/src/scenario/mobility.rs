//! The `[mobility]` and `[faults]` sections: schema, validation with key paths,
//! and their conversion into per-node trajectories and a fault schedule
//! (docs/mobility.md lists every key with unit, default, range and source).
//!
//! Movement files: the core never reads a file named in a scenario while
//! parsing it. `model = "ns2_file"` takes the file's *contents* in `ns2_text`;
//! `path` is kept only as a record of where they came from. The loaders that do
//! read files — [`Scenario::from_file`](super::Scenario::from_file) in Rust, the
//! Python front's scenario loader — fill `ns2_text` from `path` (relative to the
//! scenario file) before validation. Nothing in a movement file is executed:
//! only `set X_/Y_/Z_`, `setdest` and `$god_` lines are understood.

use super::{excerpt, non_negative, num, positive, quote, Placement, Scenario, ScenarioError};
use crate::faults::{FaultSchedule, FaultSpec, InRange};
use crate::ids::NodeId;
use crate::mobility::{
    placement, read_ns2_movement, scripted_trajectory, Position, RandomWaypoint, RwpInit, SetDest,
    Trajectory,
};
use crate::sim::SimTime;

/// Most random-waypoint legs a run may draw (about 50 bytes each in memory).
pub const MAX_RWP_WAYPOINTS: f64 = 2e7;
use serde::{Deserialize, Serialize};

/// Which mobility model moves the nodes.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MobilityModel {
    /// Nodes stay where `nodes.placement` puts them (same as no `[mobility]`).
    Static,
    /// Random waypoint, ns-2 `setdest` v1 by default (`mobility::waypoint`).
    RandomWaypoint,
    /// Per-node `setdest` lists from `[[mobility.nodes]]`, starting at the placement.
    Scripted,
    /// An ns-2 movement file, given as text in `ns2_text`.
    Ns2File,
}

impl MobilityModel {
    fn name(self) -> &'static str {
        match self {
            MobilityModel::Static => "static",
            MobilityModel::RandomWaypoint => "random_waypoint",
            MobilityModel::Scripted => "scripted",
            MobilityModel::Ns2File => "ns2_file",
        }
    }
}

/// `[mobility]`. Keys other than `model` belong to one model each.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MobilitySpec {
    pub model: MobilityModel,
    /// Random waypoint: upper speed bound vmax (m/s), required; setdest `-M`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed_mps: Option<f64>,
    /// Random waypoint: lower speed bound (m/s), default 0 (speeds in (0, vmax] as setdest v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_speed_mps: Option<f64>,
    /// Random waypoint: pause at each waypoint (s), default 0; setdest `-p`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_s: Option<f64>,
    /// Random waypoint: `"ns2"` (default, setdest v1) or `"steady_state"` (Navidi & Camp 2004).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<RwpInit>,
    /// Scripted: the nodes that move and their commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<ScriptedNode>,
    /// ns2_file: where the movement file was read from (informative; relative to the scenario file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// ns2_file: the movement file's contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns2_text: Option<String>,
}

/// `[[mobility.nodes]]`: one scripted node.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedNode {
    pub node: u32,
    /// `{ time_s, dest_m = [x, y], speed_mps }` commands with ns-2 `setdest` semantics.
    pub moves: Vec<SetDest>,
}

impl MobilitySpec {
    /// Whether this model can move a node (everything but `static`).
    pub fn moves_nodes(&self) -> bool {
        self.model != MobilityModel::Static
    }

    /// Random waypoint parameters in `area`, with defaults.
    fn random_waypoint(&self, area: crate::mobility::Area) -> RandomWaypoint {
        RandomWaypoint {
            area,
            min_speed_mps: self.min_speed_mps.unwrap_or(0.0),
            max_speed_mps: self.max_speed_mps.unwrap_or(0.0),
            pause_s: self.pause_s.unwrap_or(0.0),
            init: self.init.unwrap_or_default(),
        }
    }

    /// Reject keys of another model.
    fn check_keys(&self) -> Result<(), ScenarioError> {
        let m = self.model;
        let used: [(&str, bool, MobilityModel); 7] = [
            (
                "max_speed_mps",
                self.max_speed_mps.is_some(),
                MobilityModel::RandomWaypoint,
            ),
            (
                "min_speed_mps",
                self.min_speed_mps.is_some(),
                MobilityModel::RandomWaypoint,
            ),
            (
                "pause_s",
                self.pause_s.is_some(),
                MobilityModel::RandomWaypoint,
            ),
            ("init", self.init.is_some(), MobilityModel::RandomWaypoint),
            ("nodes", !self.nodes.is_empty(), MobilityModel::Scripted),
            ("path", self.path.is_some(), MobilityModel::Ns2File),
            ("ns2_text", self.ns2_text.is_some(), MobilityModel::Ns2File),
        ];
        for (key, present, owner) in used {
            if present && m != owner {
                return Err(ScenarioError::new(
                    format!("mobility.{key}"),
                    format!(
                        "only applies with model = \"{}\" (model is \"{}\")",
                        owner.name(),
                        m.name()
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn in_run(path: &str, v: f64, duration_s: f64) -> Result<(), ScenarioError> {
    non_negative(path, v)?;
    if v >= duration_s {
        return Err(ScenarioError::new(
            path,
            format!(
                "{} is not before the end of the run (duration_s = {})",
                num(v),
                num(duration_s)
            ),
        ));
    }
    Ok(())
}

/// An end time (`on_s`, `up_s`): a time of the run (finite, >= 0), after `start`
/// (named `start_key`, already checked) and not after the run.
fn end_in_run(
    path: &str,
    v: f64,
    start: f64,
    start_key: &str,
    duration_s: f64,
) -> Result<(), ScenarioError> {
    non_negative(path, v)?;
    // Compare on the nanosecond grid the schedule uses.
    if SimTime::from_secs_f64(v) <= SimTime::from_secs_f64(start) {
        return Err(ScenarioError::new(
            path,
            format!("{} must be after {start_key} = {}", num(v), num(start)),
        ));
    }
    if v > duration_s {
        return Err(ScenarioError::new(
            path,
            format!(
                "{} is after the end of the run (duration_s = {}; leave it out to stay down)",
                num(v),
                num(duration_s)
            ),
        ));
    }
    Ok(())
}

/// Most pairs `random_link_failures` may cover when `links` is left out.
const MAX_RANDOM_FAILURE_PAIRS: u64 = 2_000_000;

impl Scenario {
    /// Whether nodes may move (a `[mobility]` section other than `static`).
    pub fn has_mobility(&self) -> bool {
        self.mobility
            .as_ref()
            .is_some_and(MobilitySpec::moves_nodes)
    }

    pub(super) fn validate_mobility(&self) -> Result<(), ScenarioError> {
        let Some(m) = &self.mobility else {
            return Ok(());
        };
        m.check_keys()?;
        let model = m.model.name();
        if m.moves_nodes() && self.radio.is_none() {
            return Err(ScenarioError::new(
                "mobility.model",
                format!("\"{model}\" moves nodes of the wireless channel; add a [radio] section"),
            ));
        }
        if matches!(
            m.model,
            MobilityModel::RandomWaypoint | MobilityModel::Ns2File
        ) && self.nodes.placement.is_some()
        {
            let from = if m.model == MobilityModel::Ns2File {
                "the movement file"
            } else {
                "the random waypoint model"
            };
            return Err(ScenarioError::new("nodes.placement", format!("not used with mobility.model = \"{model}\" (start positions come from {from}); remove it")));
        }
        let inside = |path: String, p: Position| -> Result<(), ScenarioError> {
            if !(p[0].is_finite() && p[1].is_finite()) {
                return Err(ScenarioError::new(
                    path,
                    format!("[{}, {}] is not a finite position", num(p[0]), num(p[1])),
                ));
            }
            if let Some(a) = &self.area {
                if !a.contains(p) {
                    return Err(ScenarioError::new(
                        path,
                        format!(
                            "[{}, {}] is outside the area (0..{} m × 0..{} m)",
                            num(p[0]),
                            num(p[1]),
                            num(a.width_m),
                            num(a.height_m)
                        ),
                    ));
                }
            }
            Ok(())
        };
        match m.model {
            MobilityModel::Static => {}
            MobilityModel::RandomWaypoint => {
                let Some(area) = self.area else {
                    return Err(ScenarioError::new("area", "required by mobility.model = \"random_waypoint\" (waypoints are drawn in it)"));
                };
                let Some(vmax) = m.max_speed_mps else {
                    return Err(ScenarioError::new(
                        "mobility.max_speed_mps",
                        "required key is missing (model \"random_waypoint\")",
                    ));
                };
                positive("mobility.max_speed_mps", vmax)?;
                let vmin = m.min_speed_mps.unwrap_or(0.0);
                if !(vmin.is_finite() && (0.0..=vmax).contains(&vmin)) {
                    return Err(ScenarioError::new("mobility.min_speed_mps", format!("{} is out of range (allowed: 0 <= min_speed_mps <= max_speed_mps = {})", num(vmin), num(vmax))));
                }
                non_negative("mobility.pause_s", m.pause_s.unwrap_or(0.0))?;
                if m.init == Some(RwpInit::SteadyState) && vmin <= 0.0 {
                    return Err(ScenarioError::new(
                        "mobility.min_speed_mps",
                        format!("{} is out of range with init = \"steady_state\" (allowed: > 0; no stationary regime exists with speeds near 0)", num(vmin)),
                    ));
                }
                m.random_waypoint(area).validate().map_err(|e| {
                    ScenarioError::new(
                        format!("mobility.{}", e.key),
                        format!("{} is out of range (allowed: {})", e.value, e.allowed),
                    )
                })?;
                // Waypoints are drawn up front: bound how many (memory) before drawing them.
                // A leg is on average ~0.52·√(W·H) long (Bettstetter et al. for a square) and
                // takes at least that over vmax, plus the pause.
                let leg_m = 0.52 * (area.width_m * area.height_m).sqrt();
                let waypoints = self.nodes.count as f64 * self.duration_s
                    / (leg_m / vmax + m.pause_s.unwrap_or(0.0));
                if waypoints.is_nan() || waypoints > MAX_RWP_WAYPOINTS {
                    return Err(ScenarioError::new(
                        "mobility.max_speed_mps",
                        format!(
                            "{} is out of range: about {:.1e} waypoints for {} nodes over {} s (allowed: at most {} in total; lower max_speed_mps or duration_s, or add pause_s)",
                            super::num(vmax),
                            waypoints,
                            self.nodes.count,
                            super::num(self.duration_s),
                            super::num(MAX_RWP_WAYPOINTS)
                        ),
                    ));
                }
            }
            MobilityModel::Scripted => {
                if m.nodes.is_empty() {
                    return Err(ScenarioError::new("mobility.nodes", "model \"scripted\" needs at least one [[mobility.nodes]] entry (or use model = \"static\")"));
                }
                let mut seen = std::collections::BTreeMap::new();
                for (i, sn) in m.nodes.iter().enumerate() {
                    let k = |x: &str| format!("mobility.nodes[{i}].{x}");
                    self.node_exists(k("node"), sn.node)?;
                    if let Some(j) = seen.insert(sn.node, i) {
                        return Err(ScenarioError::new(k("node"), format!("node {} is already scripted in mobility.nodes[{j}] (put all its moves in one list)", sn.node)));
                    }
                    for (j, mv) in sn.moves.iter().enumerate() {
                        let k = |x: &str| format!("mobility.nodes[{i}].moves[{j}].{x}");
                        in_run(&k("time_s"), mv.time_s, self.duration_s)?;
                        non_negative(&k("speed_mps"), mv.speed_mps)?;
                        inside(k("dest_m"), mv.dest_m)?;
                    }
                }
            }
            MobilityModel::Ns2File => {
                let Some(text) = &m.ns2_text else {
                    return Err(match &m.path {
                        Some(p) => ScenarioError::new(
                            "mobility.path",
                            format!("{} was not read: the core does not open files named in a scenario; load it with Scenario::from_file or the Python front, which put the contents in mobility.ns2_text", quote(p)),
                        ),
                        None => ScenarioError::new("mobility.ns2_text", "required key is missing (model \"ns2_file\": the movement file's text)"),
                    });
                };
                let mv = read_ns2_movement(text).map_err(|e| {
                    ScenarioError::new(
                        "mobility.ns2_text",
                        format!(
                            "line {}: {}: `{}`",
                            e.line,
                            super::traffic::bounded(&e.message),
                            excerpt(&e.text)
                        ),
                    )
                })?;
                if mv.node_count() > self.nodes.count {
                    return Err(ScenarioError::new(
                        "mobility.ns2_text",
                        format!(
                            "the movement file moves node {} but nodes.count = {}",
                            mv.node_count() - 1,
                            self.nodes.count
                        ),
                    ));
                }
                for (i, p) in mv.initial_m.iter().enumerate() {
                    inside(format!("mobility.ns2_text (node {i} start)"), *p)?;
                }
                for (i, moves) in mv.moves.iter().enumerate() {
                    for (j, c) in moves.iter().enumerate() {
                        inside(
                            format!(
                                "mobility.ns2_text (node {i} setdest #{j} at {} s)",
                                c.time_s
                            ),
                            c.dest_m,
                        )?;
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn validate_faults(&self) -> Result<(), ScenarioError> {
        let Some(f) = &self.faults else { return Ok(()) };
        let d = self.duration_s;
        for (i, sw) in f.node_switches.iter().enumerate() {
            let k = |x: &str| format!("faults.node_switches[{i}].{x}");
            self.node_exists(k("node"), sw.node)?;
            in_run(&k("off_s"), sw.off_s, d)?;
            if let Some(on) = sw.on_s {
                end_in_run(&k("on_s"), on, sw.off_s, "off_s", d)?;
            }
        }
        for (i, o) in f.link_outages.iter().enumerate() {
            let k = |x: &str| format!("faults.link_outages[{i}].{x}");
            self.node_exists(k("a"), o.a)?;
            self.node_exists(k("b"), o.b)?;
            if o.a == o.b {
                return Err(ScenarioError::new(
                    k("b"),
                    format!("a link joins two different nodes (a = b = {})", o.a),
                ));
            }
            in_run(&k("down_s"), o.down_s, d)?;
            if let Some(up) = o.up_s {
                end_in_run(&k("up_s"), up, o.down_s, "down_s", d)?;
            }
        }
        if let Some(r) = &f.random_link_failures {
            let k = |x: &str| format!("faults.random_link_failures.{x}");
            non_negative(&k("rate_per_s"), r.rate_per_s)?;
            positive(&k("mean_duration_s"), r.mean_duration_s)?;
            in_run(&k("start_s"), r.start_s, d)?;
            if let (Some(_), Some(scope)) = (&r.links, r.scope) {
                return Err(ScenarioError::new(
                    k("scope"),
                    format!(
                        "{} cannot be set with a `links` list: the listed pairs fail whatever their distance (leave scope out)",
                        quote(&format!("{scope:?}").to_lowercase())
                    ),
                ));
            }
            match &r.links {
                Some(links) => {
                    for (i, [a, b]) in links.iter().enumerate() {
                        self.node_exists(k(&format!("links[{i}][0]")), *a)?;
                        self.node_exists(k(&format!("links[{i}][1]")), *b)?;
                        if a == b {
                            return Err(ScenarioError::new(
                                k(&format!("links[{i}]")),
                                format!("[{a}, {b}] is not a link (two different nodes needed)"),
                            ));
                        }
                    }
                }
                None => {
                    let n = self.nodes.count as u64;
                    if n * n.saturating_sub(1) / 2 > MAX_RANDOM_FAILURE_PAIRS {
                        return Err(ScenarioError::new(
                            k("links"),
                            format!("required with {n} nodes: every pair would be {} links (allowed: at most {MAX_RANDOM_FAILURE_PAIRS}); list the links that fail", n * (n - 1) / 2),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Static start positions from `nodes.placement` (all at the origin without one).
    pub fn placement_positions(&self) -> Vec<Position> {
        let n = self.nodes.count;
        let ok = "validated placement";
        match &self.nodes.placement {
            None => vec![[0.0, 0.0]; n as usize],
            Some(Placement::Explicit { positions_m }) => {
                placement::explicit(positions_m).expect(ok)
            }
            Some(Placement::Chain { spacing_m }) => placement::chain(n, *spacing_m).expect(ok),
            Some(Placement::Grid { columns, spacing_m }) => {
                let mut p = placement::grid(n.div_ceil(*columns), *columns, *spacing_m).expect(ok);
                p.truncate(n as usize);
                p
            }
            Some(Placement::Uniform {}) => placement::uniform(
                n,
                self.area.expect("validated: uniform placement has an area"),
                self.seed,
            )
            .expect(ok),
        }
    }

    /// One trajectory per node when nodes may move (`None`: static placement).
    /// A node's trajectory depends only on (seed, node id, mobility parameters):
    /// flows and other sections never change it.
    pub fn trajectories(&self) -> Option<Vec<Trajectory>> {
        let m = self.mobility.as_ref().filter(|m| m.moves_nodes())?;
        let n = self.nodes.count;
        let until = SimTime::from_secs_f64(self.duration_s);
        let ok = "validated mobility";
        Some(match m.model {
            MobilityModel::Static => unreachable!(),
            MobilityModel::RandomWaypoint => m
                .random_waypoint(self.area.expect(ok))
                .trajectories(self.seed, n, until)
                .expect(ok),
            MobilityModel::Scripted => {
                let start = self.placement_positions();
                let mut moves: Vec<&[SetDest]> = vec![&[]; n as usize];
                for sn in &m.nodes {
                    moves[sn.node as usize] = &sn.moves;
                }
                start
                    .iter()
                    .zip(moves)
                    .enumerate()
                    .map(|(i, (&p, mv))| {
                        scripted_trajectory(p, mv, &format!("mobility.nodes[{i}].moves")).expect(ok)
                    })
                    .collect()
            }
            MobilityModel::Ns2File => read_ns2_movement(m.ns2_text.as_deref().expect(ok))
                .expect(ok)
                .trajectories(n)
                .expect(ok),
        })
    }

    /// Every fault of the run, sorted (`None` without `[faults]`).
    pub fn fault_schedule(&self) -> Option<FaultSchedule> {
        let spec: &FaultSpec = self.faults.as_ref()?;
        Some(
            FaultSchedule::with_range(
                spec,
                self.seed,
                self.nodes.count,
                SimTime::from_secs_f64(self.duration_s),
                Some(self.in_range()),
            )
            .expect("validated faults"),
        )
    }

    /// Which pairs are links at an instant, for random link failures' scope
    /// `"links"`: with a radio, nodes within its decoding range
    /// (`RadioParams::rx_range_m`, as the connectivity report's
    /// `connectivity::in_range`) at their positions then; without one, nodes
    /// joined by a point-to-point link.
    pub fn in_range(&self) -> InRange {
        let Some(radio) = &self.radio else {
            let mut joined: Vec<(u32, u32)> = self
                .links
                .iter()
                .map(|l| (l.a.min(l.b), l.a.max(l.b)))
                .collect();
            joined.sort_unstable();
            return std::sync::Arc::new(move |_, a: NodeId, b: NodeId| {
                joined.binary_search(&(a.0.min(b.0), a.0.max(b.0))).is_ok()
            });
        };
        let range_m = radio.params().rx_range_m();
        let linked = crate::mobility::connectivity::in_range;
        match self.trajectories() {
            Some(t) => std::sync::Arc::new(move |at, a: NodeId, b: NodeId| {
                linked(
                    t[a.index()].position_at(at),
                    t[b.index()].position_at(at),
                    range_m,
                )
            }),
            None => {
                let pos = self.placement_positions();
                std::sync::Arc::new(move |_, a: NodeId, b: NodeId| {
                    linked(pos[a.index()], pos[b.index()], range_m)
                })
            }
        }
    }
}
