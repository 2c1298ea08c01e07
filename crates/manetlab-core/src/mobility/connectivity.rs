//! Connectivity reports over trajectories: link changes, how long a pair is
//! connected (multi-hop), and its shortest-path hop count over time.
//!
//! Two nodes are linked when their distance is ≤ `range_m` (a unit-disk graph,
//! like ns-2 setdest's GOD with `RANGE = 250 m`); paths are shortest in hops.
//!
//! [`ConnectivityTimeline::exact`] is exact: between two leg boundaries the
//! relative motion of a pair is linear, so its squared distance is a quadratic
//! in time whose roots are the instants the link goes up or down. The graph is
//! then constant between consecutive link changes, which makes connected time
//! and hop counts exact time integrals. Link-change instants are rounded to the
//! nanosecond. The `sampled_*` functions evaluate the graph every `step`
//! ([`DEFAULT_SAMPLE_STEP`] = 0.1 s) instead; they miss changes shorter than a
//! step and exist mostly to cross-check the exact version.

use std::collections::VecDeque;

use super::{Position, Trajectory};
use crate::faults::{FaultEvent, FaultState};
use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime};

/// Default sampling step of the `sampled_*` reports: 0.1 s.
pub const DEFAULT_SAMPLE_STEP: SimDuration = SimDuration(100_000_000);

/// A pair going in (`up`) or out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkChange {
    pub time: SimTime,
    /// The lower node id of the pair.
    pub a: NodeId,
    /// The higher node id of the pair.
    pub b: NodeId,
    pub up: bool,
}

/// Connectivity of one pair over `[0, until)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairConnectivity {
    /// Fraction of time a (multi-hop) path exists.
    pub connected_fraction: f64,
    /// Time-average shortest-path hop count over the time a path exists;
    /// `None` if the pair is never connected.
    pub mean_hops: Option<f64>,
}

/// The unit-disk graph of a set of trajectories over `[0, until)`, as its state
/// at time 0 and the sorted list of every change.
#[derive(Clone, Debug)]
pub struct ConnectivityTimeline {
    n: usize,
    until: SimTime,
    initial: Vec<bool>,
    changes: Vec<LinkChange>,
}

/// Whether `p` and `q` are linked: at most `range_m` apart (the unit-disk test of
/// every connectivity report, and of random link failures' scope `"links"`).
pub fn in_range(p: Position, q: Position, range_m: f64) -> bool {
    let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
    dx * dx + dy * dy <= range_m * range_m
}

