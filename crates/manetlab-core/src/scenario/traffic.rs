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

use super::{excerpt, quote, FlowKind, FlowSpec, Scenario, ScenarioError};
use crate::app::ns2_traffic::{read_ns2_traffic, Ns2Source};
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
    /// Normalised form only: how many of the last `flows` came from the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows_from_file: Option<usize>,
    /// The file line of each flow just read (for error messages; not serialised).
    #[serde(skip)]
    lines: Vec<usize>,
}

impl Scenario {
    /// Turn `traffic.ns2_text` into flows appended to `flows` (done once, before validation).
    pub(super) fn expand_traffic(&mut self) -> Result<(), ScenarioError> {
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
                    None => ScenarioError::new("traffic.ns2_file", "required key is missing (the path of an ns-2 traffic file, e.g. cbrgen output)"),
                })
            }
            (Some(text), None) => {
                let flows = read_ns2_traffic(text).map_err(|e| ScenarioError::new(where_(t), format!("line {}: {}: `{}`", e.line, bounded(&e.message), excerpt(&e.text))))?;
                if flows.is_empty() {
                    return Err(ScenarioError::new(where_(t), "the traffic file defines no flows"));
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
        let from_file = t.flows_from_file.unwrap_or(0);
        let first = self.flows.len() - from_file.min(self.flows.len());
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
