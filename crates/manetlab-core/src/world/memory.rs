//! What a run will need in memory, estimated before it starts, so a scenario
//! too large for the machine is refused with one line naming the key
//! (issue 34) instead of ending in an allocation failure (SIGABRT).
//!
//! The estimate is an upper-ish bound of the peak resident memory of a whole
//! `manetlab run` (the Python front included), calibrated on measured runs
//! (docs/python.md, "Memory"):
//!
//! * a base for the interpreter and libraries;
//! * per node: its stack (MAC, radio, queues, routing), its row of the results
//!   in the core, as JSON text and as Python objects (~8 KiB);
//! * with a radio, per ordered pair of nodes within carrier-sense range: the
//!   channel's neighbour lists and the range graph (~32 bytes). Counted from the
//!   placement for static nodes (exactly when cheap, else a bound by grid cells),
//!   from the area's density for moving ones (all pairs without an area);
//! * DSDV: a route per destination at every node (nodes²);
//! * the connectivity report (radio with mobility or faults): node-pair tables;
//! * random link failures: one generator per failing link, and every expected
//!   fault, logged in the results.
//!
//! Packets are not in it: the core keeps only those in flight (metrics.rs,
//! `PacketLedger`), which queues bound.

use crate::scenario::{RoutingProtocol, Scenario, ScenarioError};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The interpreter, the extension and the libraries a run loads.
const BASE_BYTES: u64 = 24 * MIB;
/// One node: its stack and its results row (core, JSON, Python).
const NODE_BYTES: u64 = 8 * KIB;
/// One ordered pair of nodes within carrier-sense range.
const PAIR_BYTES: u64 = 32;
/// One DSDV route (a destination at one node).
const DSDV_ROUTE_BYTES: u64 = 64;
/// One ordered pair in the connectivity report's tables.
const CONNECTIVITY_PAIR_BYTES: u64 = 4;
/// One link's random-failure generator.
const FAILURE_LINK_BYTES: u64 = 96;
/// One fault in the results (the log, its JSON, its Python dict).
const FAULT_BYTES: u64 = 512;
/// Exact pair counting when the grid bound is at most this many pairs.
const EXACT_PAIRS_UP_TO: u64 = 20_000_000;

/// A run's estimated peak memory and the part that dominates it.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    pub bytes: u64,
    /// The scenario key that drives the largest part (`nodes.count`, …).
    pub key: String,
    /// What needs the memory, for the message ("10000 radio nodes").
    pub what: String,
    /// Ordered node pairs within carrier-sense range (radio runs), as counted.
    pub radio_pairs: u64,
}

/// `bytes` as "3.2 GiB" / "480 MiB".
pub fn format_bytes(bytes: u64) -> String {
    if bytes >= GIB {
        format!("{:.1} GiB", bytes as f64 / GIB as f64)
    } else {
        format!("{} MiB", bytes.div_ceil(MIB))
    }
}

/// Estimate the peak memory of running `s` (a validated scenario).
pub fn estimate(s: &Scenario) -> MemoryEstimate {
    let n = s.nodes.count as u64;
    let radio = s.radio.is_some();
    let mobile = s.has_mobility();
    let all_pairs = n.saturating_mul(n.saturating_sub(1));
    let radio_pairs = if radio {
        radio_pairs(s, mobile).min(all_pairs)
    } else {
        0
    };
    let mut node_part = n
        .saturating_mul(NODE_BYTES)
        .saturating_add(radio_pairs.saturating_mul(PAIR_BYTES));
    let protocol = s.routing.as_ref().map(|r| r.protocol);
    if protocol == Some(RoutingProtocol::Dsdv) {
        node_part = node_part.saturating_add(n.saturating_mul(n).saturating_mul(DSDV_ROUTE_BYTES));
    }
    let connectivity = radio
        && (mobile || s.faults.is_some())
        && s.outputs.as_ref().and_then(|o| o.connectivity) != Some(false);
    if connectivity {
        node_part =
            node_part.saturating_add(n.saturating_mul(n).saturating_mul(CONNECTIVITY_PAIR_BYTES));
    }
    let (fault_part, fault_what) = faults(s);
    let total = BASE_BYTES
        .saturating_add(node_part)
        .saturating_add(fault_part);
    let nodes_what = format!(
        "{n} {}nodes{}",
        if radio { "radio " } else { "" },
        if protocol == Some(RoutingProtocol::Dsdv) {
            " with DSDV"
        } else {
            ""
        }
    );
    let (key, what) = if fault_part > node_part {
        (
            "faults.random_link_failures.rate_per_s".to_string(),
            fault_what,
        )
    } else {
        ("nodes.count".to_string(), nodes_what)
    };
    MemoryEstimate {
        bytes: total,
        key,
        what,
        radio_pairs,
    }
}

