//! The shared wireless channel: who hears a transmission, how strongly, and when.
//!
//! Receivers are found with a uniform spatial grid, so a transmission costs
//! O(neighbours): only the 3×3 cells around the sender are scanned.
//!
//! **Static nodes** (no trajectory moves): the grid cell is the carrier-sense
//! range, and the neighbour list of each sender (distance, propagation delay,
//! mean power) is computed once and cached in arrival order, the order
//! transmissions use; `set_positions` drops the cache.
//!
//! **Moving nodes** ([`Channel::set_trajectories`]): positions come lazily from
//! each node's piecewise-linear [`Trajectory`]. Time is cut into refresh epochs
//! of length Δ; at the first query in epoch k the grid is rebuilt from the
//! positions at k·Δ, with cells widened to `cutoff + 2·vmax·Δ` (vmax = the
//! fastest leg of any node, plus any jump). Two nodes within the cutoff at a time
//! t in epoch k were within `cutoff + 2·vmax·Δ` at k·Δ, so the 3×3 cells around
//! the sender's epoch position hold every receiver. At a sender's first query in
//! the epoch, the nodes of those cells within `cutoff + 2·vmax·Δ` of it (at k·Δ)
//! become its candidate list, nearest first; each query then decides by the exact
//! distance at `now` (positions from per-node [`LegCache`] records, read through
//! per-list copies while all of them hold; two candidates at a time) and sorts the
//! receivers by node id, or by (delay, node id) — arrival order, an insertion
//! sort over the nearly ordered candidates. Grid and candidate lists only narrow
//! the candidates: the result is a pure function of (trajectories,
//! sender, now), whatever Δ is and in whatever order queries come. Δ = 1 s, or
//! less when nodes are so fast that 2·vmax·Δ would exceed the cutoff (then
//! Δ = cutoff / (2·vmax)), so cells stay within twice the cutoff. An epoch in
//! which no node moves uses the static path (cached lists) for that epoch.
//!
//! Signals whose mean power is below CSThresh are not delivered at all (ns-2
//! `WirelessPhy::sendUp` discards them). With shadowing, the cutoff distance is
//! where the mean power is 3σ below CSThresh, so only draws more than 3σ above
//! the mean are cut off (documented in docs/wireless.md).

use super::propagation::{MeanRx, MeanRxVisitor};
use super::RadioParams;
use super::SPEED_OF_LIGHT_MPS;
use crate::ids::NodeId;
use crate::mobility::trajectory::div2;
use crate::mobility::{LegCache, LegPiece, Trajectory};
use crate::sim::{SimDuration, SimTime};
use std::mem::MaybeUninit;

/// Default refresh interval Δ of the moving-node grid: 1 s.
pub const DEFAULT_REFRESH: SimDuration = SimDuration(1_000_000_000);

/// One receiver of a transmission: who, after what propagation delay, at
/// what mean power.
#[derive(Clone, Copy, Debug)]
pub struct Neighbor {
    pub node: NodeId,
    pub delay: SimDuration,
    pub mean_power_w: f64,
}

/// Moving-node state: the trajectories and the current refresh epoch.
struct Motion {
    trajectories: Vec<Trajectory>,
    refresh: SimDuration,
    /// The epoch whose grid is built (`None` before the first query).
    epoch: Option<u64>,
    /// No node moves during the current epoch: cached lists are exact.
    epoch_still: bool,
    /// The list returned by the last moving-epoch query.
    scratch: Vec<Neighbor>,
    /// The candidates' positions of the last moving-epoch query.
    scratch_pos: Vec<[f64; 2]>,
    /// Per node, the leg in force at its last query (queries come mostly in time order).
    legs: Vec<LegCache>,
    /// Counts grid rebuilds: `cand_gen[s] == gen` when `cand[s]` is this epoch's.
    gen: u64,
    /// Per sender, its candidate receivers this epoch: every node within
    /// `cell_m` of it at the epoch's start, nearest first.
    cand: Vec<Vec<NodeId>>,
    cand_gen: Vec<u64>,
    /// Per sender, copies of its candidates' records (`legs`), contiguous and
    /// in candidate order, and the times all of them answer for (the
    /// intersection of their intervals): a query inside reads the copies with
    /// no per-candidate check or indirection; one outside refreshes them.
    cand_legs: Vec<Vec<LegPiece>>,
    cand_valid: Vec<(SimTime, SimTime)>,
}

/// The uniform grid: cells in a dense row-major array over the occupied
/// bounding box, each cell's nodes (in node order) a slice of `nodes`.
#[derive(Default)]
struct Grid {
    /// Cell side (m): the channel's `cell_m`, doubled until the array stays
    /// within a few cells per node (far-flung nodes). Larger cells only add
    /// candidates: every result is decided by the exact distance.
    cell_m: f64,
    x0: i64,
    y0: i64,
    cols: i64,
    rows: i64,
    /// `start[c]..start[c + 1]`: cell c's range in `nodes`.
    start: Vec<u32>,
    nodes: Vec<NodeId>,
}

