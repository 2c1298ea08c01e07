//! `[traffic]`: flows from an ns-2 traffic file (cbrgen's CBR/UDP and TCP/FTP
//! files, read by [`crate::app::ns2_traffic`]), added after the scenario's own
//! `[[flows]]`.
//!
//! As with movement files, the core never opens a file named in a scenario:
//! the loaders ([`Scenario::from_file`](super::Scenario::from_file), the Python
//! front) read `ns2_file` (relative to the scenario file) into `ns2_text`.
//! Validation turns `ns2_text` into flows; the normalised scenario then lists
//! them in `flows` and records `flows_from_file` (how many of the last flows
//! came from the file) instead of the text, so normalising twice adds nothing twice.
//! A file's `$node_(i) shutdown|startup` lines become `faults.node_switches`
//! (appended, recorded in `node_switches_from_file`).
//!
//! `[[traffic.cbrgen]]` generators ([`cbrgen`]) draw flows from the seed; they
//! are appended after the file's, and the normalised scenario lists them too and
//! records `flows_generated`. Validating a normalised scenario again draws them
//! again (from its seed, which an override may have changed) in place of the
//! listed ones.

pub mod cbrgen;

use super::{excerpt, quote, FlowKind, FlowSpec, Scenario, ScenarioError};
use crate::app::ns2_traffic::{read_ns2_traffic_file, Ns2Source};
use crate::faults::{FaultSpec, NodeSwitch};
pub use cbrgen::{CbrgenSpec, GenTransport, PairRule};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// Path of the ns-2 traffic file, relative to the scenario file (a record once read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns2_file: Option<String>,
    /// The traffic file's contents (filled in by the loaders from `ns2_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns2_text: Option<String>,
    /// Normalised form only: how many of the `flows` (before the generated ones) came from the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows_from_file: Option<usize>,
    /// Normalised form only: how many of the last `faults.node_switches` came
    /// from the file's `shutdown`/`startup` lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_switches_from_file: Option<usize>,
    /// Random traffic generators (cbrgen's rules), drawn per seed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cbrgen: Vec<CbrgenSpec>,
    /// Normalised form only: how many of the last `flows` the generators drew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows_generated: Option<usize>,
    /// The file line of each flow just read (for error messages; not serialised).
    #[serde(skip)]
    lines: Vec<usize>,
}

impl Scenario {
    /// Turn `traffic.ns2_text` into flows appended to `flows` (done once, before
    /// validation), then draw the generators' flows after them.
    pub(super) fn expand_traffic(&mut self) -> Result<(), ScenarioError> {
        let Some(t) = &mut self.traffic else {
            return Ok(());
        };
        // A normalised scenario lists the flows drawn for its seed: draw them again.
        if let Some(n) = t.flows_generated.take() {
            if t.cbrgen.is_empty() || n > self.flows.len() {
                return Err(ScenarioError::new(
                    "traffic.flows_generated",
                    format!("{n} is out of range (allowed: only in a normalised scenario with [[traffic.cbrgen]], at most the number of flows, {})", self.flows.len()),
                ));
            }
            self.flows.truncate(self.flows.len() - n);
        }
        let file = t.ns2_file.is_some() || t.ns2_text.is_some() || t.flows_from_file.is_some();
        if file || t.cbrgen.is_empty() {
            self.expand_traffic_file()?;
        }
        self.expand_generators()
    }

    /// `[[traffic.cbrgen]]`: validate each generator and append its flows.
    fn expand_generators(&mut self) -> Result<(), ScenarioError> {
        let Some(t) = &mut self.traffic else {
            return Ok(());
        };
        if t.cbrgen.is_empty() {
            return Ok(());
        }
        let mut added = 0;
        for (g, spec) in t.cbrgen.iter().enumerate() {
            spec.validate(
                &format!("traffic.cbrgen[{g}]"),
                self.nodes.count,
                self.duration_s,
            )?;
            let flows = spec.flows(g, self.seed, self.nodes.count);
            added += flows.len();
            self.flows.extend(flows);
        }
        t.flows_generated = Some(added);
        Ok(())
    }

