//! Static routing: next hop per destination from shortest paths (in hops) over a
//! fixed adjacency computed at start time. Ties between equal-length paths go to
//! the lowest-numbered neighbour, so routes are deterministic.

use super::{Routing, RoutingAction, RoutingCtx};
use crate::ids::NodeId;
use crate::metrics::DropReason;
use crate::packet::Packet;
use std::collections::VecDeque;

pub struct StaticRouting {
    /// `next_hop[dst]`, `None` when `dst` is unreachable.
    next_hop: Vec<Option<NodeId>>,
}

impl StaticRouting {
    /// Routes for node `me` given each node's neighbour list.
    pub fn shortest_paths(me: NodeId, adjacency: &[Vec<NodeId>]) -> Self {
        let n = adjacency.len();
        // BFS from `me`; the first hop of each node is inherited from its parent.
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
        StaticRouting { next_hop: first_hop }
    }

    pub fn next_hop(&self, dst: NodeId) -> Option<NodeId> {
        self.next_hop.get(dst.index()).copied().flatten()
    }
}

impl Routing for StaticRouting {
    fn name(&self) -> &'static str {
        "static"
    }
    fn route(&mut self, ctx: &mut RoutingCtx, pkt: Packet) {
        match self.next_hop(pkt.ip.dst) {
            Some(next_hop) => ctx.actions.push(RoutingAction::Forward { pkt, next_hop }),
            None => ctx.actions.push(RoutingAction::Drop { pkt, reason: DropReason::NoRoute }),
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
    fn unreachable_has_no_route() {
        let a = adj(3, &[(0, 1)]);
        let r = StaticRouting::shortest_paths(NodeId(0), &a);
        assert_eq!(r.next_hop(NodeId(2)), None);
    }
}
