//! `[[traffic.cbrgen]]`: random cross traffic drawn per seed by the rules of
//! CMU's `cbrgen.tcl` (ns-2.35 `indep-utils/cmu-scen-gen/cbrgen.tcl`), expanded
//! into ordinary flows when the scenario is validated.
//!
//! What cbrgen does (line numbers of ns-2.35's file):
//!
//! * start times: each connection starts at `[$rng uniform 0.0 180.0]` (l. 82,
//!   l. 106) → `start_s = [0, 180]` by default, any range allowed;
//! * CBR (`create-cbr-connection`, l. 79–101): `Agent/UDP` → `Agent/Null`,
//!   `packetSize_ $opt(pktsize)` (512, l. 52), `interval_ 1/rate` (l. 143),
//!   `random_ 1` (each gap jittered by U(−interval/2, +interval/2),
//!   `tools/cbr_traffic.cc`), `maxpkts_ 10000` (l. 94–96);
//! * TCP (`create-tcp-connection`, l. 103–120): `create-connection TCP … TCPSink`
//!   (ns-2's `Agent/TCP`, i.e. Tahoe), `window_ 32`, `packetSize_ $opt(pktsize)`,
//!   an FTP source (infinite backlog);
//! * pairs (l. 156–194): for each node i in turn, x = U(0, 100); x < 50: no
//!   connection; else i → (i+1) mod (nn+1); and if x ≥ 75 also i → (i+2) mod (nn+1);
//!   stop when `mc` connections exist (so there may be fewer). That is
//!   `pairs = "cbrgen"`. Papers that say "N random pairs" mean something else:
//!   `pairs = "random"` (the default) draws N distinct ordered pairs of two
//!   different nodes, uniformly.
//!
//! Where we differ from the Tcl:
//! * the random numbers: cbrgen draws from ns-2's `RNG` seeded with `-seed`; we
//!   draw from the scenario's seed on stream ([`Component::TrafficGen`], `stream`)
//!   (Xoshiro256++). We reproduce cbrgen's rules, never its numbers; to run a
//!   cbrgen file as it is, give it as `[traffic] ns2_file`;
//! * cbrgen's destination `(i+k) mod (nn+1)` can name node nn, which does not
//!   exist (a known quirk of the script): we wrap modulo nn, and leave out a
//!   connection to the node itself (only possible with 2 nodes).
//!
//! Common random numbers: the draw depends on the seed, `nodes.count` and the
//! generator's own keys only (its own stream; nothing else draws from it), so
//! every cell of a study that shares a seed and a node count gets the same flows.

use super::super::{num, positive, FlowKind, FlowSpec, ScenarioError};
use crate::sim::{stream, Component, SimRng};
use crate::transport::tcp::variant_names;
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// cbrgen's `maxpkts_` for CBR sources.
pub const CBRGEN_MAX_PACKETS: u64 = 10_000;
/// cbrgen's `opt(pktsize)`.
pub const CBRGEN_PACKET_BYTES: u32 = 512;
/// cbrgen's TCP `window_`.
pub const CBRGEN_TCP_WINDOW_PKTS: u32 = 32;
/// cbrgen's start-time range (s).
pub const CBRGEN_START_S: [f64; 2] = [0.0, 180.0];

/// How pairs are drawn.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PairRule {
    /// `connections` distinct ordered pairs (src ≠ dst), uniform.
    #[default]
    Random,
    /// cbrgen.tcl's own rule (module doc): neighbours by index, at most `connections`.
    Cbrgen,
}

/// What each connection carries.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GenTransport {
    /// CBR over UDP (`cbrgen -type cbr`).
    #[default]
    Cbr,
    /// FTP over TCP (`cbrgen -type tcp`).
    Tcp,
}

fn default_packet_bytes() -> u32 {
    CBRGEN_PACKET_BYTES
}
fn default_start() -> [f64; 2] {
    CBRGEN_START_S
}
fn default_true() -> bool {
    true
}