    /// The `ns2_file` part of [`Self::expand_traffic`].
    fn expand_traffic_file(&mut self) -> Result<(), ScenarioError> {
        let Some(t) = &mut self.traffic else {
            return Ok(());
        };
        match (&t.ns2_text, t.flows_from_file) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError::new(
                    "traffic.flows_from_file",
                    "only appears in a normalised scenario, whose flows already include the file's (remove it, or remove ns2_text)",
                ))
            }
            (None, Some(n)) => {
                if n > self.flows.len() {
                    return Err(ScenarioError::new(
                        "traffic.flows_from_file",
                        format!("{n} is out of range (allowed: at most the number of flows, {})", self.flows.len()),
                    ));
                }
                return Ok(());
            }
            (None, None) => {
                return Err(match &t.ns2_file {
                    Some(p) => ScenarioError::new(
                        "traffic.ns2_file",
                        format!("{} was not read: the core does not open files named in a scenario; load it with Scenario::from_file or the Python front, which put the contents in traffic.ns2_text", quote(p)),
                    ),
                    None => ScenarioError::new("traffic.ns2_file", "required key is missing (the path of an ns-2 traffic file, e.g. cbrgen output; or give [[traffic.cbrgen]] generators)"),
                })
            }
            (Some(text), None) => {
                let file = read_ns2_traffic_file(text).map_err(|e| ScenarioError::new(where_(t), format!("line {}: {}: `{}`", e.line, bounded(&e.message), excerpt(&e.text))))?;
                let flows = file.flows;
                if flows.is_empty() {
                    return Err(ScenarioError::new(where_(t), "the traffic file defines no flows"));
                }
                // shutdown/startup: the scenario's node switches. An interval that
                // begins at or after the end of the run changes nothing in it.
                let end = self.duration_s;
                let mut switches = Vec::new();
                for sw in file.node_switches.iter().filter(|sw| sw.off_s < end) {
                    if sw.node >= self.nodes.count {
                        return Err(ScenarioError::new(
                            where_(t),
                            format!("line {}: $node_({}) shutdown: node {} is out of range (allowed: 0..{}, nodes.count = {})", sw.line, sw.node, sw.node, self.nodes.count, self.nodes.count),
                        ));
                    }
                    switches.push(NodeSwitch { node: sw.node, off_s: sw.off_s, on_s: sw.on_s.filter(|&on| on < end) });
                }
                if !switches.is_empty() {
                    t.node_switches_from_file = Some(switches.len());
                    self.faults.get_or_insert_with(FaultSpec::default).node_switches.extend(switches);
                }
                t.lines = flows.iter().map(|f| f.line).collect();
                t.flows_from_file = Some(flows.len());
                t.ns2_text = None;
                self.flows.extend(flows.into_iter().map(|f| {
                    let mut spec = FlowSpec {
                        name: Some(f.name),
                        kind: FlowKind::Cbr,
                        src: f.src,
                        dst: f.dst,
                        start_s: f.start_s,
                        stop_s: f.stop_s,
                        transport: None,
                        tcp: None,
                        packet_size_bytes: None,
                        udp_header: None,
                        interval_s: None,
                        rate_kbps: None,
                        jitter_s: 0.0,
                        max_packets: None,
                        file_bytes: None,
                        port: None,
                    };
                    match f.source {
                        Ns2Source::Cbr { packet_bytes, interval_s, random, max_packets } => {
                            spec.packet_size_bytes = Some(packet_bytes);
                            spec.interval_s = Some(interval_s);
                            // cbr_traffic.cc: random_ adds U(-0.5, 0.5)·interval to each gap.
                            spec.jitter_s = if random { interval_s / 2.0 } else { 0.0 };
                            spec.max_packets = max_packets;
                        }
                        Ns2Source::Ftp { variant, window_pkts, mss_bytes, delayed_ack } => {
                            spec.kind = FlowKind::Ftp;
                            spec.transport = Some(variant.to_string());
                            let mut tcp = Map::new();
                            if let Some(w) = window_pkts {
                                tcp.insert("window_pkts".into(), w.into());
                            }
                            if let Some(m) = mss_bytes {
                                tcp.insert("mss_bytes".into(), m.into());
                            }
                            if delayed_ack {
                                tcp.insert("delayed_ack".into(), true.into());
                            }
                            spec.tcp = (!tcp.is_empty()).then_some(Value::Object(tcp));
                        }
                    }
                    spec
                }));
            }
        }
        Ok(())
    }

    /// An error in flow `i`: if the flow came from the traffic file, say so and name its line.
    pub(super) fn flow_error(&self, i: usize, e: ScenarioError) -> ScenarioError {
        let Some(t) = &self.traffic else { return e };
        let generated = t.flows_generated.unwrap_or(0).min(self.flows.len());
        let end_of_file = self.flows.len() - generated;
        if i >= end_of_file {
            let name = excerpt(self.flows[i].name.as_deref().unwrap_or("?"));
            return ScenarioError::new(
                "traffic.cbrgen",
                format!("{name} (becomes {}): {}", e.path, e.message),
            );
        }
        let from_file = t.flows_from_file.unwrap_or(0);
        let first = end_of_file - from_file.min(end_of_file);
        if i < first {
            return e;
        }
        let name = excerpt(self.flows[i].name.as_deref().unwrap_or("?"));
        let line = t
            .lines
            .get(i - first)
            .map_or(String::new(), |l| format!("line {l}: "));
        ScenarioError::new(
            where_(t),
            format!("{line}{name} (becomes {}): {}", e.path, e.message),
        )
    }
}

/// Where an error in the file is: the key and the file's name, quoted and
/// escaped so that an odd name (a newline in it) keeps the error on one line.
fn where_(t: &TrafficSpec) -> String {
    match &t.ns2_file {
        Some(p) => format!("traffic.ns2_file ({})", quote(p)),
        None => "traffic.ns2_text".into(),
    }
}

/// A parser's message about a line of a file: it may quote tokens of the line,
/// so it is escaped and cut like a value (at a few times the excerpt's length).
pub(super) fn bounded(message: &str) -> String {
    let limit = 4 * super::MAX_EXCERPT_CHARS;
    let mut out = String::new();
    for (i, c) in message.chars().enumerate() {
        if i == limit {
            out.push('…');
            break;
        }
        if super::is_control_or_format(c) {
            out.push_str(&excerpt(&c.to_string()));
        } else {
            out.push(c);
        }
    }
    out
}
