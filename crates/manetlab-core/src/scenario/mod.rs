//! Scenario files: the serde schema, strict parsing and semantic validation.
//!
//! A scenario is TOML or JSON. Parsing is strict (unknown keys are errors) and
//! every error names the key path, the value and what is allowed. Sections that a
//! later model will fill in (`outputs`) are part of the schema already, and
//! rejected with "not supported yet" rather than silently ignored. Nothing in a
//! scenario is ever executed, and parsing never reads files (see [`load`] for the
//! file loader). Keys carry their unit (`duration_s`, `bandwidth_mbps`,
//! `delay_ms`); see docs/scenarios.md, and docs/mobility.md for `[mobility]` and
//! `[faults]`.

mod dsdv;
mod error;
mod frn;
pub mod load;
mod mobility;
mod outputs;
mod routing;
mod traffic;
mod wireless;

pub use crate::faults::FaultSpec;
/// The simulation area (random placement, random waypoint, area checks): one
/// type shared with the mobility models.
pub use crate::mobility::Area;
pub use crate::param::Fidelity;
pub use dsdv::DsdvSpec;
pub use error::{
    excerpt, is_control_or_format, quote, value_excerpt, ScenarioError, MAX_EXCERPT_CHARS,
};
pub use frn::{FrnMacSpec, FrnRoutingSpec, MacKind};
pub use mobility::{MobilityModel, MobilitySpec, ScriptedNode};
pub use outputs::{OutputsSpec, TraceFormatKind, TraceLevelKind};
pub use routing::{aodv_params, dsr_params, AodvSpec, DsrSpec};
pub use traffic::{CbrgenSpec, GenTransport, PairRule, TrafficSpec};
pub use wireless::{MacSpec, PropagationKind, RadioSpec, ReceptionKind};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every scenario section whose keys a model declares (crate::param): the
/// source of docs/scenarios.md's generated tables and of export-ns2's mapping.
pub const PARAM_SECTIONS: &[crate::param::Section] = &[
    crate::param::Section::of::<crate::routing::aodv::Params>("routing.aodv"),
    crate::param::Section::of::<crate::routing::dsdv::Params>("routing.dsdv"),
    crate::param::Section::of::<crate::routing::dsr::Params>("routing.dsr"),
    crate::param::Section::of::<crate::mac::MacParams>("mac"),
];

/// Every declared parameter as JSON rows (`section`, `key`, `unit`, `scale`,
/// `allowed`, `defaults` per fidelity, `source`, `ns2_tcl`, `doc`).
pub fn param_table() -> Value {
    Value::Array(
        PARAM_SECTIONS
            .iter()
            .flat_map(|s| match (s.rows)(s.path) {
                Value::Array(rows) => rows,
                _ => unreachable!("table_json gives an array"),
            })
            .collect(),
    )
}

/// Default interface/link queue limit in packets (ns-2 `Queue set limit_ 50` as the CMU scripts use).
pub const DEFAULT_QUEUE_LIMIT_PKTS: u32 = 50;
/// Default CBR payload (bytes): the papers' CBR flows use 512-byte packets.
pub const DEFAULT_CBR_PACKET_BYTES: u32 = 512;
/// Default run seed when the scenario names none.
pub const DEFAULT_SEED: u64 = 1;

/// The scenario as written (after defaults), validated by [`Scenario::from_value`].
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form label carried into results.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Run seed; every random stream derives from it (docs/kernel.md).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated duration in seconds.
    pub duration_s: f64,
    /// Whose behaviour every layer's defaults reproduce: `"ns2-2.35"` (the
    /// default) or `"standard"` (docs/scenarios.md#fidelity). Left out of the
    /// normalised form when default, so scenarios that do not set it keep
    /// their normalised text.
    #[serde(default, skip_serializing_if = "is_default_fidelity")]
    pub fidelity: Fidelity,
    #[serde(default)]
    pub area: Option<Area>,
    pub nodes: Nodes,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    #[serde(default)]
    pub routing: Option<RoutingSpec>,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Flows from an ns-2 traffic file, appended to `flows` by validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<TrafficSpec>,
    /// Wireless interfaces on every node when present (an empty table = ns-2 defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radio: Option<RadioSpec>,
    /// 802.11 DCF parameters (only with `radio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<MacSpec>,
    /// How nodes move (default: they stay at their placement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobility: Option<MobilitySpec>,
    /// Nodes switched off/on, link outages, random link failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<FaultSpec>,
    // Sections of later models: accepted by the schema, rejected by validation.
    /// Trace files to write (ns-2 trace, pcap, movement); none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<OutputsSpec>,
}

fn default_seed() -> u64 {
    DEFAULT_SEED
}

fn is_default_fidelity(f: &Fidelity) -> bool {
    *f == Fidelity::default()
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    /// Number of nodes; they are numbered `0..count`.
    pub count: u32,
    /// Where the nodes stand. Default: all at the origin (irrelevant over point-to-point links).
    #[serde(default)]
    pub placement: Option<Placement>,
}