impl Grid {
    fn build(&mut self, positions: &[[f64; 2]], cell_m: f64) {
        let n = positions.len();
        let mut cell = cell_m;
        let cell_of = |p: &[f64; 2], c: f64| ((p[0] / c).floor() as i64, (p[1] / c).floor() as i64);
        loop {
            let (mut x0, mut y0, mut x1, mut y1) = (i64::MAX, i64::MAX, i64::MIN, i64::MIN);
            for p in positions {
                let (x, y) = cell_of(p, cell);
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
            if n == 0 {
                (x0, y0, x1, y1) = (0, 0, 0, 0);
            }
            let (cols, rows) = ((x1 - x0 + 1) as i128, (y1 - y0 + 1) as i128);
            if cols * rows > (4 * n as i128).max(1024) && cell < f64::MAX / 4.0 {
                cell *= 2.0;
                continue;
            }
            (self.cell_m, self.x0, self.y0, self.cols, self.rows) =
                (cell, x0, y0, cols as i64, rows as i64);
            break;
        }
        let cells = (self.cols * self.rows) as usize;
        self.start.clear();
        self.start.resize(cells + 1, 0);
        let idx: Vec<usize> = positions
            .iter()
            .map(|p| self.index(cell_of(p, self.cell_m)).expect("inside the box"))
            .collect();
        for &c in &idx {
            self.start[c + 1] += 1;
        }
        for c in 0..cells {
            self.start[c + 1] += self.start[c];
        }
        self.nodes.clear();
        self.nodes.resize(n, NodeId(0));
        let mut fill = self.start.clone();
        for (i, &c) in idx.iter().enumerate() {
            self.nodes[fill[c] as usize] = NodeId(i as u32);
            fill[c] += 1;
        }
    }

    fn index(&self, (x, y): (i64, i64)) -> Option<usize> {
        let (cx, cy) = (x.checked_sub(self.x0)?, y.checked_sub(self.y0)?);
        (0..self.cols).contains(&cx).then_some(())?;
        (0..self.rows).contains(&cy).then_some(())?;
        Some((cy * self.cols + cx) as usize)
    }

    fn cell(&self, p: [f64; 2]) -> (i64, i64) {
        (
            (p[0] / self.cell_m).floor() as i64,
            (p[1] / self.cell_m).floor() as i64,
        )
    }

    /// The nodes of the 3×3 cells around `p`, cell by cell.
    fn around(&self, p: [f64; 2]) -> impl Iterator<Item = &[NodeId]> + '_ {
        let (cx, cy) = self.cell(p);
        (-1..=1)
            .flat_map(move |dx| (-1..=1).map(move |dy| (dx, dy)))
            .map(
                move |(dx, dy)| match self.index((cx.saturating_add(dx), cy.saturating_add(dy))) {
                    Some(c) => &self.nodes[self.start[c] as usize..self.start[c + 1] as usize],
                    None => &[][..],
                },
            )
    }
}

pub struct Channel {
    pub params: RadioParams,
    /// Beyond this distance a signal is never sensed.
    cutoff_m: f64,
    /// The mean received power of `params`' model and transmit power.
    mean_rx: MeanRx,
    /// Every delay up to the cutoff's converts without a range check
    /// (`SimDuration::small_up_to`; always, short of a cutoff of ~10⁹ km).
    delay_small: bool,
    /// Grid cell side: the cutoff, widened by 2·vmax·Δ with moving nodes.
    cell_m: f64,
    /// Static positions, or the positions at the start of the current epoch.
    positions: Vec<[f64; 2]>,
    grid: Grid,
    /// Per sender, its neighbours in arrival order (static nodes, or an
    /// epoch in which no node moves).
    cache: Vec<Option<Vec<Neighbor>>>,
    /// A cached list re-sorted by node id ([`Channel::neighbors`]; not on the
    /// transmission path).
    by_node: Vec<Neighbor>,
    motion: Option<Motion>,
}

impl Channel {
    pub fn new(params: RadioParams, positions: Vec<[f64; 2]>) -> Self {
        let widen = match params.propagation {
            super::Propagation::Shadowing { sigma_db, .. } => 10f64.powf(-3.0 * sigma_db / 10.0),
            _ => 1.0,
        };
        let cutoff_m = params.propagation.range_m(
            &params.antennas,
            params.tx_power_w,
            params.cs_threshold_w * widen,
        );
        let mean_rx = MeanRx::new(&params.propagation, &params.antennas, params.tx_power_w);
        let delay_small = SimDuration::small_up_to(cutoff_m / SPEED_OF_LIGHT_MPS);
        let mut ch = Channel {
            params,
            cutoff_m,
            mean_rx,
            delay_small,
            cell_m: cutoff_m,
            positions: Vec::new(),
            grid: Grid::default(),
            cache: Vec::new(),
            by_node: Vec::new(),
            motion: None,
        };
        ch.set_positions(positions);
        ch
    }

