//! The shared wireless channel: who hears a transmission, how strongly, and when.
//!
//! Receivers are found with a uniform spatial grid whose cell is the
//! carrier-sense range, so a transmission costs O(neighbours): only the 3×3 cells
//! around the sender are scanned. With static positions the neighbour list of each
//! sender (distance, propagation delay, mean power) is computed once and cached;
//! `set_positions` drops the cache when nodes move.
//!
//! Signals whose mean power is below CSThresh are not delivered at all (ns-2
//! `WirelessPhy::sendUp` discards them). With shadowing, the cutoff distance is
//! where the mean power is 3σ below CSThresh, so only draws more than 3σ above
//! the mean are cut off (documented in docs/wireless.md).

use super::RadioParams;
use super::SPEED_OF_LIGHT_MPS;
use crate::ids::NodeId;
use crate::sim::SimDuration;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug)]
pub struct Neighbor {
    pub node: NodeId,
    pub distance_m: f64,
    pub delay: SimDuration,
    pub mean_power_w: f64,
}

pub struct Channel {
    pub params: RadioParams,
    /// Beyond this distance a signal is never sensed.
    cutoff_m: f64,
    positions: Vec<[f64; 2]>,
    grid: HashMap<(i64, i64), Vec<NodeId>>,
    cache: Vec<Option<Vec<Neighbor>>>,
}

impl Channel {
    pub fn new(params: RadioParams, positions: Vec<[f64; 2]>) -> Self {
        let widen = match params.propagation {
            super::Propagation::Shadowing { sigma_db, .. } => 10f64.powf(-3.0 * sigma_db / 10.0),
            _ => 1.0,
        };
        let cutoff_m = params.propagation.range_m(&params.antennas, params.tx_power_w, params.cs_threshold_w * widen);
        let mut ch = Channel { params, cutoff_m, positions: Vec::new(), grid: HashMap::new(), cache: Vec::new() };
        ch.set_positions(positions);
        ch
    }

    /// Largest distance at which a transmission is sensed (the grid cell size).
    pub fn cutoff_m(&self) -> f64 {
        self.cutoff_m
    }

    pub fn position(&self, n: NodeId) -> [f64; 2] {
        self.positions[n.index()]
    }

    fn cell(&self, p: [f64; 2]) -> (i64, i64) {
        ((p[0] / self.cutoff_m).floor() as i64, (p[1] / self.cutoff_m).floor() as i64)
    }

    /// Replace all positions (nodes moved): rebuilds the grid and drops the cache.
    pub fn set_positions(&mut self, positions: Vec<[f64; 2]>) {
        self.grid.clear();
        for (i, p) in positions.iter().enumerate() {
            let c = ((p[0] / self.cutoff_m).floor() as i64, (p[1] / self.cutoff_m).floor() as i64);
            self.grid.entry(c).or_default().push(NodeId(i as u32));
        }
        self.cache = vec![None; positions.len()];
        self.positions = positions;
    }

    /// Everyone who senses a transmission from `sender`, in node order.
    pub fn neighbors(&mut self, sender: NodeId) -> &[Neighbor] {
        if self.cache[sender.index()].is_none() {
            let list = self.compute_neighbors(sender);
            self.cache[sender.index()] = Some(list);
        }
        self.cache[sender.index()].as_deref().unwrap()
    }

    fn compute_neighbors(&self, sender: NodeId) -> Vec<Neighbor> {
        let p = self.positions[sender.index()];
        let (cx, cy) = self.cell(p);
        let mut out = Vec::new();
        for dx in -1..=1 {
            for dy in -1..=1 {
                let Some(nodes) = self.grid.get(&(cx + dx, cy + dy)) else { continue };
                for &n in nodes {
                    if n == sender {
                        continue;
                    }
                    let q = self.positions[n.index()];
                    let d = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt();
                    if d > self.cutoff_m {
                        continue;
                    }
                    let pw = self.params.propagation.mean_rx_w(&self.params.antennas, self.params.tx_power_w, d);
                    let delay = SimDuration::from_secs_f64(d / SPEED_OF_LIGHT_MPS);
                    out.push(Neighbor { node: n, distance_m: d, delay, mean_power_w: pw });
                }
            }
        }
        // Grid order depends on cell layout; sort so event order is a function of node ids.
        out.sort_by_key(|nb| nb.node);
        out
    }

    /// Nodes within decoding range of `n` (mean power ≥ RXThresh): the static-routing graph.
    pub fn range_graph(&mut self) -> Vec<Vec<NodeId>> {
        let rx = self.params.rx_threshold_w;
        (0..self.positions.len())
            .map(|i| self.neighbors(NodeId(i as u32)).iter().filter(|nb| nb.mean_power_w >= rx).map(|nb| nb.node).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_finds_exactly_the_nodes_within_carrier_sense_range() {
        // A 20 × 20 lattice, 100 m apart; compare with brute force.
        let pos: Vec<[f64; 2]> = (0..400).map(|i| [(i % 20) as f64 * 100.0, (i / 20) as f64 * 100.0]).collect();
        let mut ch = Channel::new(RadioParams::default(), pos.clone());
        let cut = ch.cutoff_m();
        assert!((cut - 550.0).abs() < 0.5, "two-ray CS range {cut}");
        for s in [0usize, 21, 210, 399] {
            let got: Vec<u32> = ch.neighbors(NodeId(s as u32)).iter().map(|n| n.node.0).collect();
            let want: Vec<u32> = (0..400u32)
                .filter(|&j| j as usize != s)
                .filter(|&j| {
                    let q = pos[j as usize];
                    ((pos[s][0] - q[0]).powi(2) + (pos[s][1] - q[1]).powi(2)).sqrt() <= cut
                })
                .collect();
            assert_eq!(got, want, "sender {s}");
        }
    }

    #[test]
    fn propagation_delay_is_distance_over_c() {
        let mut ch = Channel::new(RadioParams::default(), vec![[0.0, 0.0], [200.0, 0.0]]);
        let nb = ch.neighbors(NodeId(0))[0];
        assert_eq!(nb.delay.as_nanos(), (200.0 / SPEED_OF_LIGHT_MPS * 1e9_f64).round() as u64);
    }

    #[test]
    fn range_graph_uses_the_receive_threshold() {
        let mut ch = Channel::new(RadioParams::default(), vec![[0.0, 0.0], [249.0, 0.0], [498.0, 0.0], [749.5, 0.0]]);
        let g = ch.range_graph();
        assert_eq!(g[0], vec![NodeId(1)]);
        assert_eq!(g[1], vec![NodeId(0), NodeId(2)]);
        assert_eq!(g[2], vec![NodeId(1)], "251.5 m is out of range");
    }
}