impl ConnectivityTimeline {
    /// Compute every link change of every pair in `(0, until)` exactly.
    /// Cost: O(n² · legs).
    pub fn exact(
        trajectories: &[Trajectory],
        range_m: f64,
        until: SimTime,
    ) -> ConnectivityTimeline {
        let n = trajectories.len();
        let mut initial = vec![false; n * n];
        let mut changes = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                let up0 = pair_changes(
                    &trajectories[i],
                    &trajectories[j],
                    range_m,
                    until,
                    |time, up| {
                        changes.push(LinkChange {
                            time,
                            a: NodeId(i as u32),
                            b: NodeId(j as u32),
                            up,
                        })
                    },
                );
                initial[i * n + j] = up0;
                initial[j * n + i] = up0;
            }
        }
        changes.sort_by_key(|c| (c.time, c.a, c.b));
        ConnectivityTimeline {
            n,
            until,
            initial,
            changes,
        }
    }

    /// Every link change in `(0, until)`, sorted by (time, a, b).
    pub fn changes(&self) -> &[LinkChange] {
        &self.changes
    }

    /// Number of link changes (ups plus downs).
    pub fn link_change_count(&self) -> usize {
        self.changes.len()
    }

    /// Whether `a` and `b` are within range at time 0.
    pub fn initially_linked(&self, a: NodeId, b: NodeId) -> bool {
        self.initial[a.index() * self.n + b.index()]
    }

    /// Exact connected fraction and mean hop count of `(a, b)` over `[0, until)`.
    pub fn pair(&self, a: NodeId, b: NodeId) -> PairConnectivity {
        self.pair_between(a, b, SimTime::ZERO, self.until)
    }

    /// Exact connected fraction and mean hop count of `(a, b)` over the window
    /// `[from, to)` (clamped to `[0, until)`), e.g. a flow's active time.
    /// An empty window gives fraction 0 and no hop count.
    pub fn pair_between(
        &self,
        a: NodeId,
        b: NodeId,
        from: SimTime,
        to: SimTime,
    ) -> PairConnectivity {
        self.pairs_between(&[(a, b, from, to)])[0]
    }

    /// [`Self::pair_between`] for many pairs in one pass over the changes.
    ///
    /// Each distinct source keeps its BFS distances to every node and updates
    /// them at each link change (an insertion can only shorten paths through
    /// the new link; a removal only lengthens paths of nodes that lose their
    /// last neighbour one hop closer to the source), so a change costs a few
    /// operations instead of a BFS per pair per change (the former BFS on an
    /// n×n matrix took 70-82 % of a 1000-node run's wall time).
    pub fn pairs_between(
        &self,
        pairs: &[(NodeId, NodeId, SimTime, SimTime)],
    ) -> Vec<PairConnectivity> {
        let n = self.n;
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        for i in 0..n {
            for j in i + 1..n {
                if self.initial[i * n + j] {
                    adj[i].push(j as u32);
                    adj[j].push(i as u32);
                }
            }
        }
        let mut sources: Vec<usize> = pairs.iter().map(|p| p.0.index()).collect();
        sources.sort_unstable();
        sources.dedup();
        let mut trees: Vec<Distances> = sources.iter().map(|&s| Distances::bfs(&adj, s)).collect();
        let tree_of: Vec<usize> = pairs
            .iter()
            .map(|p| sources.binary_search(&p.0.index()).expect("listed"))
            .collect();
        let windows: Vec<(SimTime, SimTime)> =
            pairs.iter().map(|p| (p.2, p.3.min(self.until))).collect();
        let horizon = windows.iter().map(|w| w.1).max().unwrap_or(SimTime::ZERO);
        let mut connected_ns = vec![0u128; pairs.len()];
        let mut hop_ns = vec![0u128; pairs.len()];
        let mut t = SimTime::ZERO;
        let mut k = 0;
        while t < horizon {
            let next = self.changes.get(k).map_or(horizon, |c| c.time.min(horizon));
            for (q, &(from, to)) in windows.iter().enumerate() {
                // The part of [t, next) inside the window.
                let (lo, hi) = (t.max(from), next.min(to));
                if hi > lo {
                    let (a, b) = (pairs[q].0.index(), pairs[q].1.index());
                    let d = if a == b { 0 } else { trees[tree_of[q]].dist[b] };
                    if d != UNREACHABLE {
                        let dt = (hi.0 - lo.0) as u128;
                        connected_ns[q] += dt;
                        hop_ns[q] += dt * d as u128;
                    }
                }
            }
            // Apply every change at `next` before measuring again.
            while let Some(c) = self.changes.get(k).filter(|c| c.time == next) {
                let (u, v) = (c.a.index(), c.b.index());
                if c.up {
                    adj[u].push(v as u32);
                    adj[v].push(u as u32);
                    for tr in &mut trees {
                        tr.link_up(&adj, u, v);
                    }
                } else {
                    remove(&mut adj[u], v);
                    remove(&mut adj[v], u);
                    for tr in &mut trees {
                        tr.link_down(&adj, u, v);
                    }
                }
                k += 1;
            }
            t = next;
        }
        windows
            .iter()
            .enumerate()
            .map(|(q, &(from, to))| {
                let total = to.0.saturating_sub(from.0).max(1) as f64;
                PairConnectivity {
                    connected_fraction: connected_ns[q] as f64 / total,
                    mean_hops: (connected_ns[q] > 0)
                        .then(|| hop_ns[q] as f64 / connected_ns[q] as f64),
                }
            })
            .collect()
    }

    /// The same graph with faults applied: a pair is linked when it is in range,
    /// both nodes are on and the link between them is not failed (see
    /// [`FaultState`]). Fault events at time 0 shape the initial state; events at
    /// or after `until` are ignored. Several causes changing at one instant
    /// (a node going off while its link moves out of range) give one change per
    /// pair whose effective state differs.
    pub fn with_faults(&self, faults: &[FaultEvent]) -> ConnectivityTimeline {
        let n = self.n;
        let mut geo = self.initial.clone();
        let mut state = FaultState::new();
        let mut fi = faults.iter().filter(|e| e.time < self.until).peekable();
        while let Some(e) = fi.next_if(|e| e.time == SimTime::ZERO) {
            state.apply(e);
        }
        let effective = |geo: &[bool], st: &FaultState, i: usize, j: usize| {
            geo[i * n + j] && st.can_communicate(NodeId(i as u32), NodeId(j as u32))
        };
        let mut eff: Vec<bool> = (0..n * n)
            .map(|k| effective(&geo, &state, k / n, k % n))
            .collect();
        let initial = eff.clone();
        let mut changes = Vec::new();
        let mut gi = self.changes.iter().peekable();
        let mut touched: Vec<(usize, usize)> = Vec::new();
        loop {
            let t = match (gi.peek(), fi.peek()) {
                (None, None) => break,
                (Some(g), None) => g.time,
                (None, Some(f)) => f.time,
                (Some(g), Some(f)) => g.time.min(f.time),
            };
            touched.clear();
            while let Some(c) = gi.next_if(|c| c.time == t) {
                geo[c.a.index() * n + c.b.index()] = c.up;
                geo[c.b.index() * n + c.a.index()] = c.up;
                touched.push((c.a.index(), c.b.index()));
            }
            while let Some(e) = fi.next_if(|e| e.time == t) {
                state.apply(e);
                match e.b {
                    Some(b) => touched.push((e.a.index(), b.index())),
                    None => touched.extend(
                        (0..n)
                            .filter(|&j| j != e.a.index())
                            .map(|j| (e.a.index().min(j), e.a.index().max(j))),
                    ),
                }
            }
            touched.sort_unstable();
            touched.dedup();
            for &(i, j) in &touched {
                let now = effective(&geo, &state, i, j);
                if now != eff[i * n + j] {
                    eff[i * n + j] = now;
                    eff[j * n + i] = now;
                    changes.push(LinkChange {
                        time: t,
                        a: NodeId(i as u32),
                        b: NodeId(j as u32),
                        up: now,
                    });
                }
            }
        }
        changes.sort_by_key(|c| (c.time, c.a, c.b));
        ConnectivityTimeline {
            n,
            until: self.until,
            initial,
            changes,
        }
    }
}