    /// Largest distance at which a transmission is sensed (the static grid cell size).
    pub fn cutoff_m(&self) -> f64 {
        self.cutoff_m
    }

    /// Decoding range: where the mean power equals RXThresh (the unit-disk range
    /// used by connectivity reports and static routes).
    pub fn rx_range_m(&self) -> f64 {
        self.params.rx_range_m()
    }

    /// Static position of `n` (with moving nodes: its position at the start of the current epoch).
    pub fn position(&self, n: NodeId) -> [f64; 2] {
        self.positions[n.index()]
    }

    /// Position of `n` at `t`: from its trajectory with moving nodes, else static.
    pub fn position_at(&self, n: NodeId, t: SimTime) -> [f64; 2] {
        match &self.motion {
            Some(m) => m.trajectories[n.index()].position_at(t),
            None => self.positions[n.index()],
        }
    }

    /// The trajectories, when nodes move.
    pub fn trajectories(&self) -> Option<&[Trajectory]> {
        self.motion.as_ref().map(|m| m.trajectories.as_slice())
    }

    /// The refresh interval Δ of the moving-node grid (`None` when nodes are static).
    pub fn refresh_interval(&self) -> Option<SimDuration> {
        self.motion.as_ref().map(|m| m.refresh)
    }

    /// Grid cell side (m).
    pub fn cell_m(&self) -> f64 {
        self.cell_m
    }

    fn build_grid(&mut self) {
        self.grid.build(&self.positions, self.cell_m);
        self.cache.clear();
        self.cache.resize(self.positions.len(), None);
    }

    /// Replace all positions (nodes moved): rebuilds the grid and drops the cache.
    /// Leaves moving mode: every node stands still from now on.
    pub fn set_positions(&mut self, positions: Vec<[f64; 2]>) {
        self.motion = None;
        self.cell_m = self.cutoff_m;
        self.positions = positions;
        self.build_grid();
    }

    /// Let nodes move along `trajectories` (one per node), with the default
    /// refresh interval. If no trajectory ever moves, this is the static path at
    /// their start positions.
    pub fn set_trajectories(&mut self, trajectories: Vec<Trajectory>) {
        self.set_trajectories_with_refresh(trajectories, DEFAULT_REFRESH);
    }

    /// As [`set_trajectories`](Self::set_trajectories) with at most `refresh` as Δ
    /// (tests use this to show that results do not depend on Δ).
    pub fn set_trajectories_with_refresh(
        &mut self,
        trajectories: Vec<Trajectory>,
        refresh: SimDuration,
    ) {
        let start: Vec<[f64; 2]> = trajectories
            .iter()
            .map(|t| t.position_at(SimTime::ZERO))
            .collect();
        let (vmax, jump) = trajectories
            .iter()
            .map(max_speed_and_jump)
            .fold((0.0f64, 0.0f64), |(v, j), (v2, j2)| (v.max(v2), j.max(j2)));
        self.set_positions(start);
        if vmax == 0.0 && jump == 0.0 {
            return;
        }
        // Keep 2·vmax·Δ ≤ cutoff so cells stay within twice the cutoff.
        let mut refresh_ns = refresh.0.max(1);
        if vmax > 0.0 {
            let cap_ns = (self.cutoff_m / (2.0 * vmax) * 1e9).floor();
            if cap_ns < refresh_ns as f64 {
                refresh_ns = (cap_ns as u64).max(1_000);
            }
        }
        let refresh = SimDuration(refresh_ns);
        // Relative and absolute slack covers interpolation rounding.
        let margin_m = 2.0 * (vmax * refresh.as_secs_f64() + jump) * (1.0 + 1e-9) + 1e-6;
        self.cell_m = self.cutoff_m + margin_m;
        let n = trajectories.len();
        let legs = vec![LegCache::default(); n];
        self.motion = Some(Motion {
            trajectories,
            refresh,
            epoch: None,
            epoch_still: false,
            scratch: Vec::new(),
            scratch_pos: Vec::new(),
            legs,
            gen: 0,
            cand: vec![Vec::new(); n],
            cand_gen: vec![u64::MAX; n],
            cand_legs: vec![Vec::new(); n],
            cand_valid: vec![(SimTime::MAX, SimTime::ZERO); n],
        });
        self.enter_epoch(0);
    }