/// Refuse `s` when its estimate exceeds `limit_bytes`: one line naming the key.
pub fn check(s: &Scenario, limit_bytes: u64) -> Result<MemoryEstimate, ScenarioError> {
    let e = estimate(s);
    if e.bytes > limit_bytes {
        return Err(ScenarioError::new(
            e.key.clone(),
            format!(
                "{} need about {} of memory (allowed: at most {}, the memory limit: --max-memory or max_memory_bytes, default half of this machine's memory)",
                e.what,
                format_bytes(e.bytes),
                format_bytes(limit_bytes)
            ),
        ));
    }
    Ok(e)
}

/// Random link failures: generators and the expected faults (each link up for
/// Exp(λ), down for Exp(m): λ/(1+λm) failures per second, two events each).
fn faults(s: &Scenario) -> (u64, String) {
    let Some(p) = s
        .faults
        .as_ref()
        .and_then(|f| f.random_link_failures.as_ref())
    else {
        return (0, String::new());
    };
    let n = s.nodes.count as u64;
    let links = match &p.links {
        Some(l) => l.len() as u64,
        None => n.saturating_mul(n.saturating_sub(1)) / 2,
    };
    if p.rate_per_s <= 0.0 {
        return (0, String::new());
    }
    let active_s = (s.duration_s - p.start_s).max(0.0);
    let per_link = 2.0 * active_s * p.rate_per_s / (1.0 + p.rate_per_s * p.mean_duration_s) + 2.0;
    let events = per_link * links as f64;
    let bytes = (events * FAULT_BYTES as f64 + (links * FAILURE_LINK_BYTES) as f64)
        .min(u64::MAX as f64) as u64;
    let what = format!(
        "{} failures/s on {links} link{} over {} s make about {events:.2e} faults, which",
        p.rate_per_s,
        if links == 1 { "" } else { "s" },
        active_s
    );
    (bytes, what)
}

/// Ordered pairs of nodes within carrier-sense range of each other.
fn radio_pairs(s: &Scenario, mobile: bool) -> u64 {
    let n = s.nodes.count as u64;
    let all = n.saturating_mul(n.saturating_sub(1));
    let Some(r) = s.radio.as_ref() else { return 0 };
    let p = r.params();
    let widen = match p.propagation {
        crate::phy::Propagation::Shadowing { sigma_db, .. } => 10f64.powf(-3.0 * sigma_db / 10.0),
        _ => 1.0,
    };
    let cutoff = p
        .propagation
        .range_m(&p.antennas, p.tx_power_w, p.cs_threshold_w * widen);
    if !(cutoff.is_finite() && cutoff > 0.0) {
        return all;
    }
    if mobile {
        // Moving nodes meet others over the run: the density over the area,
        // doubled for clustering (random waypoint gathers nodes in the middle).
        return match s.area {
            Some(a) if a.width_m > 0.0 && a.height_m > 0.0 => {
                let share = (2.0 * std::f64::consts::PI * cutoff * cutoff
                    / (a.width_m * a.height_m))
                    .min(1.0);
                (all as f64 * share) as u64
            }
            _ => all,
        };
    }
    static_pairs(&s.placement_positions(), cutoff)
}