/// Walk the common leg boundaries of `p` and `q` up to `until`, calling
/// `emit(time, up)` at every range crossing; returns whether they start linked.
fn pair_changes(
    p: &Trajectory,
    q: &Trajectory,
    range_m: f64,
    until: SimTime,
    mut emit: impl FnMut(SimTime, bool),
) -> bool {
    let r2 = range_m * range_m;
    let up0 = in_range(
        p.position_at(SimTime::ZERO),
        q.position_at(SimTime::ZERO),
        range_m,
    );
    let mut linked = up0;
    let mut t0 = SimTime::ZERO;
    while t0 < until {
        let t1 = [p.next_change_after(t0), q.next_change_after(t0)]
            .into_iter()
            .flatten()
            .fold(until, SimTime::min);
        let (pp, pq) = (p.position_at(t0), q.position_at(t0));
        // Re-anchor at each boundary: a crossing that falls on the boundary
        // itself (within rounding) shows up here rather than as a root.
        let now = in_range(pp, pq, range_m);
        if now != linked {
            linked = now;
            if t0 > SimTime::ZERO {
                emit(t0, now);
            }
        }
        let (vp, vq) = (p.velocity_at(t0), q.velocity_at(t0));
        let d = [pq[0] - pp[0], pq[1] - pp[1]];
        let w = [vq[0] - vp[0], vq[1] - vp[1]];
        let a = w[0] * w[0] + w[1] * w[1];
        if a > 0.0 {
            let b = 2.0 * (d[0] * w[0] + d[1] * w[1]);
            let c = d[0] * d[0] + d[1] * d[1] - r2;
            let disc = b * b - 4.0 * a * c;
            if disc > 0.0 {
                // Numerically stable roots; the pair is in range between them.
                let s = disc.sqrt();
                let qq = -0.5 * (b + b.signum() * s);
                let (mut r1, mut r2) = (qq / a, c / qq);
                if r1 > r2 {
                    std::mem::swap(&mut r1, &mut r2);
                }
                for (root, up) in [(r1, true), (r2, false)] {
                    if root <= 0.0 {
                        continue;
                    }
                    let at = SimTime(t0.0.saturating_add((root * 1e9).round() as u64));
                    if at <= t0 || at >= t1 {
                        continue;
                    }
                    if linked != up {
                        linked = up;
                        emit(at, up);
                    }
                }
            }
        }
        t0 = t1;
    }
    up0
}