/// Static node placement.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Placement {
    /// One `[x_m, y_m]` per node.
    Explicit { positions_m: Vec<[f64; 2]> },
    /// Nodes on the x axis, `spacing_m` apart.
    Chain { spacing_m: f64 },
    /// Row-major grid with `columns` nodes per row, `spacing_m` apart.
    Grid { columns: u32, spacing_m: f64 },
    /// Uniformly random in `area` (stream `Placement`).
    Uniform {},
}

/// A duplex point-to-point link, like ns-2's `duplex-link`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub a: u32,
    pub b: u32,
    pub bandwidth_mbps: f64,
    pub delay_ms: f64,
    /// Drop-tail limit of each direction's queue in packets (the packet being sent is not counted).
    #[serde(default)]
    pub queue_limit_pkts: Option<u32>,
    /// Independent per-packet error probability, applied on arrival in each direction.
    #[serde(default)]
    pub error_rate: f64,
    /// Test hook (docs/tcp.md): TCP data segment numbers (0-based, MSS units) whose
    /// first arrival over this link from `a` to `b` is dropped (reason `link.ERR`),
    /// for scripted-loss experiments such as Floyd & Fall (1996). Retransmissions pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_tcp_segments: Vec<u64>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    Droptail,
    Priqueue,
    Cmupriqueue,
    Red,
    Lred,
}

/// `[queue]`: the wireless interface queue, and the default limit of link queues.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// Default `priqueue` (ns-2 `Queue/DropTail/PriQueue`), `cmupriqueue` with
    /// DSR (ns-2.35's DSR needs its `CMUPriQueue`): [`Scenario::wireless_queue_kind`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<QueueKind>,
    #[serde(default)]
    pub limit_pkts: Option<u32>,
    // RED (packets) — ns-2 defaults 5, 15, 0.1, 0.002.
    pub min_th_pkts: Option<f64>,
    pub max_th_pkts: Option<f64>,
    pub weight: Option<f64>,
    // LRED (average MAC retries) — defaults 1, 3 (docs/wireless.md).
    pub min_th_retries: Option<f64>,
    pub max_th_retries: Option<f64>,
    /// RED and LRED: maximum early-drop probability (default 0.1).
    pub max_p: Option<f64>,
    /// LRED: link-layer adaptive pacing above min_th (default true).
    pub pacing: Option<bool>,
}

impl Scenario {
    /// The AODV parameters: `[routing.aodv]` over the `fidelity` profile.
    pub fn aodv_params(&self) -> crate::routing::aodv::Params {
        aodv_params(
            self.routing.as_ref().and_then(|r| r.aodv.as_ref()),
            self.fidelity,
        )
    }

    /// The DSDV parameters: `[routing.dsdv]` over the `fidelity` profile.
    pub fn dsdv_params(&self) -> crate::routing::dsdv::Params {
        dsdv::dsdv_params(
            self.routing.as_ref().and_then(|r| r.dsdv.as_ref()),
            self.fidelity,
        )
    }

    /// The DSR parameters: `[routing.dsr]` over the `fidelity` profile.
    pub fn dsr_params(&self) -> crate::routing::dsr::Params {
        dsr_params(
            self.routing.as_ref().and_then(|r| r.dsr.as_ref()),
            self.fidelity,
        )
    }

    /// The DCF parameters: `[mac]` over the `fidelity` profile.
    pub fn mac_params(&self) -> crate::mac::MacParams {
        match &self.mac {
            Some(m) => m.params(self.fidelity),
            None => crate::param::ParamSet::profile(self.fidelity),
        }
    }

    /// The wireless interface queue: the one asked for, else ns-2's — PriQueue,
    /// or CMUPriQueue with DSR (the only queue ns-2.35's DSR agent works with).
    pub fn wireless_queue_kind(&self) -> QueueKind {
        let asked = self.queue.as_ref().and_then(|q| q.kind);
        asked.unwrap_or(match self.routing.as_ref().map(|r| r.protocol) {
            Some(RoutingProtocol::Dsr) => QueueKind::Cmupriqueue,
            _ => QueueKind::Priqueue,
        })
    }
}

impl QueueSpec {
    pub fn red_params(&self) -> crate::queue::RedParams {
        let d = crate::queue::RedParams::default();
        crate::queue::RedParams {
            min_th_pkts: self.min_th_pkts.unwrap_or(d.min_th_pkts),
            max_th_pkts: self.max_th_pkts.unwrap_or(d.max_th_pkts),
            max_p: self.max_p.unwrap_or(d.max_p),
            weight: self.weight.unwrap_or(d.weight),
        }
    }

    pub fn lred_params(&self) -> crate::queue::LredParams {
        let d = crate::queue::LredParams::default();
        crate::queue::LredParams {
            min_th_retries: self.min_th_retries.unwrap_or(d.min_th_retries),
            max_th_retries: self.max_th_retries.unwrap_or(d.max_th_retries),
            max_p: self.max_p.unwrap_or(d.max_p),
            pacing: self.pacing.unwrap_or(d.pacing),
        }
    }

