//! `[outputs]`: trace files a run writes next to its results (docs/metrics.md).
//! Without this section nothing is traced and the simulator pays nothing for it.

use super::ScenarioError;
use crate::ids::NodeId;
use crate::trace::pcap::CaptureLayer;
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
    /// A pcap file per node (`node<N>.pcap`): `true` (IP datagrams, every node),
    /// `"ip"` or `"mac"` (802.11 frames with radiotap headers) for every node or
    /// for `pcap_nodes`.
    #[serde(default)]
    pub pcap: PcapSetting,
    /// A pcap file for these nodes only (IP datagrams unless `pcap` says `"mac"`).
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
    pcap: PcapSetting,
    pcap_nodes: Option<Vec<u32>>,
    #[serde(default)]
    movement: bool,
    #[serde(default)]
    series: bool,
    series_interval_s: Option<f64>,
    connectivity: Option<bool>,
}

/// `outputs.pcap` as written: `false` (none), `true` (the IP capture of every
/// node, as before MAC captures existed), or the layer by name, `"ip"` or `"mac"`,
/// which `pcap_nodes` may narrow. Written back as given (normalized scenarios).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PcapSetting {
    #[default]
    Off,
    /// `true`.
    EveryNode,
    Ip,
    Mac,
}

impl PcapSetting {
    /// The capture layer asked for, if any.
    pub fn layer(self) -> Option<CaptureLayer> {
        match self {
            PcapSetting::Off => None,
            PcapSetting::EveryNode | PcapSetting::Ip => Some(CaptureLayer::Ip),
            PcapSetting::Mac => Some(CaptureLayer::Mac),
        }
    }
}

impl Serialize for PcapSetting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PcapSetting::Off => s.serialize_bool(false),
            PcapSetting::EveryNode => s.serialize_bool(true),
            PcapSetting::Ip => s.serialize_str("ip"),
            PcapSetting::Mac => s.serialize_str("mac"),
        }
    }
}

impl<'de> Deserialize<'de> for PcapSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(false) => Ok(PcapSetting::Off),
            serde_json::Value::Bool(true) => Ok(PcapSetting::EveryNode),
            serde_json::Value::String(s) if s == "ip" => Ok(PcapSetting::Ip),
            serde_json::Value::String(s) if s == "mac" => Ok(PcapSetting::Mac),
            v => Err(D::Error::custom(format!(
                "{} is not allowed (allowed: true or \"ip\" for IP datagrams, \"mac\" for 802.11 frames, false for none)",
                super::value_excerpt(&v)
            ))),
        }
    }
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
        if self.pcap == PcapSetting::EveryNode && self.pcap_nodes.is_some() {
            return Err(ScenarioError::new(
                "outputs.pcap_nodes",
                "give either pcap = true (every node) or pcap_nodes, not both (pcap = \"ip\" or \"mac\" with pcap_nodes captures those nodes)",
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
            || self.pcap != PcapSetting::Off
            || self.pcap_nodes.as_ref().is_some_and(|v| !v.is_empty())
            || self.movement
    }

    pub fn trace_config(&self, nodes: u32) -> TraceConfig {
        let levels = self
            .trace_levels
            .clone()
            .unwrap_or_else(|| vec![TraceLevelKind::Agt, TraceLevelKind::Rtr]);
        let mut pcap_nodes: Vec<NodeId> =
            if self.pcap != PcapSetting::Off && self.pcap_nodes.is_none() {
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
            pcap_layer: self.pcap.layer().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Scenario;
    use super::*;

    const BASE: &str = "duration_s = 1\n[nodes]\ncount = 3\n[radio]\n[outputs]\n";

    fn outputs(keys: &str) -> Result<OutputsSpec, String> {
        Scenario::from_toml_str(&format!("{BASE}{keys}\n"))
            .map(|s| s.outputs.expect("[outputs] given"))
            .map_err(|e| e.to_string())
    }

    fn capture(keys: &str) -> (Vec<u32>, CaptureLayer) {
        let c = outputs(keys).unwrap().trace_config(3);
        (c.pcap_nodes.iter().map(|n| n.0).collect(), c.pcap_layer)
    }

    #[test]
    fn pcap_names_the_layer_and_pcap_nodes_the_nodes() {
        use CaptureLayer::{Ip, Mac};
        assert_eq!(capture("pcap = true"), (vec![0, 1, 2], Ip));
        assert_eq!(capture("pcap = \"ip\""), (vec![0, 1, 2], Ip));
        assert_eq!(capture("pcap = \"mac\""), (vec![0, 1, 2], Mac));
        assert_eq!(capture("pcap_nodes = [2, 0]"), (vec![0, 2], Ip));
        assert_eq!(capture("pcap = \"mac\"\npcap_nodes = [1]"), (vec![1], Mac));
        assert_eq!(capture("pcap = \"ip\"\npcap_nodes = [1]"), (vec![1], Ip));
        assert_eq!(capture("pcap = false"), (vec![], Ip));
        assert!(!outputs("pcap = false").unwrap().any());
        assert!(outputs("pcap = \"mac\"").unwrap().any());
    }

    #[test]
    fn pcap_values_are_checked_and_written_back_as_given() {
        let e = outputs("pcap = \"radiotap\"").unwrap_err();
        assert!(e.contains("outputs.pcap") && e.contains("\"mac\""), "{e}");
        let e = outputs("pcap = true\npcap_nodes = [1]").unwrap_err();
        assert!(e.contains("not both"), "{e}");
        for (v, json) in [
            (PcapSetting::Off, "false"),
            (PcapSetting::EveryNode, "true"),
            (PcapSetting::Ip, "\"ip\""),
            (PcapSetting::Mac, "\"mac\""),
        ] {
            assert_eq!(serde_json::to_string(&v).unwrap(), json);
            assert_eq!(serde_json::from_str::<PcapSetting>(json).unwrap(), v);
        }
    }
}