/// One `[[traffic.cbrgen]]` table.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CbrgenSpec {
    /// Number of connections (cbrgen `-mc`); with `pairs = "cbrgen"` at most this many.
    pub connections: u32,
    #[serde(default)]
    pub pairs: PairRule,
    #[serde(default)]
    pub transport: GenTransport,
    /// CBR packets per second (cbrgen `-rate`; interval = 1/rate). Required for CBR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_pkts_per_s: Option<f64>,
    /// Payload per packet (CBR) or TCP segment size (cbrgen `-pktsize`... 512).
    #[serde(default = "default_packet_bytes")]
    pub packet_size_bytes: u32,
    /// CBR `random_ 1`: each gap is interval + U(−interval/2, +interval/2).
    #[serde(default = "default_true")]
    pub random: bool,
    /// CBR `maxpkts_` (cbrgen: 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_packets: Option<u64>,
    /// Start times are drawn uniformly in [start_s[0], start_s[1]) (s).
    #[serde(default = "default_start")]
    pub start_s: [f64; 2],
    /// TCP: the variant (cbrgen's `Agent/TCP` is Tahoe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_variant: Option<String>,
    /// TCP: `window_` (cbrgen: 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_pkts: Option<u32>,
    /// The random stream (entity of [`Component::TrafficGen`]); default: the
    /// generator's index. Two generators with one stream draw the same numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<u64>,
    /// Prefix of the flows' names (default `cbrgen<index>`): flows are named
    /// `<prefix>.cbr_(k)` or `<prefix>.ftp_(k)`, as cbrgen names its variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl CbrgenSpec {
    /// Check the keys (`path` is `traffic.cbrgen[g]`) against a run of
    /// `nodes` nodes lasting `duration_s`.
    pub fn validate(&self, path: &str, nodes: u32, duration_s: f64) -> Result<(), ScenarioError> {
        let k = |x: &str| format!("{path}.{x}");
        if nodes < 2 {
            return Err(ScenarioError::new(
                k("connections"),
                format!("needs at least 2 nodes (nodes.count = {nodes})"),
            ));
        }
        let most = u64::from(nodes) * u64::from(nodes - 1);
        let c = u64::from(self.connections);
        let allowed_most = match self.pairs {
            PairRule::Random => most,
            // At most two per node (i → i+1, i → i+2).
            PairRule::Cbrgen => 2 * u64::from(nodes),
        };
        if c == 0 || c > allowed_most {
            return Err(ScenarioError::new(
                k("connections"),
                format!(
                    "{c} is out of range (allowed: 1..={allowed_most}, the {} pairs of {nodes} nodes)",
                    if self.pairs == PairRule::Random { "distinct ordered" } else { "cbrgen" }
                ),
            ));
        }
        if !(1..=65_507).contains(&self.packet_size_bytes) {
            return Err(ScenarioError::new(
                k("packet_size_bytes"),
                format!(
                    "{} is out of range (allowed: 1..=65507)",
                    self.packet_size_bytes
                ),
            ));
        }
        let [a, b] = self.start_s;
        if !(a.is_finite()
            && b.is_finite()
            && 0.0 <= a
            && a <= b
            && b <= duration_s
            && a < duration_s)
        {
            return Err(ScenarioError::new(
                k("start_s"),
                format!(
                    "[{}, {}] is out of range (allowed: [min, max] with 0 <= min <= max <= duration_s = {} and min < duration_s; cbrgen's is [0, 180])",
                    num(a),
                    num(b),
                    num(duration_s)
                ),
            ));
        }
        let tcp_only = |key: &str, set: bool| -> Result<(), ScenarioError> {
            if set {
                return Err(ScenarioError::new(
                    k(key),
                    "applies to transport = \"tcp\" only",
                ));
            }
            Ok(())
        };
        let cbr_only = |key: &str, set: bool| -> Result<(), ScenarioError> {
            if set {
                return Err(ScenarioError::new(
                    k(key),
                    "applies to transport = \"cbr\" only",
                ));
            }
            Ok(())
        };
        match self.transport {
            GenTransport::Cbr => {
                tcp_only("tcp_variant", self.tcp_variant.is_some())?;
                tcp_only("window_pkts", self.window_pkts.is_some())?;
                let Some(r) = self.rate_pkts_per_s else {
                    return Err(ScenarioError::new(
                        k("rate_pkts_per_s"),
                        "required key is missing for transport = \"cbr\" (cbrgen's -rate: packets per second)",
                    ));
                };
                positive(&k("rate_pkts_per_s"), r)?;
                // The interval must be a whole number of nanoseconds or more.
                if 1.0 / r < 1e-6 {
                    return Err(ScenarioError::new(
                        k("rate_pkts_per_s"),
                        format!("{} is out of range (allowed: > 0 and <= 1000000)", num(r)),
                    ));
                }
                if self.max_packets == Some(0) {
                    return Err(ScenarioError::new(
                        k("max_packets"),
                        "0 is out of range (allowed: an integer >= 1)",
                    ));
                }
            }
            GenTransport::Tcp => {
                cbr_only("rate_pkts_per_s", self.rate_pkts_per_s.is_some())?;
                cbr_only("max_packets", self.max_packets.is_some())?;
                if let Some(v) = &self.tcp_variant {
                    if !variant_names().contains(&v.as_str()) {
                        return Err(ScenarioError::new(
                            k("tcp_variant"),
                            format!(
                                "{} is not allowed (allowed: {})",
                                super::super::quote(v),
                                variant_names().join(", ")
                            ),
                        ));
                    }
                }
                if self.window_pkts == Some(0) {
                    return Err(ScenarioError::new(
                        k("window_pkts"),
                        "0 is out of range (allowed: an integer >= 1)",
                    ));
                }
            }
        }
        if let Some(n) = &self.name {
            super::super::check_name(&k("name"), n)?;
        }
        Ok(())
    }

    /// The (src, dst, start_s) of each connection, drawn from `rng` (validated spec).
    pub fn draw(&self, nodes: u32, rng: &mut SimRng) -> Vec<(u32, u32, f64)> {
        let [a, b] = self.start_s;
        // cbrgen draws a connection's start time when it creates it (after its pair).
        let start = |rng: &mut SimRng| a + (b - a) * rng.gen::<f64>();
        let want = self.connections as usize;
        let mut out = Vec::with_capacity(want);
        match self.pairs {
            PairRule::Random => {
                let mut used = BTreeSet::new();
                while out.len() < want {
                    let src = rng.gen_range(0..nodes);
                    let mut dst = rng.gen_range(0..nodes - 1);
                    if dst >= src {
                        dst += 1;
                    }
                    if used.insert((src, dst)) {
                        out.push((src, dst, start(rng)));
                    }
                }
            }
            PairRule::Cbrgen => {
                'nodes: for i in 0..nodes {
                    let x = 100.0 * rng.gen::<f64>();
                    for (step, threshold) in [(1, 50.0), (2, 75.0)] {
                        if x < threshold {
                            continue 'nodes;
                        }
                        let dst = (i + step) % nodes;
                        if dst != i {
                            out.push((i, dst, start(rng)));
                        }
                        if out.len() == want {
                            break 'nodes;
                        }
                    }
                }
            }
        }
        out
    }

    /// The flows of generator `g` for a run with `seed` and `nodes` nodes.
    pub fn flows(&self, g: usize, seed: u64, nodes: u32) -> Vec<FlowSpec> {
        let mut rng = stream(seed, self.stream.unwrap_or(g as u64), Component::TrafficGen);
        let prefix = self.name.clone().unwrap_or_else(|| format!("cbrgen{g}"));
        self.draw(nodes, &mut rng)
            .into_iter()
            .enumerate()
            .map(|(k, (src, dst, start_s))| {
                let mut f = FlowSpec {
                    name: None,
                    kind: FlowKind::Cbr,
                    src,
                    dst,
                    start_s,
                    stop_s: None,
                    transport: None,
                    tcp: None,
                    packet_size_bytes: Some(self.packet_size_bytes),
                    udp_header: None,
                    interval_s: None,
                    rate_kbps: None,
                    jitter_s: 0.0,
                    max_packets: None,
                    file_bytes: None,
                    port: None,
                };
                match self.transport {
                    GenTransport::Cbr => {
                        let interval_s = 1.0 / self.rate_pkts_per_s.expect("validated");
                        f.name = Some(format!("{prefix}.cbr_({k})"));
                        f.interval_s = Some(interval_s);
                        f.jitter_s = if self.random { interval_s / 2.0 } else { 0.0 };
                        f.max_packets = Some(self.max_packets.unwrap_or(CBRGEN_MAX_PACKETS));
                    }
                    GenTransport::Tcp => {
                        f.name = Some(format!("{prefix}.ftp_({k})"));
                        f.kind = FlowKind::Ftp;
                        f.packet_size_bytes = None;
                        f.transport =
                            Some(self.tcp_variant.clone().unwrap_or_else(|| "tahoe".into()));
                        let mut tcp = Map::new();
                        tcp.insert(
                            "window_pkts".into(),
                            self.window_pkts.unwrap_or(CBRGEN_TCP_WINDOW_PKTS).into(),
                        );
                        tcp.insert("mss_bytes".into(), self.packet_size_bytes.into());
                        f.tcp = Some(Value::Object(tcp));
                    }
                }
                f
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn spec(toml: &str) -> CbrgenSpec {
        toml::from_str(toml).unwrap()
    }

    fn scenario(extra: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml_str(&format!(
            "seed = 7\nduration_s = 200\n[nodes]\ncount = 20\n[radio]\n{extra}"
        ))
    }

    #[test]
    fn random_pairs_are_distinct_counted_and_in_range() {
        let s = spec("connections = 300\nrate_pkts_per_s = 4\nstart_s = [10, 20]");
        s.validate("g", 20, 200.0).unwrap();
        for seed in 1..20 {
            let d = s.draw(20, &mut stream(seed, 0, Component::TrafficGen));
            assert_eq!(d.len(), 300);
            let pairs: BTreeSet<(u32, u32)> = d.iter().map(|&(a, b, _)| (a, b)).collect();
            assert_eq!(pairs.len(), 300, "distinct ordered pairs");
            for &(a, b, t) in &d {
                assert!(a != b && a < 20 && b < 20, "{a} -> {b}");
                assert!((10.0..20.0).contains(&t), "{t}");
            }
        }
        // Every ordered pair of 3 nodes: all 6 drawn, none twice.
        let all = spec("connections = 6\nrate_pkts_per_s = 1");
        let d = all.draw(3, &mut stream(1, 0, Component::TrafficGen));
        let pairs: BTreeSet<(u32, u32)> = d.iter().map(|&(a, b, _)| (a, b)).collect();
        assert_eq!(pairs.len(), 6);
    }

    #[test]
    fn cbrgen_rule_connects_neighbours_by_index() {
        let s = spec("connections = 40\npairs = \"cbrgen\"\nrate_pkts_per_s = 4");
        let mut seen_two = false;
        for seed in 1..30 {
            let d = s.draw(20, &mut stream(seed, 0, Component::TrafficGen));
            assert!(d.len() <= 40);
            let mut per_src = std::collections::BTreeMap::<u32, Vec<u32>>::new();
            for &(a, b, t) in &d {
                per_src.entry(a).or_default().push(b);
                assert!((0.0..180.0).contains(&t));
            }
            for (a, dsts) in per_src {
                // i -> i+1, and i -> i+2 only after i -> i+1 (x >= 75 implies x >= 50).
                assert_eq!(dsts[0], (a + 1) % 20);
                if dsts.len() == 2 {
                    assert_eq!(dsts[1], (a + 2) % 20);
                    seen_two = true;
                }
                assert!(dsts.len() <= 2);
            }
        }
        assert!(seen_two);
        // `connections` caps the count, as cbrgen's `mc`.
        let few = spec("connections = 3\npairs = \"cbrgen\"\nrate_pkts_per_s = 4");
        assert_eq!(
            few.draw(20, &mut stream(1, 0, Component::TrafficGen)).len(),
            3
        );
    }

    #[test]
    fn same_seed_same_flows_other_keys_do_not_matter() {
        let gen = "[traffic]\n[[traffic.cbrgen]]\nconnections = 10\nrate_pkts_per_s = 4\nstart_s = [0, 100]\n";
        let flows = |s: &Scenario| {
            s.flows
                .iter()
                .map(|f| (f.name.clone(), f.src, f.dst, f.start_s))
                .collect::<Vec<_>>()
        };
        let a = scenario(gen).unwrap();
        assert_eq!(a.flows.len(), 10);
        assert_eq!(flows(&a), flows(&scenario(gen).unwrap()));
        // Unrelated keys (routing, MAC, duration, hand-written flows before) leave the draw alone.
        let b = Scenario::from_toml_str(&format!(
            "seed = 7\nduration_s = 150\n[nodes]\ncount = 20\n[radio]\n[routing]\nprotocol = \"dsr\"\n\
             [[flows]]\nkind = \"ftp\"\nsrc = 0\ndst = 1\n{gen}"
        ))
        .unwrap();
        assert_eq!(flows(&a)[..], flows(&b)[1..]);
        // Another seed, another draw.
        let c = Scenario::from_toml_str(&format!(
            "seed = 8\nduration_s = 200\n[nodes]\ncount = 20\n[radio]\n{gen}"
        ))
        .unwrap();
        assert_ne!(flows(&a), flows(&c));
        // Names, CBR settings as cbrgen writes them.
        let f = &a.flows[3];
        assert_eq!(f.name.as_deref(), Some("cbrgen0.cbr_(3)"));
        assert_eq!(
            (f.interval_s, f.jitter_s, f.max_packets, f.packet_size_bytes),
            (Some(0.25), 0.125, Some(10_000), Some(512))
        );
    }

    #[test]
    fn normalised_scenario_draws_again_from_its_seed() {
        let gen = "[traffic]\n[[traffic.cbrgen]]\nconnections = 4\ntransport = \"tcp\"\nstart_s = [0, 50]\n";
        let a = scenario(gen).unwrap();
        let json: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
        assert_eq!(json["traffic"]["flows_generated"], 4);
        let again = Scenario::from_value(json.clone()).unwrap();
        assert_eq!(
            again.to_json(),
            a.to_json(),
            "normalising twice adds nothing"
        );
        let mut other = json;
        other["seed"] = 8.into();
        let b = Scenario::from_value(other).unwrap();
        assert_eq!(b.flows.len(), 4);
        let c = Scenario::from_toml_str(&format!(
            "seed = 8\nduration_s = 200\n[nodes]\ncount = 20\n[radio]\n{gen}"
        ))
        .unwrap();
        assert_eq!(
            b.to_json(),
            c.to_json(),
            "a changed seed draws the new seed's flows"
        );
        let f = &a.flows[0];
        assert_eq!(f.kind, FlowKind::Ftp);
        assert_eq!(f.transport.as_deref(), Some("tahoe"));
        assert_eq!(f.tcp_config().window_pkts, 32);
    }

    #[test]
    fn bad_keys_are_one_line_errors() {
        let cases = [
            ("connections = 0\nrate_pkts_per_s = 4", "traffic.cbrgen[0].connections: 0 is out of range (allowed: 1..=380"),
            ("connections = 381\nrate_pkts_per_s = 4", "traffic.cbrgen[0].connections: 381 is out of range"),
            ("connections = 41\npairs = \"cbrgen\"\nrate_pkts_per_s = 4", "(allowed: 1..=40, the cbrgen pairs"),
            ("connections = 2", "traffic.cbrgen[0].rate_pkts_per_s: required key is missing"),
            ("connections = 2\nrate_pkts_per_s = -1", "traffic.cbrgen[0].rate_pkts_per_s: -1 is out of range"),
            ("connections = 2\nrate_pkts_per_s = 1\nstart_s = [0, 300]", "traffic.cbrgen[0].start_s: [0, 300] is out of range (allowed: [min, max] with 0 <= min <= max <= duration_s = 200"),
            ("connections = 2\nrate_pkts_per_s = 1\nstart_s = [5, 1]", "start_s: [5, 1] is out of range"),
            ("connections = 2\npairs = \"all\"\nrate_pkts_per_s = 1", "traffic.cbrgen[0].pairs: \"all\" is not allowed (allowed: \"random\" or \"cbrgen\")"),
            ("connections = 2\ntransport = \"udp\"\nrate_pkts_per_s = 1", "traffic.cbrgen[0].transport: \"udp\" is not allowed (allowed: \"cbr\" or \"tcp\")"),
            ("connections = 2\ntransport = \"tcp\"\nrate_pkts_per_s = 1", "traffic.cbrgen[0].rate_pkts_per_s: applies to transport = \"cbr\" only"),
            ("connections = 2\nrate_pkts_per_s = 1\nwindow_pkts = 8", "traffic.cbrgen[0].window_pkts: applies to transport = \"tcp\" only"),
            ("connections = 2\ntransport = \"tcp\"\ntcp_variant = \"cubic\"", "traffic.cbrgen[0].tcp_variant: \"cubic\" is not allowed (allowed: tahoe, reno"),
            ("connections = 2\nrate_pkts_per_s = 1\nspeed = 3", "traffic.cbrgen[0].speed: unknown key (allowed here: connections, pairs,"),
        ];
        for (keys, want) in cases {
            let e = Scenario::from_toml_str(&format!(
                "duration_s = 200\n[nodes]\ncount = 20\n[traffic]\n[[traffic.cbrgen]]\n{keys}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{keys}: {e}");
        }
    }
}