    fn validate(&self, default_kind: QueueKind) -> Result<(), ScenarioError> {
        if let Some(l) = self.limit_pkts {
            at_least_one("queue.limit_pkts", l)?;
        }
        let own_kind = self.kind.unwrap_or(default_kind);
        let red_keys = [
            ("min_th_pkts", self.min_th_pkts),
            ("max_th_pkts", self.max_th_pkts),
            ("weight", self.weight),
        ];
        let lred_keys = [
            ("min_th_retries", self.min_th_retries),
            ("max_th_retries", self.max_th_retries),
        ];
        let kind = format!("{own_kind:?}").to_lowercase();
        let foreign = |keys: &[(&str, Option<f64>)], owner: &str| -> Result<(), ScenarioError> {
            match keys.iter().find(|(_, v)| v.is_some()) {
                Some((k, _)) => Err(ScenarioError::new(
                    format!("queue.{k}"),
                    format!("only applies with kind = \"{owner}\" (kind is \"{kind}\")"),
                )),
                None => Ok(()),
            }
        };
        if own_kind != QueueKind::Red {
            foreign(&red_keys, "red")?;
        }
        if own_kind != QueueKind::Lred {
            foreign(&lred_keys, "lred")?;
            if self.pacing.is_some() {
                return Err(ScenarioError::new(
                    "queue.pacing",
                    format!("only applies with kind = \"lred\" (kind is \"{kind}\")"),
                ));
            }
        }
        if !matches!(own_kind, QueueKind::Red | QueueKind::Lred) && self.max_p.is_some() {
            return Err(ScenarioError::new(
                "queue.max_p",
                format!("only applies with kind = \"red\" or \"lred\" (kind is \"{kind}\")"),
            ));
        }
        if let Some(p) = self.max_p {
            if !(p > 0.0 && p <= 1.0) {
                return Err(ScenarioError::new(
                    "queue.max_p",
                    format!("{} is out of range (allowed: 0 < max_p <= 1)", num(p)),
                ));
            }
        }
        if let Some(w) = self.weight {
            if !(w > 0.0 && w <= 1.0) {
                return Err(ScenarioError::new(
                    "queue.weight",
                    format!("{} is out of range (allowed: 0 < weight <= 1)", num(w)),
                ));
            }
        }
        let r = self.red_params();
        non_negative("queue.min_th_pkts", r.min_th_pkts)?;
        if r.max_th_pkts <= r.min_th_pkts {
            return Err(ScenarioError::new(
                "queue.max_th_pkts",
                format!(
                    "{} must be above min_th_pkts = {}",
                    num(r.max_th_pkts),
                    num(r.min_th_pkts)
                ),
            ));
        }
        let l = self.lred_params();
        non_negative("queue.min_th_retries", l.min_th_retries)?;
        if l.max_th_retries <= l.min_th_retries {
            return Err(ScenarioError::new(
                "queue.max_th_retries",
                format!(
                    "{} must be above min_th_retries = {}",
                    num(l.max_th_retries),
                    num(l.min_th_retries)
                ),
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoutingProtocol {
    Static,
    Aodv,
    Dsr,
    Dsdv,
    /// FRN's table-driven multi-route routing (paper 003; needs `[mac] kind = "frn"`).
    Frn,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingSpec {
    pub protocol: RoutingProtocol,
    /// AODV parameters (`protocol = "aodv"` only; docs/routing.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aodv: Option<AodvSpec>,
    /// DSDV parameters (`protocol = "dsdv"` only; docs/routing.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsdv: Option<DsdvSpec>,
    /// DSR parameters (`protocol = "dsr"` only; docs/routing.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsr: Option<DsrSpec>,
    /// FRN parameters (`protocol = "frn"` only; docs/frn.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frn: Option<FrnRoutingSpec>,
}

impl RoutingSpec {
    /// The FRN routing parameters, defaults filled in.
    pub fn frn_params(&self) -> crate::routing::frn::Params {
        self.frn
            .as_ref()
            .map_or_else(crate::routing::frn::Params::default, |f| f.params())
    }

    fn validate(&self, fidelity: Fidelity) -> Result<(), ScenarioError> {
        let name = format!("{:?}", self.protocol).to_lowercase();
        match (&self.frn, self.protocol) {
            (Some(f), RoutingProtocol::Frn) => f.validate()?,
            (Some(_), _) => {
                return Err(ScenarioError::new(
                    "routing.frn",
                    format!("only applies with protocol = \"frn\" (protocol is \"{name}\")"),
                ))
            }
            (None, _) => {}
        }
        match (&self.dsdv, self.protocol) {
            (Some(d), RoutingProtocol::Dsdv) => dsdv::validate_dsdv(d, fidelity)?,
            (Some(_), _) => {
                return Err(ScenarioError::new(
                    "routing.dsdv",
                    format!("only applies with protocol = \"dsdv\" (protocol is \"{name}\")"),
                ))
            }
            (None, _) => {}
        }
        match (&self.dsr, self.protocol) {
            (Some(d), RoutingProtocol::Dsr) => routing::validate_dsr(d, fidelity)?,
            (Some(_), _) => {
                return Err(ScenarioError::new(
                    "routing.dsr",
                    format!("only applies with protocol = \"dsr\" (protocol is \"{name}\")"),
                ))
            }
            (None, _) => {}
        }
        match (&self.aodv, self.protocol) {
            (Some(a), RoutingProtocol::Aodv) => routing::validate_aodv(a, fidelity),
            (Some(_), _) => Err(ScenarioError::new(
                "routing.aodv",
                format!("only applies with protocol = \"aodv\" (protocol is \"{name}\")"),
            )),
            (None, _) => Ok(()),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// Constant bit rate over UDP.
    Cbr,
    /// Bulk transfer over TCP.
    Ftp,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub kind: FlowKind,
    pub src: u32,
    pub dst: u32,
    /// When the application starts sending (s).
    #[serde(default)]
    pub start_s: f64,
    /// When it stops (s); default: end of run.
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// "udp" for CBR; a TCP variant name for FTP.
    #[serde(default)]
    pub transport: Option<String>,
    /// Parameters of the TCP variant (TCP issue).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<Value>,
    /// CBR payload per packet (bytes, excluding UDP/IP headers).
    #[serde(default)]
    pub packet_size_bytes: Option<u32>,
    /// CBR: whether the 8-byte UDP header is sent (false: ns-2's `Agent/UDP`, none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_header: Option<bool>,
    /// CBR inter-packet interval (s); give this or `rate_kbps`.
    #[serde(default)]
    pub interval_s: Option<f64>,
    /// CBR payload rate (kbit/s); the interval is packet_size·8/rate.
    #[serde(default)]
    pub rate_kbps: Option<f64>,
    /// CBR random jitter (s): each gap is interval + U(−jitter_s, +jitter_s).
    #[serde(default)]
    pub jitter_s: f64,
    /// Stop after this many packets (ns-2 `maxpkts_`).
    #[serde(default)]
    pub max_packets: Option<u64>,
    /// FTP: size of the file to send (bytes); default: infinite backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_bytes: Option<u64>,
    /// The TCP or UDP port at both ends (pcap and trace files); default
    /// [`DEFAULT_BASE_PORT`] + the flow's index.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "flow_port"
    )]
    pub port: Option<u16>,
}

/// `flows[].port`: an integer in 1..=65535 (0 is no port).
fn flow_port<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u16>, D::Error> {
    let v = Value::deserialize(d)?;
    match v.as_u64().and_then(|p| u16::try_from(p).ok()).filter(|&p| p > 0) {
        Some(p) => Ok(Some(p)),
        None => Err(serde::de::Error::custom(format!(
            "{} is not a port (allowed: an integer in 1..=65535, or leave it out for 50000 + the flow's index)",
            value_excerpt(&v)
        ))),
    }
}

/// First default flow port: flow `i` uses 50000 + i at both ends. 50000–54327
/// is in IANA's dynamic range (49152–65535) and no Wireshark 4.0 dissector
/// claims a TCP or UDP port there (`tshark -G decodes`), so a pcap shows plain
/// TCP and UDP (6000 decoded as X11 and 5000 as TAPA before).
pub const DEFAULT_BASE_PORT: u16 = 50_000;

impl FlowSpec {
    /// The flow's port (`port`, or the default for flow index `i`).
    pub fn port(&self, i: usize) -> u16 {
        self.port
            .unwrap_or_else(|| DEFAULT_BASE_PORT.wrapping_add(i as u16))
    }

    /// The CBR inter-packet interval (s), from `interval_s` or `rate_kbps`.
    pub fn cbr_interval_s(&self) -> f64 {
        match (self.interval_s, self.rate_kbps) {
            (Some(i), _) => i,
            (None, Some(r)) => self.cbr_packet_bytes() as f64 * 8.0 / (r * 1000.0),
            (None, None) => unreachable!("validated: CBR flow has interval_s or rate_kbps"),
        }
    }
    pub fn cbr_packet_bytes(&self) -> u32 {
        self.packet_size_bytes.unwrap_or(DEFAULT_CBR_PACKET_BYTES)
    }
    /// The `tcp` table of an FTP flow, defaults filled in (validated by `Scenario::from_value`).
    pub fn tcp_config(&self) -> crate::transport::tcp::TcpConfig {
        match &self.tcp {
            None => crate::transport::tcp::TcpConfig::default(),
            Some(v) => serde_json::from_value(v.clone()).expect("validated tcp table"),
        }
    }
    pub fn transport_name(&self) -> &str {
        self.transport.as_deref().unwrap_or(match self.kind {
            FlowKind::Cbr => "udp",
            FlowKind::Ftp => "newreno",
        })
    }
}

/// Deserialize with the key path of any error.
fn deserialize_at<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        ScenarioError::from_serde(&path, &e.inner().to_string())
    })
}

impl Scenario {
    /// Parse and validate a scenario from a JSON value (the form the Python front passes).
    pub fn from_value(value: Value) -> Result<Scenario, ScenarioError> {
        if !value.is_object() {
            return Err(ScenarioError::new(
                "(top level)",
                format!("expected a table of keys, got {}", kind_of(&value)),
            ));
        }
        load::check_nesting(&value)?;
        let mut scenario: Scenario = deserialize_at(value)?;
        scenario.expand_traffic()?;
        scenario.validate()?;
        Ok(scenario)
    }

    pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioError> {
        let value: Value = serde_json::from_str(text).map_err(load::json_error)?;
        Scenario::from_value(value)
    }

    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        let value: Value = toml::from_str(text).map_err(|e| {
            ScenarioError::new("(file)", format!("not valid TOML: {}", e.message()))
        })?;
        Scenario::from_value(value)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("scenario serialises")
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        if let Some(n) = &self.name {
            check_name("name", n)?;
        }
        if let Some(d) = &self.description {
            check_description(d)?;
        }
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(n) = &f.name {
                check_name(&format!("flows[{i}].name"), n).map_err(|e| self.flow_error(i, e))?;
            }
        }
        if let Some(o) = &self.outputs {
            o.validate(self.nodes.count)?;
        }
        if let Some(r) = &self.radio {
            r.validate()?;
        }
        if let Some(m) = &self.mac {
            if self.radio.is_none() {
                return Err(ScenarioError::new(
                    "mac",
                    "needs a [radio] section (the MAC drives a wireless interface)",
                ));
            }
            m.validate(self.fidelity)?;
        }
        // FRN is one protocol over two layers: its MAC and routing go together.
        let mac_frn = self.mac.as_ref().is_some_and(|m| m.kind == MacKind::Frn);
        let routing_frn = self
            .routing
            .as_ref()
            .is_some_and(|r| r.protocol == RoutingProtocol::Frn);
        if mac_frn && !routing_frn {
            return Err(ScenarioError::new("mac.kind", "\"frn\" needs [routing] protocol = \"frn\" (FRN's MAC relays by its routing table)"));
        }
        if routing_frn && !mac_frn {
            return Err(ScenarioError::new("routing.protocol", "\"frn\" needs [mac] kind = \"frn\" (FRN routing relies on the slotted MAC's echoes)"));
        }
        if !self.links.is_empty() && routing_frn {
            return Err(ScenarioError::new(
                "links",
                "point-to-point links are not supported with FRN",
            ));
        }
        // 1 µs .. 10⁷ s (116 days): simulated time is integer nanoseconds.
        within("duration_s", self.duration_s, 1e-6, 1e7)?;
        if let Some(a) = &self.area {
            positive("area.width_m", a.width_m)?;
            positive("area.height_m", a.height_m)?;
        }
        self.validate_nodes()?;
        if let Some(q) = &self.queue {
            q.validate(self.wireless_queue_kind())?;
        }
        if let Some(r) = &self.routing {
            r.validate(self.fidelity)?;
        }
        self.validate_links()?;
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(i, f)
                .map_err(|e| self.flow_error(i, e))?;
        }
        self.validate_flow_ports()?;
        self.validate_mobility()?;
        self.validate_faults()?;
        Ok(())
    }