const UNREACHABLE: u32 = u32::MAX;

fn remove(list: &mut Vec<u32>, x: usize) {
    if let Some(i) = list.iter().position(|&y| y as usize == x) {
        list.swap_remove(i);
    }
}

/// Hop distances from one source to every node, kept exact while links come
/// and go (unit-weight dynamic shortest paths, after Ramalingam and Reps).
struct Distances {
    source: usize,
    dist: Vec<u32>,
    /// Scratch: nodes whose distance must be recomputed after a removal.
    affected: Vec<bool>,
    queue: VecDeque<usize>,
}

impl Distances {
    fn bfs(adj: &[Vec<u32>], source: usize) -> Distances {
        let mut dist = vec![UNREACHABLE; adj.len()];
        dist[source] = 0;
        let mut queue = VecDeque::from([source]);
        while let Some(u) = queue.pop_front() {
            for &v in &adj[u] {
                if dist[v as usize] == UNREACHABLE {
                    dist[v as usize] = dist[u] + 1;
                    queue.push_back(v as usize);
                }
            }
        }
        Distances {
            source,
            dist,
            affected: vec![false; adj.len()],
            queue,
        }
    }

    /// Link (u, v) came up (already in `adj`): paths through it may be shorter.
    fn link_up(&mut self, adj: &[Vec<u32>], u: usize, v: usize) {
        let (near, far) = if self.dist[u] <= self.dist[v] {
            (u, v)
        } else {
            (v, u)
        };
        if self.dist[near] == UNREACHABLE || self.dist[far] <= self.dist[near] + 1 {
            return;
        }
        // Only nodes whose distance drops are visited; FIFO order is by distance.
        self.dist[far] = self.dist[near] + 1;
        self.queue.clear();
        self.queue.push_back(far);
        while let Some(x) = self.queue.pop_front() {
            for &y in &adj[x] {
                if self.dist[y as usize] > self.dist[x] + 1 {
                    self.dist[y as usize] = self.dist[x] + 1;
                    self.queue.push_back(y as usize);
                }
            }
        }
    }

    fn has_parent(&self, adj: &[Vec<u32>], x: usize) -> bool {
        let d = self.dist[x];
        adj[x]
            .iter()
            .any(|&y| self.dist[y as usize].wrapping_add(1) == d && !self.affected[y as usize])
    }

    /// Link (u, v) went down (already gone from `adj`).
    fn link_down(&mut self, adj: &[Vec<u32>], u: usize, v: usize) {
        let (du, dv) = (self.dist[u], self.dist[v]);
        // Only a link between consecutive levels carries shortest paths.
        let child = if du != UNREACHABLE && dv == du + 1 {
            v
        } else if dv != UNREACHABLE && du == dv + 1 {
            u
        } else {
            return;
        };
        if child == self.source || self.has_parent(adj, child) {
            return;
        }
        // Nodes that lost every neighbour one level closer, level by level (FIFO:
        // a level is complete before the next one is examined).
        let mut affected = vec![child];
        self.affected[child] = true;
        let mut i = 0;
        while i < affected.len() {
            let x = affected[i];
            i += 1;
            for &y in &adj[x] {
                let y = y as usize;
                if !self.affected[y] && self.dist[y] == self.dist[x] + 1 && !self.has_parent(adj, y)
                {
                    self.affected[y] = true;
                    affected.push(y);
                }
            }
        }
        // Their new distances: from unaffected neighbours, then among themselves
        // (a Dijkstra over the affected nodes with unit weights).
        let mut heap = std::collections::BinaryHeap::new();
        for &x in &affected {
            let best = adj[x]
                .iter()
                .filter(|&&y| !self.affected[y as usize] && self.dist[y as usize] != UNREACHABLE)
                .map(|&y| self.dist[y as usize] + 1)
                .min()
                .unwrap_or(UNREACHABLE);
            self.dist[x] = best;
            if best != UNREACHABLE {
                heap.push(std::cmp::Reverse((best, x)));
            }
        }
        while let Some(std::cmp::Reverse((d, x))) = heap.pop() {
            if d != self.dist[x] {
                continue;
            }
            for &y in &adj[x] {
                let y = y as usize;
                if self.affected[y] && self.dist[y] > d + 1 {
                    self.dist[y] = d + 1;
                    heap.push(std::cmp::Reverse((d + 1, y)));
                }
            }
        }
        for &x in &affected {
            self.affected[x] = false;
        }
    }
}

