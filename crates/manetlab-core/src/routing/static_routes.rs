//! Static routing: next hop per destination from shortest paths (in hops) over a
//! fixed adjacency computed at start time. Ties between equal-length paths go to
//! the lowest-numbered neighbour, so routes are deterministic.
//!
//! A node's next hop towards a destination is computed when a packet first
//! needs it and cached per (node, destination) pair: a neighbour is its own next
//! hop; otherwise a BFS from the destination that stops at the layer holding the
//! node (every node one hop closer is labelled by then). The work and memory
//! follow the paths in use, not the network: per-destination tables (one BFS
//! over every node, 4 bytes per node) made 1600 one-hop flows on 6400 nodes cost
//! 41 MB and ≈ 5 % of the run; an all-pairs table was 8·n² bytes.

use super::{Routing, RoutingAction, RoutingCtx};
use crate::ids::NodeId;
use crate::wire::DropReason;
use crate::wire::Packet;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// No route (cached pairs).
const NONE: u32 = u32::MAX;

/// The adjacency and the next hops computed so far; shared by every node's
/// [`StaticRouting`].
pub struct StaticRouteTable {
    /// Each node's neighbours, sorted.
    adjacency: Vec<Vec<NodeId>>,
    /// Next hop per (node, destination) asked for beyond one hop, `NONE` when
    /// unreachable. Looked up, never iterated, so the map's order cannot reach
    /// results.
    next_hops: RefCell<HashMap<(u32, u32), u32>>,
    /// The bounded BFS's distances (`NONE`: not reached) and the nodes it
    /// labelled, reset after each search: no per-search allocation of n entries.
    scratch: RefCell<(Vec<u32>, Vec<u32>)>,
}

impl StaticRouteTable {
    pub fn new(mut adjacency: Vec<Vec<NodeId>>) -> Self {
        for nb in &mut adjacency {
            nb.sort_unstable();
            nb.dedup();
        }
        let n = adjacency.len();
        StaticRouteTable {
            adjacency,
            next_hops: RefCell::new(HashMap::new()),
            scratch: RefCell::new((vec![NONE; n], Vec::new())),
        }
    }

    /// (node, destination) pairs beyond one hop whose next hop has been
    /// computed (for tests and memory checks).
    pub fn cached_routes(&self) -> usize {
        self.next_hops.borrow().len()
    }

    /// `me`'s next hop towards `dst`.
    pub fn next_hop(&self, me: NodeId, dst: NodeId) -> Option<NodeId> {
        let n = self.adjacency.len();
        if dst.index() >= n || me.index() >= n || me == dst {
            return None;
        }
        // One hop: the destination is the lowest-numbered neighbour at distance 0.
        if self.adjacency[me.index()].binary_search(&dst).is_ok() {
            return Some(dst);
        }
        let h = *self
            .next_hops
            .borrow_mut()
            .entry((me.0, dst.0))
            .or_insert_with(|| self.search(me, dst));
        (h != NONE).then_some(NodeId(h))
    }

    /// `me`'s lowest-numbered neighbour one hop closer to `dst` than `me`: a
    /// BFS from `dst` until it reaches `me` at distance d; every node at d − 1
    /// has been labelled before any at d. That is the hop a BFS from the source
    /// with neighbours in ascending order picks (the first hop of the first
    /// shortest path found).
    fn search(&self, me: NodeId, dst: NodeId) -> u32 {
        let mut scratch = self.scratch.borrow_mut();
        let (dist, labelled) = &mut *scratch;
        dist[dst.index()] = 0;
        labelled.push(dst.0);
        let mut frontier = VecDeque::from([dst]);
        let mut found = None;
        'bfs: while let Some(u) = frontier.pop_front() {
            for &v in &self.adjacency[u.index()] {
                if dist[v.index()] == NONE {
                    dist[v.index()] = dist[u.index()] + 1;
                    labelled.push(v.0);
                    if v == me {
                        found = Some(dist[v.index()]);
                        break 'bfs;
                    }
                    frontier.push_back(v);
                }
            }
        }
        let hop = found
            .and_then(|d| {
                self.adjacency[me.index()]
                    .iter()
                    .find(|v| dist[v.index()] == d - 1)
            })
            .map_or(NONE, |v| v.0);
        for &u in labelled.iter() {
            dist[u as usize] = NONE;
        }
        labelled.clear();
        hop
    }
}

pub struct StaticRouting {
    me: NodeId,
    table: Rc<StaticRouteTable>,
}

impl StaticRouting {
    /// Routes for node `me` given each node's neighbour list (a table of its own).
    pub fn shortest_paths(me: NodeId, adjacency: &[Vec<NodeId>]) -> Self {
        StaticRouting {
            me,
            table: Rc::new(StaticRouteTable::new(adjacency.to_vec())),
        }
    }

    /// Routes for node `me` from a table shared by all nodes.
    pub fn shared(me: NodeId, table: Rc<StaticRouteTable>) -> Self {
        StaticRouting { me, table }
    }

    pub fn next_hop(&self, dst: NodeId) -> Option<NodeId> {
        self.table.next_hop(self.me, dst)
    }
}