    /// `flows[].port`: 1..=65535, and no two flows of one transport between the
    /// same two nodes on the same port (they would be one connection in a pcap).
    fn validate_flow_ports(&self) -> Result<(), ScenarioError> {
        let mut seen: std::collections::BTreeMap<(bool, u32, u32, u16), usize> =
            std::collections::BTreeMap::new();
        for (i, f) in self.flows.iter().enumerate() {
            let path = format!("flows[{i}].port");
            if f.port == Some(0) {
                return Err(ScenarioError::new(path, "0 is out of range (allowed: 1..=65535, or leave it out for 50000 + the flow's index)"));
            }
            let port = f.port(i);
            let key = (
                f.kind == FlowKind::Ftp,
                f.src.min(f.dst),
                f.src.max(f.dst),
                port,
            );
            if let Some(j) = seen.insert(key, i) {
                let proto = if key.0 { "TCP" } else { "UDP" };
                return Err(ScenarioError::new(
                    path,
                    format!("{port} is already the port of flows[{j}], a {proto} flow between the same nodes {} and {} (allowed: a port no other {proto} flow between them uses)", key.1, key.2),
                ));
            }
        }
        Ok(())
    }

    fn node_exists(&self, path: String, id: u32) -> Result<(), ScenarioError> {
        if id >= self.nodes.count {
            return Err(ScenarioError::new(
                path,
                format!(
                    "node {id} does not exist (nodes 0..{})",
                    self.nodes.count.saturating_sub(1)
                ),
            ));
        }
        Ok(())
    }