/// Shortest-path hop count from `a` to `b` in an adjacency matrix (BFS).
fn hop_count_adj(adj: &[bool], n: usize, a: usize, b: usize) -> Option<u32> {
    if a == b {
        return Some(0);
    }
    let mut dist = vec![u32::MAX; n];
    let mut queue = VecDeque::from([a]);
    dist[a] = 0;
    while let Some(u) = queue.pop_front() {
        for v in 0..n {
            if adj[u * n + v] && dist[v] == u32::MAX {
                dist[v] = dist[u] + 1;
                if v == b {
                    return Some(dist[v]);
                }
                queue.push_back(v);
            }
        }
    }
    None
}

/// Shortest-path hop count between `a` and `b` when nodes stand at `positions_m`.
pub fn hop_count(positions_m: &[Position], range_m: f64, a: NodeId, b: NodeId) -> Option<u32> {
    let n = positions_m.len();
    let mut adj = vec![false; n * n];
    for i in 0..n {
        for j in 0..n {
            adj[i * n + j] = i != j && in_range(positions_m[i], positions_m[j], range_m);
        }
    }
    hop_count_adj(&adj, n, a.index(), b.index())
}

fn sample_times(until: SimTime, step: SimDuration) -> impl Iterator<Item = SimTime> {
    let step = step.0.max(1);
    (0..until.0.div_ceil(step)).map(move |k| SimTime(k * step))
}

/// Link changes seen by sampling the graph every `step` over `[0, until)`.
pub fn sampled_link_changes(
    trajectories: &[Trajectory],
    range_m: f64,
    until: SimTime,
    step: SimDuration,
) -> usize {
    let n = trajectories.len();
    let mut prev: Option<Vec<bool>> = None;
    let mut count = 0;
    for t in sample_times(until, step) {
        let pos: Vec<Position> = trajectories.iter().map(|tr| tr.position_at(t)).collect();
        let now: Vec<bool> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| in_range(pos[i], pos[j], range_m))
            .collect();
        if let Some(p) = &prev {
            count += p.iter().zip(&now).filter(|(x, y)| x != y).count();
        }
        prev = Some(now);
    }
    count
}