    /// Node `n` stands at `pos_m` from now on (moving mode: replaces its trajectory
    /// and rebuilds the grid at the next query).
    pub fn set_stationary(&mut self, n: NodeId, pos_m: [f64; 2]) {
        match self.motion.as_mut() {
            Some(m) => {
                m.trajectories[n.index()] = Trajectory::stationary(pos_m);
                m.legs[n.index()].clear();
                m.epoch = None;
            }
            None => {
                let mut pos = self.positions.clone();
                pos[n.index()] = pos_m;
                self.set_positions(pos);
            }
        }
    }

    /// Rebuild the grid for epoch `k` from the positions at k·Δ.
    fn enter_epoch(&mut self, k: u64) {
        let m = self.motion.as_mut().expect("moving mode");
        let t0 = SimTime(k.saturating_mul(m.refresh.0));
        let t1 = SimTime(t0.0.saturating_add(m.refresh.0));
        m.epoch = Some(k);
        m.gen += 1;
        m.epoch_still = m.trajectories.iter().all(|tr| {
            tr.velocity_at(t0) == [0.0, 0.0] && tr.next_change_after(t0).is_none_or(|c| c >= t1)
        });
        self.positions = m.trajectories.iter().map(|tr| tr.position_at(t0)).collect();
        self.build_grid();
    }

    /// Everyone who senses a transmission from `sender`, in node order (static
    /// positions, or the current epoch's positions with moving nodes).
    pub fn neighbors(&mut self, sender: NodeId) -> &[Neighbor] {
        let mut v = std::mem::take(&mut self.by_node);
        v.clear();
        v.extend_from_slice(self.cached(sender));
        // Node ids are unique: an unstable sort gives the same order.
        v.sort_unstable_by_key(|nb| nb.node);
        self.by_node = v;
        &self.by_node
    }

    /// `sender`'s cached neighbour list (static positions), in arrival order.
    fn cached(&mut self, sender: NodeId) -> &[Neighbor] {
        let i = sender.index();
        if self.cache[i].is_none() {
            let mut list = self.compute_neighbors(sender);
            list.sort_unstable_by_key(|nb| (nb.delay, nb.node));
            self.cache[i] = Some(list);
        }
        self.cache[i].as_deref().unwrap()
    }

    /// Everyone who senses a transmission `sender` starts at `now`, in node order.
    /// Static nodes: the cached list. Moving nodes: exact distances at `now`.
    pub fn neighbors_at(&mut self, sender: NodeId, now: SimTime) -> &[Neighbor] {
        if self.moving_epoch(now) {
            self.compute_moving(sender, now);
            let m = self.motion.as_mut().unwrap();
            // Node ids are unique: an unstable sort gives the same order.
            m.scratch.sort_unstable_by_key(|nb| nb.node);
            return &self.motion.as_ref().unwrap().scratch;
        }
        self.neighbors(sender)
    }

    /// As [`neighbors_at`](Self::neighbors_at), in arrival order: by (propagation
    /// delay, node id), the order in which the receivers' signal events run.
    pub fn neighbors_at_arrival_order(&mut self, sender: NodeId, now: SimTime) -> &[Neighbor] {
        if self.moving_epoch(now) {
            self.compute_moving(sender, now);
            return &self.motion.as_ref().unwrap().scratch;
        }
        self.cached(sender)
    }

    /// Whether a query at `now` must use moving positions (entering `now`'s epoch first).
    fn moving_epoch(&mut self, now: SimTime) -> bool {
        let Some(m) = self.motion.as_ref() else {
            return false;
        };
        let k = now.0 / m.refresh.0;
        if m.epoch != Some(k) {
            self.enter_epoch(k);
        }
        !self.motion.as_ref().unwrap().epoch_still
    }