    fn validate_nodes(&self) -> Result<(), ScenarioError> {
        let n = self.nodes.count;
        if n == 0 || n > 1_000_000 {
            return Err(ScenarioError::new(
                "nodes.count",
                format!("{n} is out of range (allowed: 1..=1000000)"),
            ));
        }
        match &self.nodes.placement {
            None => {}
            Some(Placement::Explicit { positions_m }) => {
                if positions_m.len() != n as usize {
                    return Err(ScenarioError::new(
                        "nodes.placement.positions_m",
                        format!("{} positions given for {n} nodes (need exactly one [x_m, y_m] per node)", positions_m.len()),
                    ));
                }
                for (i, [x, y]) in positions_m.iter().enumerate() {
                    for (axis, v) in [("x", x), ("y", y)] {
                        if !v.is_finite() {
                            return Err(ScenarioError::new(
                                format!("nodes.placement.positions_m[{i}]"),
                                format!("{axis} = {} is not a finite number", num(*v)),
                            ));
                        }
                    }
                    if let Some(a) = &self.area {
                        if *x < 0.0 || *y < 0.0 || *x > a.width_m || *y > a.height_m {
                            return Err(ScenarioError::new(
                                format!("nodes.placement.positions_m[{i}]"),
                                format!(
                                    "[{}, {}] is outside the area (0..{} m × 0..{} m)",
                                    num(*x),
                                    num(*y),
                                    num(a.width_m),
                                    num(a.height_m)
                                ),
                            ));
                        }
                    }
                }
            }
            Some(Placement::Chain { spacing_m }) => {
                positive("nodes.placement.spacing_m", *spacing_m)?;
                extent("nodes.placement.spacing_m", *spacing_m, n - 1)?;
            }
            Some(Placement::Grid { columns, spacing_m }) => {
                at_least_one("nodes.placement.columns", *columns)?;
                positive("nodes.placement.spacing_m", *spacing_m)?;
                extent(
                    "nodes.placement.spacing_m",
                    *spacing_m,
                    (*columns).min(n) - 1,
                )?;
                extent(
                    "nodes.placement.spacing_m",
                    *spacing_m,
                    n.div_ceil(*columns) - 1,
                )?;
            }
            Some(Placement::Uniform {}) if self.area.is_none() => {
                return Err(ScenarioError::new(
                    "nodes.placement",
                    "kind \"uniform\" needs an [area] with width_m and height_m",
                ));
            }
            Some(Placement::Uniform {}) => {}
        }
        Ok(())
    }