/// Connected fraction and mean hop count of `(a, b)` from samples every `step` in `[0, until)`.
pub fn sampled_pair(
    trajectories: &[Trajectory],
    range_m: f64,
    a: NodeId,
    b: NodeId,
    until: SimTime,
    step: SimDuration,
) -> PairConnectivity {
    let (mut samples, mut connected, mut hops) = (0u64, 0u64, 0u64);
    for t in sample_times(until, step) {
        let pos: Vec<Position> = trajectories.iter().map(|tr| tr.position_at(t)).collect();
        samples += 1;
        if let Some(h) = hop_count(&pos, range_m, a, b) {
            connected += 1;
            hops += h as u64;
        }
    }
    PairConnectivity {
        connected_fraction: connected as f64 / samples.max(1) as f64,
        mean_hops: (connected > 0).then(|| hops as f64 / connected as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mobility::{scripted_trajectory, SetDest};

    fn s(x: f64) -> SimTime {
        SimTime::from_secs_f64(x)
    }

    #[test]
    fn a_node_passing_by_makes_one_up_and_one_down_at_the_analytic_times() {
        // Node 1 runs along y = 100 from x = -500 to +500 at 10 m/s; node 0 sits at
        // the origin; range 250 m: in range while |x| ≤ √(250² − 100²) = 229.13 m.
        let still = Trajectory::stationary([0.0, 0.0]);
        let runner = scripted_trajectory(
            [-500.0, 100.0],
            &[SetDest {
                time_s: 0.0,
                dest_m: [500.0, 100.0],
                speed_mps: 10.0,
            }],
            "m",
        )
        .unwrap();
        let tl = ConnectivityTimeline::exact(&[still, runner], 250.0, s(200.0));
        let half = (250.0f64 * 250.0 - 100.0 * 100.0).sqrt();
        let c = tl.changes();
        assert_eq!(c.len(), 2);
        assert!(c[0].up && !c[1].up);
        assert!((c[0].time.as_secs_f64() - (500.0 - half) / 10.0).abs() < 1e-8);
        assert!((c[1].time.as_secs_f64() - (500.0 + half) / 10.0).abs() < 1e-8);
        let p = tl.pair(NodeId(0), NodeId(1));
        assert!((p.connected_fraction - 2.0 * half / 10.0 / 200.0).abs() < 1e-9);
        assert_eq!(p.mean_hops, Some(1.0));
    }

    #[test]
    fn incremental_distances_equal_a_bfs_after_every_change() {
        // Random link flips on 40 nodes: after each, every source's maintained
        // distances must equal a fresh BFS.
        use rand::{Rng, SeedableRng};
        let n = 40;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut linked = vec![false; n * n];
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        for i in 0..n {
            for j in i + 1..n {
                if rng.gen_bool(0.08) {
                    linked[i * n + j] = true;
                    adj[i].push(j as u32);
                    adj[j].push(i as u32);
                }
            }
        }
        let mut trees: Vec<Distances> =
            (0..n).step_by(7).map(|s| Distances::bfs(&adj, s)).collect();
        for _ in 0..3000 {
            let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
            let (i, j) = (i.min(j), i.max(j));
            if i == j {
                continue;
            }
            let up = !linked[i * n + j];
            linked[i * n + j] = up;
            if up {
                adj[i].push(j as u32);
                adj[j].push(i as u32);
                trees.iter_mut().for_each(|t| t.link_up(&adj, i, j));
            } else {
                remove(&mut adj[i], j);
                remove(&mut adj[j], i);
                trees.iter_mut().for_each(|t| t.link_down(&adj, i, j));
            }
            for t in &trees {
                assert_eq!(
                    t.dist,
                    Distances::bfs(&adj, t.source).dist,
                    "source {}",
                    t.source
                );
            }
        }
    }

    #[test]
    fn many_pairs_in_one_pass_equal_the_matrix_bfs() {
        // 30 random-waypoint nodes, many link changes: each pair's integral from
        // the incremental pass equals a BFS on the n×n matrix per interval.
        use crate::mobility::{Area, RandomWaypoint};
        let until = s(200.0);
        let tr = RandomWaypoint::ns2(Area::new(800.0, 800.0), 20.0, 0.0)
            .trajectories(5, 30, until)
            .unwrap();
        let tl = ConnectivityTimeline::exact(&tr, 250.0, until);
        assert!(tl.link_change_count() > 200, "{}", tl.link_change_count());
        let pairs: Vec<_> = [
            (0, 29, 0.0, 200.0),
            (3, 17, 12.5, 150.0),
            (3, 4, 0.0, 300.0),
            (8, 8, 1.0, 2.0),
            (21, 2, 50.0, 60.0),
        ]
        .iter()
        .map(|&(a, b, f, t)| (NodeId(a), NodeId(b), s(f), s(t)))
        .collect();
        let fast = tl.pairs_between(&pairs);
        for (p, got) in pairs.iter().zip(&fast) {
            let want = matrix_pair_between(&tl, p.0, p.1, p.2, p.3);
            assert_eq!(got.connected_fraction, want.connected_fraction, "{p:?}");
            assert_eq!(got.mean_hops, want.mean_hops, "{p:?}");
        }
        assert!(fast[0].mean_hops.is_some_and(|h| h > 1.0), "{:?}", fast[0]);
    }

    /// The former report: a BFS on the adjacency matrix for every interval.
    fn matrix_pair_between(
        tl: &ConnectivityTimeline,
        a: NodeId,
        b: NodeId,
        from: SimTime,
        to: SimTime,
    ) -> PairConnectivity {
        let n = tl.n;
        let to = to.min(tl.until);
        let mut adj = tl.initial.clone();
        let (mut connected_ns, mut hop_ns) = (0u128, 0u128);
        let (mut t, mut k) = (SimTime::ZERO, 0);
        while t < to {
            let next = tl.changes.get(k).map_or(to, |c| c.time.min(to));
            let lo = t.max(from);
            if next > lo {
                if let Some(h) = hop_count_adj(&adj, n, a.index(), b.index()) {
                    connected_ns += (next.0 - lo.0) as u128;
                    hop_ns += (next.0 - lo.0) as u128 * h as u128;
                }
            }
            while let Some(c) = tl.changes.get(k).filter(|c| c.time == next) {
                adj[c.a.index() * n + c.b.index()] = c.up;
                adj[c.b.index() * n + c.a.index()] = c.up;
                k += 1;
            }
            t = next;
        }
        let total = to.0.saturating_sub(from.0).max(1) as f64;
        PairConnectivity {
            connected_fraction: connected_ns as f64 / total,
            mean_hops: (connected_ns > 0).then(|| hop_ns as f64 / connected_ns as f64),
        }
    }

    #[test]
    fn relay_gives_two_hops() {
        let t = [
            Trajectory::stationary([0.0, 0.0]),
            Trajectory::stationary([200.0, 0.0]),
            Trajectory::stationary([400.0, 0.0]),
        ];
        let tl = ConnectivityTimeline::exact(&t, 250.0, s(10.0));
        assert_eq!(tl.link_change_count(), 0);
        let p = tl.pair(NodeId(0), NodeId(2));
        assert_eq!(p.connected_fraction, 1.0);
        assert_eq!(p.mean_hops, Some(2.0));
        assert_eq!(
            sampled_pair(
                &t,
                250.0,
                NodeId(0),
                NodeId(2),
                s(10.0),
                DEFAULT_SAMPLE_STEP
            ),
            p
        );
        assert_eq!(
            hop_count(&[[0.0, 0.0], [300.0, 0.0]], 250.0, NodeId(0), NodeId(1)),
            None
        );
    }

    #[test]
    fn stopping_exactly_at_the_range_boundary_is_not_a_flap() {
        let still = Trajectory::stationary([0.0, 0.0]);
        let mover = scripted_trajectory(
            [400.0, 0.0],
            &[SetDest {
                time_s: 1.0,
                dest_m: [250.0, 0.0],
                speed_mps: 15.0,
            }],
            "m",
        )
        .unwrap();
        let tl = ConnectivityTimeline::exact(&[still, mover], 250.0, s(100.0));
        assert_eq!(tl.changes().len(), 1, "{:?}", tl.changes());
        assert!(tl.changes()[0].up);
        assert_eq!(tl.changes()[0].time, s(11.0));
    }

    #[test]
    fn faults_cut_links_and_windows_restrict_the_average() {
        use crate::faults::FaultKind;
        // Chain 0 - 1 - 2, 200 m apart, range 250 m; node 1 off from 2 s to 6 s,
        // link (0, 1) down from 8 s to 9 s. Run 10 s.
        let t = [
            Trajectory::stationary([0.0, 0.0]),
            Trajectory::stationary([200.0, 0.0]),
            Trajectory::stationary([400.0, 0.0]),
        ];
        let geo = ConnectivityTimeline::exact(&t, 250.0, s(10.0));
        let faults = [
            FaultEvent::node(s(2.0), FaultKind::NodeOff, 1),
            FaultEvent::node(s(6.0), FaultKind::NodeOn, 1),
            FaultEvent::link(s(8.0), FaultKind::LinkDown, 1, 0),
            FaultEvent::link(s(9.0), FaultKind::LinkUp, 0, 1),
            FaultEvent::node(s(12.0), FaultKind::NodeOff, 0), // after the run: ignored
        ];
        let tl = geo.with_faults(&faults);
        // Off and on each change two links; the outage one link twice.
        assert_eq!(tl.link_change_count(), 6, "{:?}", tl.changes());
        let p = tl.pair(NodeId(0), NodeId(2));
        assert!((p.connected_fraction - 0.5).abs() < 1e-12, "{p:?}");
        assert_eq!(p.mean_hops, Some(2.0));
        let w = tl.pair_between(NodeId(0), NodeId(2), s(1.0), s(3.0));
        assert!((w.connected_fraction - 0.5).abs() < 1e-12, "{w:?}");
        assert_eq!(
            tl.pair_between(NodeId(1), NodeId(2), s(3.0), s(5.0))
                .connected_fraction,
            0.0
        );
        // A fault at time 0 shapes the initial state.
        let tl0 = geo.with_faults(&[FaultEvent::node(SimTime::ZERO, FaultKind::NodeOff, 2)]);
        assert!(!tl0.initially_linked(NodeId(1), NodeId(2)));
        assert_eq!(tl0.link_change_count(), 0);
    }
}