    /// The receivers of `sender` at `now` (moving epoch) into `scratch`, in
    /// arrival order: by (propagation delay, node id).
    fn compute_moving(&mut self, sender: NodeId, now: SimTime) {
        let s = sender.index();
        let m = self.motion.as_mut().unwrap();
        if m.cand_gen[s] != m.gen {
            // Two nodes within the cutoff at a time in this epoch were within
            // `cell_m` at its start (the bound the grid cells rely on), so the
            // nodes within `cell_m` then are every possible receiver.
            let p = self.positions[s];
            let lim2 = self.cell_m * self.cell_m;
            let mut c: Vec<(f64, NodeId)> = Vec::new();
            for nodes in self.grid.around(p) {
                for &n in nodes {
                    let q = self.positions[n.index()];
                    let d2 = (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2);
                    if n != sender && d2 <= lim2 {
                        c.push((d2, n));
                    }
                }
            }
            c.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let list = &mut m.cand[s];
            list.clear();
            list.extend(c.iter().map(|&(_, n)| n));
            m.cand_gen[s] = m.gen;
            m.cand_valid[s] = (SimTime::MAX, SimTime::ZERO);
        }
        let Motion {
            trajectories,
            legs,
            cand,
            scratch,
            scratch_pos,
            cand_legs,
            cand_valid,
            ..
        } = m;
        let (cand, mut out) = (&cand[s], std::mem::take(scratch));
        let p = legs[s].position_at(&trajectories[s], now);
        // Positions (record copies, refreshed from the trajectories when one
        // has run out) in one pass, links (the floating-point chains) in
        // another, written into spare capacity (no growth check per link); the
        // arrival order after. Both passes take two candidates at a time.
        scratch_pos.clear();
        let (recs, valid) = (&mut cand_legs[s], &mut cand_valid[s]);
        if now >= valid.0 && now < valid.1 {
            // Into spare capacity: no growth check, length store or fill per position.
            scratch_pos.reserve(recs.len());
            let slots = &mut scratch_pos.spare_capacity_mut()[..recs.len()];
            let (mut pairs, mut outs) = (recs.chunks_exact(2), slots.chunks_exact_mut(2));
            for (pair, out) in (&mut pairs).zip(&mut outs) {
                let [qa, qb] = LegPiece::positions2(&pair[0], &pair[1], now);
                out[0].write(qa);
                out[1].write(qb);
            }
            if let ([r], [out]) = (pairs.remainder(), outs.into_remainder()) {
                out.write(r.position(now));
            }
            // SAFETY: every one of the first `recs.len()` slots was written (pairs, then the odd one).
            unsafe { scratch_pos.set_len(recs.len()) };
        } else {
            recs.clear();
            *valid = (SimTime::ZERO, SimTime::MAX);
            for &n in cand {
                scratch_pos.push(position_one(legs, trajectories, n.index(), now));
                let lc = &legs[n.index()];
                let (from, until) = lc.valid();
                *valid = (valid.0.max(from), valid.1.min(until));
                recs.push(lc.piece());
            }
        }
        out.clear();
        out.reserve(cand.len());
        let slots = &mut out.spare_capacity_mut()[..cand.len()];
        let len = if self.delay_small {
            self.mean_rx.visit(Links::<true> {
                cand,
                pos: scratch_pos,
                p,
                cutoff_m: self.cutoff_m,
                slots,
            })
        } else {
            self.mean_rx.visit(Links::<false> {
                cand,
                pos: scratch_pos,
                p,
                cutoff_m: self.cutoff_m,
                slots,
            })
        };
        // SAFETY: `Links` wrote the first `len` slots, and `len` is at most
        // `cand.len()`, within the reserved capacity.
        unsafe { out.set_len(len) };
        sort_arrival_order(&mut out);
        *scratch = out;
    }

    /// `sender`'s neighbours at the static (or epoch-start) positions, in grid order.
    fn compute_neighbors(&self, sender: NodeId) -> Vec<Neighbor> {
        let p = self.positions[sender.index()];
        let mut out = Vec::new();
        for nodes in self.grid.around(p) {
            for &n in nodes {
                if n == sender {
                    continue;
                }
                if let Some(nb) = neighbor::<false>(
                    |d| self.mean_rx.at(d),
                    self.cutoff_m,
                    p,
                    self.positions[n.index()],
                    n,
                ) {
                    out.push(nb);
                }
            }
        }
        out
    }

    /// Nodes within decoding range of `n` (mean power ≥ RXThresh): the static-routing
    /// graph (with moving nodes: at the current epoch's start, time 0 before the run).
    pub fn range_graph(&mut self) -> Vec<Vec<NodeId>> {
        let rx = self.params.rx_threshold_w;
        (0..self.positions.len())
            .map(|i| {
                self.neighbors(NodeId(i as u32))
                    .iter()
                    .filter(|nb| nb.mean_power_w >= rx)
                    .map(|nb| nb.node)
                    .collect()
            })
            .collect()
    }
}

/// The links from a sender at `p` to the candidates at their positions, written
/// into `slots` in candidate order; the number written. Run with the model's
/// law ([`MeanRx::visit`]), so the loop has no branch on the model and keeps
/// its constants in registers. `SMALL`: the channel's `delay_small`.
struct Links<'a, const SMALL: bool> {
    cand: &'a [NodeId],
    pos: &'a [[f64; 2]],
    p: [f64; 2],
    cutoff_m: f64,
    slots: &'a mut [MaybeUninit<Neighbor>],
}