impl Routing for StaticRouting {
    fn name(&self) -> &'static str {
        "static"
    }
    fn route(&mut self, ctx: &mut RoutingCtx, pkt: Packet) {
        match self.next_hop(pkt.ip.dst) {
            Some(next_hop) => ctx.actions.push(RoutingAction::Forward { pkt, next_hop }),
            None => ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::NoRoute,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adj(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<NodeId>> {
        let mut a = vec![Vec::new(); n];
        for &(x, y) in edges {
            a[x as usize].push(NodeId(y));
            a[y as usize].push(NodeId(x));
        }
        a
    }

    #[test]
    fn chain_routes_go_through_the_next_node() {
        let a = adj(4, &[(0, 1), (1, 2), (2, 3)]);
        let r = StaticRouting::shortest_paths(NodeId(0), &a);
        assert_eq!(r.next_hop(NodeId(3)), Some(NodeId(1)));
        let r2 = StaticRouting::shortest_paths(NodeId(2), &a);
        assert_eq!(r2.next_hop(NodeId(0)), Some(NodeId(1)));
        assert_eq!(r2.next_hop(NodeId(3)), Some(NodeId(3)));
    }

    #[test]
    fn shortest_path_wins_and_ties_go_to_lowest_neighbour() {
        // 0-1-3, 0-2-3 (tie), 0-4-5-3 longer.
        let a = adj(6, &[(0, 2), (0, 1), (1, 3), (2, 3), (0, 4), (4, 5), (5, 3)]);
        let r = StaticRouting::shortest_paths(NodeId(0), &a);
        assert_eq!(r.next_hop(NodeId(3)), Some(NodeId(1)));
    }

    #[test]
    fn per_destination_routes_equal_a_bfs_from_each_source() {
        // A grid with diagonals, many equal-length paths: the per-destination
        // routes must pick what a BFS from the source (ascending neighbours) picks.
        let (w, h) = (6u32, 5u32);
        let id = |x: u32, y: u32| y * w + x;
        let mut edges = Vec::new();
        for y in 0..h {
            for x in 0..w {
                if x + 1 < w {
                    edges.push((id(x, y), id(x + 1, y)));
                }
                if y + 1 < h {
                    edges.push((id(x, y), id(x, y + 1)));
                }
                if x + 1 < w && y + 1 < h && (x + y) % 3 == 0 {
                    edges.push((id(x + 1, y), id(x, y + 1)));
                }
            }
        }
        let n = (w * h) as usize;
        let a = adj(n, &edges);
        let table = Rc::new(StaticRouteTable::new(a.clone()));
        for me in 0..n as u32 {
            let expect = bfs_first_hops(NodeId(me), &a);
            let r = StaticRouting::shared(NodeId(me), table.clone());
            for dst in 0..n as u32 {
                assert_eq!(
                    r.next_hop(NodeId(dst)),
                    expect[dst as usize],
                    "{me} -> {dst}"
                );
            }
        }
    }

    #[test]
    fn only_pairs_in_use_beyond_one_hop_are_computed() {
        let a = adj(1000, &[(0, 1), (1, 2)]);
        let table = Rc::new(StaticRouteTable::new(a));
        let r = StaticRouting::shared(NodeId(0), table.clone());
        assert_eq!(r.next_hop(NodeId(1)), Some(NodeId(1)));
        assert_eq!(table.cached_routes(), 0);
        assert_eq!(r.next_hop(NodeId(2)), Some(NodeId(1)));
        assert_eq!(r.next_hop(NodeId(2)), Some(NodeId(1)));
        assert_eq!(r.next_hop(NodeId(999)), None);
        assert_eq!(table.cached_routes(), 2);
    }

    #[test]
    fn pair_routes_equal_a_bfs_from_each_source_across_components() {
        // Two components (a ring with chords and a short chain) and an isolated
        // node, asked in an interleaved order: each search leaves its scratch clean.
        let mut edges: Vec<(u32, u32)> = (0..12).map(|i| (i, (i + 1) % 12)).collect();
        edges.extend([(0, 6), (3, 9), (2, 7), (12, 13), (13, 14)]);
        let n = 16;
        let a = adj(n, &edges);
        let table = Rc::new(StaticRouteTable::new(a.clone()));
        let expect: Vec<_> = (0..n as u32)
            .map(|me| bfs_first_hops(NodeId(me), &a))
            .collect();
        for k in 0..(n * n) as u32 {
            let (me, dst) = ((k * 7) % n as u32, (k * 11 + k / n as u32) % n as u32);
            let r = StaticRouting::shared(NodeId(me), table.clone());
            assert_eq!(
                r.next_hop(NodeId(dst)),
                expect[me as usize][dst as usize],
                "{me} -> {dst}"
            );
        }
    }

    /// The former all-pairs construction: BFS from `me`, first hop inherited.
    fn bfs_first_hops(me: NodeId, adjacency: &[Vec<NodeId>]) -> Vec<Option<NodeId>> {
        let n = adjacency.len();
        let mut first_hop: Vec<Option<NodeId>> = vec![None; n];
        let mut seen = vec![false; n];
        let mut frontier = VecDeque::new();
        seen[me.index()] = true;
        let mut neighbours = adjacency[me.index()].clone();
        neighbours.sort();
        for nb in neighbours {
            if !seen[nb.index()] {
                seen[nb.index()] = true;
                first_hop[nb.index()] = Some(nb);
                frontier.push_back(nb);
            }
        }
        while let Some(u) = frontier.pop_front() {
            let mut next = adjacency[u.index()].clone();
            next.sort();
            for v in next {
                if !seen[v.index()] {
                    seen[v.index()] = true;
                    first_hop[v.index()] = first_hop[u.index()];
                    frontier.push_back(v);
                }
            }
        }
        first_hop
    }

    #[test]
    fn unreachable_has_no_route() {
        let a = adj(3, &[(0, 1)]);
        let r = StaticRouting::shortest_paths(NodeId(0), &a);
        assert_eq!(r.next_hop(NodeId(2)), None);
    }
}
