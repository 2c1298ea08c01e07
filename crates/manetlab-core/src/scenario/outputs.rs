//! `[outputs]`: trace files a run writes next to its results (docs/metrics.md).
//! Without this section nothing is traced and the simulator pays nothing for it.

use super::ScenarioError;
use crate::ids::NodeId;
use crate::trace::{Ns2Format, TraceConfig};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormatKind {
    /// ns-2's CMU wireless format (`s 1.000000000 _0_ AGT --- ...`).
    Old,
    /// ns-2's tagged format (`s -t 1.000000000 -Hs 0 ...`).
    New,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum TraceLevelKind {
    Agt,
    Rtr,
    Ifq,
    Mac,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(from = "RawOutputsSpec")]
pub struct OutputsSpec {
    /// ns-2 wireless trace `trace.tr` in this format; none if left out or `false`
    /// (so `--set outputs.trace=false` turns a scenario's trace off, its
    /// `trace_levels` with it).
    pub trace: Option<TraceFormatKind>,
    /// Levels traced (default: agt and rtr, ns-2's agentTrace/routerTrace ON, macTrace OFF).
    pub trace_levels: Option<Vec<TraceLevelKind>>,
    /// A pcap file per node (`node<N>.pcap`) for every node.
    #[serde(default)]
    pub pcap: bool,
    /// A pcap file for these nodes only.
    pub pcap_nodes: Option<Vec<u32>>,
    /// Every node's trajectory as an ns-2 movement file (`movement.tcl`).
    #[serde(default)]
    pub movement: bool,
    /// Time series in the results: per flow, each received packet's arrival time
    /// and delay (jitter is their difference); per node, the interface-queue length.
    #[serde(default)]
    pub series: bool,
    /// Sample queue lengths every this many seconds instead of on every change.
    pub series_interval_s: Option<f64>,
    /// The connectivity report (with mobility or faults); `false` skips it.
    /// Default on: it costs ~3 % of a 1000-node run (benchmarks/RESULTS.md).
    pub connectivity: Option<bool>,
}

/// `[outputs]` as written. `trace = false` differs from no `trace` in one way:
/// it also drops `trace_levels`, so an override can turn a traced scenario's
/// trace off; levels without any `trace` key stay an error (a likely slip).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutputsSpec {
    #[serde(default, deserialize_with = "trace_format")]
    trace: TraceSetting,
    trace_levels: Option<Vec<TraceLevelKind>>,
    #[serde(default)]
    pcap: bool,
    pcap_nodes: Option<Vec<u32>>,
    #[serde(default)]
    movement: bool,
    #[serde(default)]
    series: bool,
    series_interval_s: Option<f64>,
    connectivity: Option<bool>,
}

#[derive(Default)]
enum TraceSetting {
    #[default]
    Absent,
    Off,
    On(TraceFormatKind),
}

impl From<RawOutputsSpec> for OutputsSpec {
    fn from(r: RawOutputsSpec) -> Self {
        let (trace, trace_levels) = match r.trace {
            TraceSetting::Absent => (None, r.trace_levels),
            TraceSetting::Off => (None, None),
            TraceSetting::On(kind) => (Some(kind), r.trace_levels),
        };
        OutputsSpec {
            trace,
            trace_levels,
            pcap: r.pcap,
            pcap_nodes: r.pcap_nodes,
            movement: r.movement,
            series: r.series,
            series_interval_s: r.series_interval_s,
            connectivity: r.connectivity,
        }
    }
}

/// `trace`: `"old"`, `"new"`, or `false` for none.
fn trace_format<'de, D: serde::Deserializer<'de>>(d: D) -> Result<TraceSetting, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None => Ok(TraceSetting::Absent),
        Some(serde_json::Value::Bool(false)) => Ok(TraceSetting::Off),
        Some(serde_json::Value::String(s)) if s == "old" => {
            Ok(TraceSetting::On(TraceFormatKind::Old))
        }
        Some(serde_json::Value::String(s)) if s == "new" => {
            Ok(TraceSetting::On(TraceFormatKind::New))
        }
        Some(v) => Err(D::Error::custom(format!(
            "{} is not allowed (allowed: \"old\", \"new\", or false for no trace)",
            super::value_excerpt(&v)
        ))),
    }
}

impl OutputsSpec {
    pub fn validate(&self, nodes: u32) -> Result<(), ScenarioError> {
        if self.trace_levels.is_some() && self.trace.is_none() {
            return Err(ScenarioError::new("outputs.trace_levels", "only applies with a trace format (outputs.trace = \"old\" or \"new\"; outputs.trace = false turns the trace off with its levels)"));
        }
        if let Some(l) = &self.trace_levels {
            if l.is_empty() {
                return Err(ScenarioError::new(
                    "outputs.trace_levels",
                    "empty (allowed: any of \"agt\", \"rtr\", \"ifq\", \"mac\"; or leave it out)",
                ));
            }
        }
        if self.series_interval_s.is_some() && !self.series {
            return Err(ScenarioError::new(
                "outputs.series_interval_s",
                "only applies with series = true",
            ));
        }
        if let Some(iv) = self.series_interval_s {
            super::within("outputs.series_interval_s", iv, 1e-6, 1e7)?;
        }
        if self.pcap && self.pcap_nodes.is_some() {
            return Err(ScenarioError::new(
                "outputs.pcap_nodes",
                "give either pcap = true (every node) or pcap_nodes, not both",
            ));
        }
        for (i, &n) in self.pcap_nodes.iter().flatten().enumerate() {
            if n >= nodes {
                return Err(ScenarioError::new(
                    format!("outputs.pcap_nodes[{i}]"),
                    format!(
                        "node {n} does not exist (nodes 0..{})",
                        nodes.saturating_sub(1)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Whether any file is asked for.
    pub fn any(&self) -> bool {
        self.trace.is_some()
            || self.pcap
            || self.pcap_nodes.as_ref().is_some_and(|v| !v.is_empty())
            || self.movement
    }

    pub fn trace_config(&self, nodes: u32) -> TraceConfig {
        let levels = self
            .trace_levels
            .clone()
            .unwrap_or_else(|| vec![TraceLevelKind::Agt, TraceLevelKind::Rtr]);
        let mut pcap_nodes: Vec<NodeId> = if self.pcap {
            (0..nodes).map(NodeId).collect()
        } else {
            self.pcap_nodes
                .iter()
                .flatten()
                .map(|&n| NodeId(n))
                .collect()
        };
        pcap_nodes.sort();
        pcap_nodes.dedup();
        TraceConfig {
            ns2: self.trace.map(|f| match f {
                TraceFormatKind::Old => Ns2Format::Old,
                TraceFormatKind::New => Ns2Format::New,
            }),
            agt: levels.contains(&TraceLevelKind::Agt),
            rtr: levels.contains(&TraceLevelKind::Rtr),
            ifq: levels.contains(&TraceLevelKind::Ifq),
            mac: levels.contains(&TraceLevelKind::Mac),
            pcap_nodes,
        }
    }
}