/// Ordered pairs within `cutoff` of each other: exactly when a grid of
/// cutoff/2 cells bounds them by at most [`EXACT_PAIRS_UP_TO`], else that bound
/// (within about a factor 2 of the truth for spread nodes; exact when they are
/// co-located).
fn static_pairs(pos: &[[f64; 2]], cutoff: f64) -> u64 {
    let cell = cutoff / 2.0;
    let key = |p: &[f64; 2]| ((p[0] / cell).floor() as i64, (p[1] / cell).floor() as i64);
    let mut cells: HashMap<(i64, i64), Vec<u32>, FastHash> = HashMap::default();
    for (i, p) in pos.iter().enumerate() {
        cells.entry(key(p)).or_default().push(i as u32);
    }
    let around = |(cx, cy): (i64, i64)| {
        (-2..=2).flat_map(move |dx| {
            (-2..=2).map(move |dy| (cx.saturating_add(dx), cy.saturating_add(dy)))
        })
    };
    let mut bound = 0u64;
    for (&c, members) in &cells {
        let near: u64 = around(c)
            .filter_map(|k| cells.get(&k))
            .map(|v| v.len() as u64)
            .sum();
        bound = bound.saturating_add(members.len() as u64 * (near - 1));
    }
    if bound > EXACT_PAIRS_UP_TO {
        return bound;
    }
    let c2 = cutoff * cutoff;
    let mut exact = 0u64;
    for (&c, members) in &cells {
        for k in around(c) {
            let Some(others) = cells.get(&k) else {
                continue;
            };
            for &i in members {
                let a = pos[i as usize];
                exact += others
                    .iter()
                    .filter(|&&j| {
                        let b = pos[j as usize];
                        let (dx, dy) = (a[0] - b[0], a[1] - b[1]);
                        j != i && dx * dx + dy * dy <= c2
                    })
                    .count() as u64;
            }
        }
    }
    exact
}

use std::collections::HashMap;

/// A multiplicative hash for grid cells (the default SipHash is many times slower here).
type FastHash = std::hash::BuildHasherDefault<CellHasher>;

#[derive(Default)]
struct CellHasher(u64);

impl std::hash::Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(json: &str) -> Scenario {
        Scenario::from_json_str(json).unwrap()
    }

    #[test]
    fn pairs_counted_from_the_placement() {
        // Default radio: carrier sense to ~550 m. A chain at 100 m: each node
        // senses 5 on each side (fewer at the ends).
        let s = scenario(
            r#"{"duration_s": 1, "nodes": {"count": 100, "placement": {"kind": "chain", "spacing_m": 100}}, "radio": {}}"#,
        );
        let e = estimate(&s);
        let want: u64 = (0..100i64)
            .map(|i| {
                (0..100i64)
                    .filter(|&j| j != i && (i - j).abs() <= 5)
                    .count() as u64
            })
            .sum();
        assert_eq!(e.radio_pairs, want);
        // Co-located: every ordered pair.
        let s = scenario(r#"{"duration_s": 1, "nodes": {"count": 3000}, "radio": {}}"#);
        assert_eq!(estimate(&s).radio_pairs, 3000 * 2999);
        // Wired only: no radio pairs.
        let s = scenario(
            r#"{"duration_s": 1, "nodes": {"count": 2}, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}]}"#,
        );
        assert_eq!(estimate(&s).radio_pairs, 0);
    }

    #[test]
    fn too_large_is_refused_naming_the_key() {
        let s = scenario(
            r#"{"duration_s": 1, "nodes": {"count": 1000000, "placement": {"kind": "chain", "spacing_m": 100}}, "radio": {}}"#,
        );
        let e = check(&s, 2 * GIB).unwrap_err();
        assert_eq!(e.path, "nodes.count");
        let msg = e.to_string();
        assert!(
            msg.starts_with("nodes.count: 1000000 radio nodes need about "),
            "{msg}"
        );
        assert!(msg.contains("(allowed: at most 2.0 GiB"), "{msg}");
        assert!(check(&s, 64 * GIB).is_ok());
        let s = scenario(
            r#"{"duration_s": 100, "nodes": {"count": 2}, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}],
            "faults": {"random_link_failures": {"rate_per_s": 1e9, "mean_duration_s": 1e-9}}}"#,
        );
        let e = check(&s, 64 * GIB).unwrap_err();
        assert_eq!(e.path, "faults.random_link_failures.rate_per_s");
        assert!(
            e.to_string()
                .contains("make about 1.00e11 faults, which need about"),
            "{e}"
        );
    }
}