impl<const SMALL: bool> MeanRxVisitor for Links<'_, SMALL> {
    type Output = usize;
    #[inline(always)]
    fn visit(
        self,
        law: impl Fn(f64) -> f64 + Copy,
        law2: impl Fn([f64; 2]) -> [f64; 2] + Copy,
    ) -> usize {
        let Links {
            cand,
            pos,
            p,
            cutoff_m,
            slots,
        } = self;
        let n = cand.len().min(pos.len()).min(slots.len());
        let (cand, pos) = (&cand[..n], &pos[..n]);
        let mut len = 0;
        let mut put = |nb: Neighbor| {
            // SAFETY: at most one write per candidate, so `len` < n ≤ `slots.len()`.
            unsafe { slots.get_unchecked_mut(len) }.write(nb);
            len += 1;
        };
        // Two candidates at a time (the square roots and divisions pair into
        // packed instructions), both in range; otherwise one by one.
        let (mut cpairs, mut qpairs) = (cand.chunks_exact(2), pos.chunks_exact(2));
        for (c, q) in (&mut cpairs).zip(&mut qpairs) {
            let (dx, dy) = (
                [p[0] - q[0][0], p[0] - q[1][0]],
                [p[1] - q[0][1], p[1] - q[1][1]],
            );
            let d2 = [dx[0] * dx[0] + dy[0] * dy[0], dx[1] * dx[1] + dy[1] * dy[1]];
            let d = [d2[0].sqrt(), d2[1].sqrt()];
            if (d[0] <= cutoff_m) & (d[1] <= cutoff_m) {
                let pw = law2(d);
                let s = div2(d, [SPEED_OF_LIGHT_MPS; 2]);
                let delay = [secs_to_delay::<SMALL>(s[0]), secs_to_delay::<SMALL>(s[1])];
                put(Neighbor {
                    node: c[0],
                    delay: delay[0],
                    mean_power_w: pw[0],
                });
                put(Neighbor {
                    node: c[1],
                    delay: delay[1],
                    mean_power_w: pw[1],
                });
            } else {
                for k in 0..2 {
                    if let Some(nb) = neighbor::<SMALL>(law, cutoff_m, p, q[k], c[k]) {
                        put(nb);
                    }
                }
            }
        }
        if let ([c], [q]) = (cpairs.remainder(), qpairs.remainder()) {
            if let Some(nb) = neighbor::<SMALL>(law, cutoff_m, p, *q, *c) {
                put(nb);
            }
        }
        len
    }
}

/// The link from a sender at `p` to node `n` at `q`, if within `cutoff_m`
/// (`mean_rx`: the model's law, distance → mean power; `SMALL`: the channel's
/// `delay_small` for this `cutoff_m`).
#[inline]
// `!(d <= cutoff)`: out of range, or NaN (a broken position, reported).
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn neighbor<const SMALL: bool>(
    mean_rx: impl Fn(f64) -> f64,
    cutoff_m: f64,
    p: [f64; 2],
    q: [f64; 2],
    n: NodeId,
) -> Option<Neighbor> {
    let d = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt();
    if !(d <= cutoff_m) {
        if d.is_nan() {
            nan_distance(n);
        }
        return None;
    }
    // 0 ≤ d ≤ cutoff: the delay is finite and ≥ 0.
    let pw = mean_rx(d);
    let delay = secs_to_delay::<SMALL>(d / SPEED_OF_LIGHT_MPS);
    Some(Neighbor {
        node: n,
        delay,
        mean_power_w: pw,
    })
}

/// The propagation delay of `s = d / c` for a distance `0 ≤ d ≤ cutoff_m`
/// (`SMALL`: the channel's `delay_small`).
#[inline(always)]
fn secs_to_delay<const SMALL: bool>(s: f64) -> SimDuration {
    // SAFETY (SMALL): 0 ≤ d ≤ cutoff, so 0 ≤ s ≤ cutoff / c (the division rounds
    // monotonically), and `SimDuration::small_up_to(cutoff / c)` held.
    if SMALL {
        unsafe { SimDuration::from_secs_f64_small(s) }
    } else {
        SimDuration::from_secs_f64(s)
    }
}

/// Node `i`'s position at `t` from its record, refilled when it has run out.
#[inline]
fn position_one(
    legs: &mut [LegCache],
    trajectories: &[Trajectory],
    i: usize,
    t: SimTime,
) -> [f64; 2] {
    let lc = &mut legs[i];
    match lc.cached_position_at(t) {
        Some(q) => q,
        None => {
            let (x, y) = refill_pair(lc, &trajectories[i], t);
            [x, y]
        }
    }
}

/// [`LegCache::refill`] returning a pair, which comes back in two registers
/// (an array comes back through memory, and the hot path would store to it too).
#[cold]
#[inline(never)]
fn refill_pair(lc: &mut LegCache, traj: &Trajectory, t: SimTime) -> (f64, f64) {
    let p = lc.refill(traj, t);
    (p[0], p[1])
}

#[cold]
#[inline(never)]
fn nan_distance(n: NodeId) -> ! {
    panic!(
        "distance to node {} is NaN (a position is not a number)",
        n.0
    )
}