    fn validate_links(&self) -> Result<(), ScenarioError> {
        let mut seen = std::collections::BTreeMap::new();
        for (i, l) in self.links.iter().enumerate() {
            let p = |k: &str| format!("links[{i}].{k}");
            self.node_exists(p("a"), l.a)?;
            self.node_exists(p("b"), l.b)?;
            if l.a == l.b {
                return Err(ScenarioError::new(
                    p("b"),
                    format!("a link joins two different nodes (a = b = {})", l.a),
                ));
            }
            if let Some(j) = seen.insert((l.a.min(l.b), l.a.max(l.b)), i) {
                return Err(ScenarioError::new(
                    p("b"),
                    format!("nodes {} and {} are already joined by links[{j}]", l.a, l.b),
                ));
            }
            // 1 bit/s .. 1 Tb/s and up to 10⁶ s of delay keep every event time inside u64 nanoseconds.
            within(&p("bandwidth_mbps"), l.bandwidth_mbps, 1e-6, 1e6)?;
            within(&p("delay_ms"), l.delay_ms, 0.0, 1e9)?;
            if let Some(q) = l.queue_limit_pkts {
                at_least_one(&p("queue_limit_pkts"), q)?;
            }
            if !(0.0..1.0).contains(&l.error_rate) {
                return Err(ScenarioError::new(
                    p("error_rate"),
                    format!(
                        "{} is out of range (allowed: 0 <= error_rate < 1)",
                        num(l.error_rate)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn validate_flow(&self, i: usize, f: &FlowSpec) -> Result<(), ScenarioError> {
        let p = |k: &str| format!("flows[{i}].{k}");
        self.node_exists(p("src"), f.src)?;
        self.node_exists(p("dst"), f.dst)?;
        if f.src == f.dst {
            return Err(ScenarioError::new(
                p("dst"),
                format!("a flow needs two different nodes (src = dst = {})", f.src),
            ));
        }
        non_negative(&p("start_s"), f.start_s)?;
        if f.start_s >= self.duration_s {
            return Err(ScenarioError::new(
                p("start_s"),
                format!(
                    "{} is not before the end of the run (duration_s = {})",
                    num(f.start_s),
                    num(self.duration_s)
                ),
            ));
        }
        if let Some(stop) = f.stop_s {
            if !stop.is_finite() || stop <= f.start_s {
                return Err(ScenarioError::new(
                    p("stop_s"),
                    format!("{} must be after start_s = {}", num(stop), num(f.start_s)),
                ));
            }
        }
        match f.kind {
            FlowKind::Ftp => self.validate_ftp(i, f),
            FlowKind::Cbr => {
                if f.transport_name() != "udp" {
                    return Err(ScenarioError::new(
                        p("transport"),
                        format!(
                            "{} is not allowed for a CBR flow (allowed: udp)",
                            quote(f.transport_name())
                        ),
                    ));
                }
                if f.tcp.is_some() {
                    return Err(ScenarioError::new(
                        p("tcp"),
                        "TCP parameters are not allowed on a CBR (UDP) flow",
                    ));
                }
                if let Some(s) = f.packet_size_bytes {
                    if !(1..=65_507).contains(&s) {
                        return Err(ScenarioError::new(
                            p("packet_size_bytes"),
                            format!(
                                "{s} is out of range (allowed: 1..=65507 bytes of UDP payload)"
                            ),
                        ));
                    }
                }
                match (f.interval_s, f.rate_kbps) {
                    (Some(_), Some(_)) => {
                        return Err(ScenarioError::new(
                            p("rate_kbps"),
                            "give either interval_s or rate_kbps, not both",
                        ))
                    }
                    (None, None) => {
                        return Err(ScenarioError::new(
                            p("interval_s"),
                            "a CBR flow needs interval_s or rate_kbps",
                        ))
                    }
                    (Some(iv), None) => within(&p("interval_s"), iv, MIN_CBR_INTERVAL_S, 1e7)?,
                    (None, Some(r)) => {
                        positive(&p("rate_kbps"), r)?;
                        // The slowest rate: one packet per 10⁷ s, the longest interval_s.
                        let min_kbps = f.cbr_packet_bytes() as f64 * 8.0 / 1e7 / 1000.0;
                        if r < min_kbps {
                            return Err(ScenarioError::new(
                                p("rate_kbps"),
                                format!("{} is out of range (allowed: >= {:.4e} for {}-byte packets: one packet per 10^7 s)", num(r), min_kbps, f.cbr_packet_bytes()),
                            ));
                        }
                        let max_kbps =
                            f.cbr_packet_bytes() as f64 * 8.0 / MIN_CBR_INTERVAL_S / 1000.0;
                        if r > max_kbps {
                            return Err(ScenarioError::new(
                                p("rate_kbps"),
                                format!("{} is out of range (allowed: <= {} for {}-byte packets: one packet per µs)", num(r), num(max_kbps), f.cbr_packet_bytes()),
                            ));
                        }
                    }
                }
                non_negative(&p("jitter_s"), f.jitter_s)?;
                if f.jitter_s >= f.cbr_interval_s() {
                    return Err(ScenarioError::new(
                        p("jitter_s"),
                        format!(
                            "{} must be smaller than the interval ({} s) so packets stay in order",
                            num(f.jitter_s),
                            num(f.cbr_interval_s())
                        ),
                    ));
                }
                if f.max_packets == Some(0) {
                    return Err(ScenarioError::new(
                        p("max_packets"),
                        "0 is out of range (allowed: >= 1, or leave it out)",
                    ));
                }
                Ok(())
            }
        }
    }
}

// Defined in `sim` so models (TCP's parameter checks) use it without importing
// the scenario layer above them.
pub(crate) use crate::sim::num;

/// Smallest CBR interval (s): one microsecond, far below any 802.11 frame time, and
/// large enough that every interval is a whole number of nanoseconds > 0.
pub const MIN_CBR_INTERVAL_S: f64 = 1e-6;

impl Scenario {
    fn validate_ftp(&self, i: usize, f: &FlowSpec) -> Result<(), ScenarioError> {
        use crate::transport::tcp;
        let p = |k: &str| format!("flows[{i}].{k}");
        let t = f.transport_name();
        let known = tcp::variant_names();
        if !known.contains(&t) {
            return Err(ScenarioError::new(
                p("transport"),
                format!(
                    "{} is not a TCP variant (allowed: {})",
                    quote(t),
                    known.join(", ")
                ),
            ));
        }
        for (key, given) in [
            ("packet_size_bytes", f.packet_size_bytes.is_some()),
            ("interval_s", f.interval_s.is_some()),
            ("rate_kbps", f.rate_kbps.is_some()),
            ("jitter_s", f.jitter_s != 0.0),
            ("max_packets", f.max_packets.is_some()),
            ("udp_header", f.udp_header.is_some()),
        ] {
            if given {
                return Err(ScenarioError::new(
                    p(key),
                    "applies to CBR flows only (an FTP flow takes file_bytes and a tcp table)",
                ));
            }
        }
        if f.file_bytes == Some(0) {
            return Err(ScenarioError::new(
                p("file_bytes"),
                "0 is out of range (allowed: >= 1, or leave it out for an infinite backlog)",
            ));
        }
        let cfg: tcp::TcpConfig = match &f.tcp {
            None => tcp::TcpConfig::default(),
            Some(v) => {
                if !v.is_object() {
                    return Err(ScenarioError::new(
                        p("tcp"),
                        format!("expected a table of TCP parameters, got {}", kind_of(v)),
                    ));
                }
                serde_path_to_error::deserialize(v.clone()).map_err(|e| {
                    let sub = e.path().to_string();
                    let path = if sub.is_empty() || sub == "." {
                        p("tcp")
                    } else {
                        format!("{}.{sub}", p("tcp"))
                    };
                    ScenarioError::from_serde(&path, &e.inner().to_string())
                })?
            }
        };
        let needs_sack = tcp::by_name(t, &cfg)
            .expect("registered")
            .recovery()
            .needs_sack();
        cfg.check(t, needs_sack)
            .map_err(|(k, m)| ScenarioError::new(format!("{}.{k}", p("tcp")), m))?;
        Ok(())
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

/// Most characters in a name (`name`, `flows[].name`).
pub const MAX_NAME_CHARS: usize = 200;
/// Most characters in `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 10_000;

/// What a name may be (docs/scenarios.md#names).
pub const NAME_RULE: &str = "printable Unicode: no control or format characters (Unicode Cc, Cf, Zl, Zp), at most 200 characters";

/// A user-given name (`name`, `flows[].name`): any printable Unicode, no
/// control or format characters (newlines, tabs, ESC, bidirectional
/// overrides, zero-width marks), at most [`MAX_NAME_CHARS`] characters.
/// Characters other formats treat specially (`<`, `"`, `$`, `[`, `;`, `=`) are
/// allowed: every writer escapes names for its format.
pub fn check_name(path: &str, name: &str) -> Result<(), ScenarioError> {
    if let Some((i, c)) = name
        .chars()
        .enumerate()
        .find(|&(_, c)| is_control_or_format(c))
    {
        return Err(ScenarioError::new(
            path,
            format!("{} holds the control or format character U+{:04X} at character {} (allowed: {NAME_RULE})", quote(name), c as u32, i + 1),
        ));
    }
    let n = name.chars().count();
    if n > MAX_NAME_CHARS {
        return Err(ScenarioError::new(
            path,
            format!(
                "{} is {n} characters long (allowed: {NAME_RULE})",
                quote(name)
            ),
        ));
    }
    Ok(())
}

/// `description`: free text over several lines, so newlines and tabs are
/// allowed, other control and format characters are not; at most
/// [`MAX_DESCRIPTION_CHARS`] characters.
fn check_description(d: &str) -> Result<(), ScenarioError> {
    let rule = format!("text with newlines and tabs but no other control or format characters, at most {MAX_DESCRIPTION_CHARS} characters");
    if let Some((i, c)) = d
        .chars()
        .enumerate()
        .find(|&(_, c)| c != '\n' && c != '\t' && is_control_or_format(c))
    {
        return Err(ScenarioError::new("description", format!("{} holds the control or format character U+{:04X} at character {} (allowed: {rule})", quote(d), c as u32, i + 1)));
    }
    let n = d.chars().count();
    if n > MAX_DESCRIPTION_CHARS {
        return Err(ScenarioError::new(
            "description",
            format!("{} is {n} characters long (allowed: {rule})", quote(d)),
        ));
    }
    Ok(())
}

/// Farthest a placement may put a node from the origin (m): far beyond any
/// radio range, and small enough that squared distances stay finite.
pub const MAX_PLACEMENT_EXTENT_M: f64 = 1e9;

/// `spacing_m` times `steps` must stay within [`MAX_PLACEMENT_EXTENT_M`].
fn extent(path: &str, spacing_m: f64, steps: u32) -> Result<(), ScenarioError> {
    let far = spacing_m * steps as f64;
    if far > MAX_PLACEMENT_EXTENT_M {
        return Err(ScenarioError::new(
            path,
            format!("{} is out of range: it puts nodes {} m from the origin (allowed: spacing_m × (nodes in a row − 1) <= {} m)", num(spacing_m), num(far), num(MAX_PLACEMENT_EXTENT_M)),
        ));
    }
    Ok(())
}

pub(crate) fn positive(path: &str, v: f64) -> Result<(), ScenarioError> {
    if !(v.is_finite() && v > 0.0) {
        return Err(ScenarioError::new(
            path,
            format!("{} is out of range (allowed: a finite number > 0)", num(v)),
        ));
    }
    Ok(())
}

pub(crate) fn non_negative(path: &str, v: f64) -> Result<(), ScenarioError> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(ScenarioError::new(
            path,
            format!("{} is out of range (allowed: a finite number >= 0)", num(v)),
        ));
    }
    Ok(())
}

pub use crate::param::MIN_POSITIVE_TIME_S;

/// `lo <= v <= hi`, for values whose extremes would overflow simulated time.
pub(crate) fn within(path: &str, v: f64, lo: f64, hi: f64) -> Result<(), ScenarioError> {
    if !(v.is_finite() && v >= lo && v <= hi) {
        return Err(ScenarioError::new(
            path,
            format!(
                "{} is out of range (allowed: {} <= value <= {})",
                num(v),
                num(lo),
                num(hi)
            ),
        ));
    }
    Ok(())
}

fn at_least_one(path: &str, v: u32) -> Result<(), ScenarioError> {
    if v == 0 {
        return Err(ScenarioError::new(
            path,
            "0 is out of range (allowed: >= 1)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod param_tests;
#[cfg(test)]
mod tests;