/// Sort `v` by (delay, node) by insertion: candidates come nearest first (at
/// the epoch's start), so the list is nearly in order and most entries stay.
#[inline]
fn sort_arrival_order(v: &mut [Neighbor]) {
    let key = |nb: &Neighbor| (nb.delay.0, nb.node.0);
    let range = v.as_mut_ptr_range();
    if v.len() < 2 {
        return;
    }
    // One pointer walks the entries (the compiler keeps an index and two
    // pointers otherwise); an entry is compared with its predecessor in place.
    // SAFETY: `p` runs over `base + 1 .. end` and `q` over `base ..= p`, all
    // inside `v`; entries are plain `Copy` data.
    unsafe {
        let (base, end) = (range.start, range.end);
        let mut p = base.add(1);
        while p != end {
            let d = (*p).delay.0;
            let pd = (*p.sub(1)).delay.0;
            if pd < d || (pd == d && (*p.sub(1)).node.0 <= (*p).node.0) {
                p = p.add(1);
                continue;
            }
            let nb = *p;
            let kx = key(&nb);
            let mut q = p;
            while q != base && key(&*q.sub(1)) > kx {
                *q = *q.sub(1);
                q = q.sub(1);
            }
            *q = nb;
            p = p.add(1);
        }
    }
}

/// The fastest leg of a trajectory (m/s, from its endpoints and rounded duration)
/// and its largest discontinuity between legs (m; sub-nanosecond moves are jumps).
fn max_speed_and_jump(t: &Trajectory) -> (f64, f64) {
    let legs = t.legs();
    let mut v: f64 = 0.0;
    let mut jump: f64 = 0.0;
    for (i, l) in legs.iter().enumerate() {
        if !l.is_pause() && l.end != SimTime::MAX && l.end > l.start {
            let d = (l.to_m[0] - l.from_m[0]).hypot(l.to_m[1] - l.from_m[1]);
            v = v.max(d / (l.end - l.start).as_secs_f64());
        }
        if i > 0 {
            let p = legs[i - 1].to_m;
            jump = jump.max((l.from_m[0] - p[0]).hypot(l.from_m[1] - p[1]));
        }
    }
    (v, jump)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_finds_exactly_the_nodes_within_carrier_sense_range() {
        // A 20 × 20 lattice, 100 m apart; compare with brute force.
        let pos: Vec<[f64; 2]> = (0..400)
            .map(|i| [(i % 20) as f64 * 100.0, (i / 20) as f64 * 100.0])
            .collect();
        let mut ch = Channel::new(RadioParams::default(), pos.clone());
        let cut = ch.cutoff_m();
        assert!((cut - 550.0).abs() < 0.5, "two-ray CS range {cut}");
        for s in [0usize, 21, 210, 399] {
            let got: Vec<u32> = ch
                .neighbors(NodeId(s as u32))
                .iter()
                .map(|n| n.node.0)
                .collect();
            let want: Vec<u32> = (0..400u32)
                .filter(|&j| j as usize != s)
                .filter(|&j| {
                    let q = pos[j as usize];
                    ((pos[s][0] - q[0]).powi(2) + (pos[s][1] - q[1]).powi(2)).sqrt() <= cut
                })
                .collect();
            assert_eq!(got, want, "sender {s}");
            let mut by_arrival: Vec<(u64, u32)> = ch
                .neighbors(NodeId(s as u32))
                .iter()
                .map(|n| (n.delay.0, n.node.0))
                .collect();
            by_arrival.sort();
            let arr: Vec<(u64, u32)> = ch
                .neighbors_at_arrival_order(NodeId(s as u32), SimTime::ZERO)
                .iter()
                .map(|n| (n.delay.0, n.node.0))
                .collect();
            assert_eq!(arr, by_arrival, "arrival order, sender {s}");
        }
    }

    #[test]
    fn propagation_delay_is_distance_over_c() {
        let mut ch = Channel::new(RadioParams::default(), vec![[0.0, 0.0], [200.0, 0.0]]);
        let nb = ch.neighbors(NodeId(0))[0];
        assert_eq!(
            nb.delay.as_nanos(),
            (200.0 / SPEED_OF_LIGHT_MPS * 1e9_f64).round() as u64
        );
    }

    /// Random-waypoint-like movers: the moving grid finds exactly the nodes a
    /// brute-force scan finds, and the answer does not depend on Δ or on the order
    /// of queries.
    #[test]
    fn moving_grid_matches_brute_force_for_any_refresh_interval() {
        use crate::mobility::{Area, RandomWaypoint};
        let rwp = RandomWaypoint::ns2(Area::new(3000.0, 2000.0), 30.0, 0.0);
        let until = SimTime::from_secs_f64(60.0);
        let trajs = rwp.trajectories(5, 120, until).unwrap();
        let brute = |t: SimTime, s: usize, cut: f64| -> Vec<(u32, u64)> {
            let p = trajs[s].position_at(t);
            (0..trajs.len())
                .filter(|&j| j != s)
                .filter_map(|j| {
                    let q = trajs[j].position_at(t);
                    let d = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt();
                    (d <= cut).then(|| {
                        (
                            j as u32,
                            SimDuration::from_secs_f64(d / SPEED_OF_LIGHT_MPS).as_nanos(),
                        )
                    })
                })
                .collect()
        };
        let times: Vec<SimTime> = (0..200u64)
            .map(|i| SimTime((i * 7_919_000_017) % until.0))
            .collect();
        let mut answers: Vec<Vec<Vec<(u32, u64)>>> = Vec::new();
        for refresh_s in [0.05, 1.0, 10.0] {
            let mut ch = Channel::new(RadioParams::default(), vec![[0.0, 0.0]; trajs.len()]);
            ch.set_trajectories_with_refresh(trajs.clone(), SimDuration::from_secs_f64(refresh_s));
            assert!(ch.refresh_interval().unwrap() <= SimDuration::from_secs_f64(refresh_s));
            let cut = ch.cutoff_m();
            let mut per = Vec::new();
            // Times out of order on purpose.
            for (i, &t) in times.iter().enumerate() {
                let s = (i * 37) % trajs.len();
                let got: Vec<(u32, u64)> = ch
                    .neighbors_at(NodeId(s as u32), t)
                    .iter()
                    .map(|n| (n.node.0, n.delay.as_nanos()))
                    .collect();
                assert_eq!(
                    got,
                    brute(t, s, cut),
                    "refresh {refresh_s} s, t {t}, sender {s}"
                );
                let mut want = got.clone();
                want.sort_by_key(|&(n, d)| (d, n));
                let arr: Vec<(u32, u64)> = ch
                    .neighbors_at_arrival_order(NodeId(s as u32), t)
                    .iter()
                    .map(|n| (n.node.0, n.delay.as_nanos()))
                    .collect();
                assert_eq!(
                    arr, want,
                    "arrival order, refresh {refresh_s} s, t {t}, sender {s}"
                );
                per.push(got);
            }
            answers.push(per);
        }
        assert!(answers.windows(2).all(|w| w[0] == w[1]));
    }

    /// The insertion sort against a library sort: ties on delay, runs in
    /// order, entries far out of place, both ends.
    #[test]
    fn arrival_order_sort_matches_a_full_sort() {
        let mk = |d: u64, n: u32| Neighbor {
            node: NodeId(n),
            delay: SimDuration(d),
            mean_power_w: n as f64,
        };
        let cases: Vec<Vec<(u64, u32)>> = vec![
            vec![],
            vec![(5, 1)],
            vec![(5, 2), (5, 1)],
            vec![(1, 1), (2, 2), (3, 3)],
            vec![(9, 0), (1, 1), (2, 2), (3, 3)],
            vec![(1, 1), (2, 2), (3, 3), (0, 9)],
            vec![
                (4, 3),
                (4, 1),
                (4, 2),
                (3, 7),
                (5, 0),
                (4, 0),
                (1, 5),
                (1, 4),
            ],
            (0..40u32).map(|i| (((i * 37) % 11) as u64, i)).collect(),
        ];
        for c in cases {
            let mut v: Vec<Neighbor> = c.iter().map(|&(d, n)| mk(d, n)).collect();
            sort_arrival_order(&mut v);
            let mut want = c.clone();
            want.sort();
            let got: Vec<(u64, u32)> = v.iter().map(|nb| (nb.delay.0, nb.node.0)).collect();
            assert_eq!(got, want);
            assert!(
                v.iter().all(|nb| nb.mean_power_w == nb.node.0 as f64),
                "entries moved whole"
            );
        }
    }

    #[test]
    fn still_trajectories_take_the_static_path() {
        use crate::mobility::Trajectory;
        let mut ch = Channel::new(RadioParams::default(), vec![[0.0, 0.0]; 2]);
        ch.set_trajectories(vec![
            Trajectory::stationary([0.0, 0.0]),
            Trajectory::stationary([100.0, 0.0]),
        ]);
        assert!(ch.refresh_interval().is_none());
        assert_eq!(
            ch.neighbors_at(NodeId(0), SimTime::from_secs_f64(3.0))[0].node,
            NodeId(1)
        );
    }

    #[test]
    fn range_graph_uses_the_receive_threshold() {
        let mut ch = Channel::new(
            RadioParams::default(),
            vec![[0.0, 0.0], [249.0, 0.0], [498.0, 0.0], [749.5, 0.0]],
        );
        let g = ch.range_graph();
        assert_eq!(g[0], vec![NodeId(1)]);
        assert_eq!(g[1], vec![NodeId(0), NodeId(2)]);
        assert_eq!(g[2], vec![NodeId(1)], "251.5 m is out of range");
    }
}
