//! The DSR route cache (RFC 4728 §4.1), organised as ns-2's `MobiCache`
//! (`dsr/mobicache.cc`, the cache of Broch et al., MobiCom 1998): a path cache
//! split into
//!
//! * a **primary** cache (ns-2: 30 paths) of routes this node asked for or
//!   handed out: replies it received, routes it replied with, routes it uses;
//! * a **secondary** cache (ns-2: 64 paths) of routes learned speculatively:
//!   source routes of packets it forwards or overhears.
//!
//! Every path starts with this node and holds no node twice. Adding a path
//! that extends a cached one extends it in place; a path already contained as
//! a prefix changes nothing; otherwise it takes an empty slot or evicts paths
//! round-robin. A lookup returns the shortest prefix ending at the
//! destination, preferring the primary cache on ties; a secondary path taken
//! for use is promoted to the primary cache. A broken link truncates every
//! path at it. Like ns-2's MobiCache, entries never time out (RFC 4728's
//! RouteCacheTimeout, 300 s, is not applied).

use crate::ids::NodeId;

/// One fixed-size path cache (ns-2 `Cache`).
#[derive(Clone, Debug)]
pub struct PathCache {
    paths: Vec<Vec<NodeId>>,
    victim: usize,
}

impl PathCache {
    pub fn new(size: usize) -> Self {
        PathCache {
            paths: vec![Vec::new(); size.max(1)],
            victim: 0,
        }
    }

    /// Add `path`, returning its slot (ns-2 `Cache::addRoute`).
    pub fn add(&mut self, path: &[NodeId]) -> usize {
        for (i, p) in self.paths.iter_mut().enumerate() {
            let common = p.iter().zip(path).take_while(|(a, b)| a == b).count();
            if common == p.len() {
                // The new path contains this one (or the slot is empty): extend it.
                p.extend_from_slice(&path[common..]);
                return i;
            }
            if common == path.len() {
                return i; // already cached as a prefix
            }
        }
        let v = self.pick_victim();
        self.paths[v] = path.to_vec();
        v
    }

    fn pick_victim(&mut self) -> usize {
        if let Some(i) = self.paths.iter().position(|p| p.is_empty()) {
            return i;
        }
        let v = self.victim;
        self.victim = (self.victim + 1) % self.paths.len();
        v
    }

    /// The shortest cached prefix ending at `dst`: (hops, slot).
    fn shortest(&self, dst: NodeId) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (slot, p) in self.paths.iter().enumerate() {
            if let Some(hops) = p.iter().position(|&n| n == dst) {
                if hops > 0 && best.is_none_or(|(h, _)| hops < h) {
                    best = Some((hops, slot));
                }
            }
        }
        best
    }

    /// Truncate every path at the link `from → to` (ns-2 `Cache::noticeDeadLink`).
    /// Returns whether any path used it.
    pub fn dead_link(&mut self, from: NodeId, to: NodeId) -> bool {
        let mut hit = false;
        for p in &mut self.paths {
            if let Some(n) = p.windows(2).position(|w| w[0] == from && w[1] == to) {
                hit = true;
                if n == 0 {
                    p.clear();
                } else {
                    p.truncate(n + 1);
                }
            }
        }
        hit
    }

    pub fn paths(&self) -> impl Iterator<Item = &Vec<NodeId>> {
        self.paths.iter().filter(|p| !p.is_empty())
    }
}

/// The primary/secondary route cache of one node (ns-2 `MobiCache`).
#[derive(Clone, Debug)]
pub struct RouteCache {
    me: NodeId,
    primary: PathCache,
    secondary: PathCache,
}

impl RouteCache {
    pub fn new(me: NodeId, primary: usize, secondary: usize) -> Self {
        RouteCache {
            me,
            primary: PathCache::new(primary),
            secondary: PathCache::new(secondary),
        }
    }

    /// A route this node wants to keep (a reply it received or sent): primary
    /// cache (ns-2 `addRoute`). Ignored unless it starts here and has a hop.
    pub fn add_route(&mut self, path: &[NodeId]) -> bool {
        if path.len() < 2 || path[0] != self.me {
            return false;
        }
        self.primary.add(path);
        true
    }

    /// A source route seen in use (forwarded or overheard): the part from this
    /// node on goes to the secondary cache (ns-2 `noticeRouteUsed`). If this
    /// node is not on the route, `heard_from` is the transmitter it heard the
    /// packet from, at position `heard_at`: the route "me, transmitter, …,
    /// destination" is cached (ns-2 `cache_use_overheard_routes`).
    pub fn notice_route_used(&mut self, path: &[NodeId], heard_at: Option<usize>) -> bool {
        let stub: Vec<NodeId> = match path.iter().position(|&n| n == self.me) {
            Some(i) => path[i..].to_vec(),
            None => match heard_at {
                Some(t) if t < path.len() => std::iter::once(self.me)
                    .chain(path[t..].iter().copied())
                    .collect(),
                _ => return false,
            },
        };
        if stub.len() < 2 {
            return false;
        }
        self.secondary.add(&stub);
        true
    }

    /// The shortest cached route to `dst`, this node first (ns-2 `findRoute`).
    /// With `for_use`, a route found in the secondary cache moves to the primary.
    pub fn find(&mut self, dst: NodeId, for_use: bool) -> Option<Vec<NodeId>> {
        let p = self.primary.shortest(dst);
        let s = self.secondary.shortest(dst);
        match (p, s) {
            (Some((ph, slot)), s) if s.is_none_or(|(sh, _)| ph <= sh) => {
                Some(self.primary.paths[slot][..=ph].to_vec())
            }
            (Some((ph, slot)), None) => Some(self.primary.paths[slot][..=ph].to_vec()),
            (_, Some((sh, slot))) => {
                let route = self.secondary.paths[slot][..=sh].to_vec();
                if for_use {
                    let whole = std::mem::take(&mut self.secondary.paths[slot]);
                    self.primary.add(&whole);
                }
                Some(route)
            }
            (None, None) => None,
        }
    }

    /// The link `from → to` is broken: cut every cached path at it.
    pub fn dead_link(&mut self, from: NodeId, to: NodeId) -> bool {
        let a = self.primary.dead_link(from, to);
        let b = self.secondary.dead_link(from, to);
        a || b
    }

    pub fn primary(&self) -> &PathCache {
        &self.primary
    }

    pub fn secondary(&self) -> &PathCache {
        &self.secondary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<NodeId> {
        v.iter().map(|&i| NodeId(i)).collect()
    }

    #[test]
    fn prefix_and_suffix_rules_and_round_robin_eviction() {
        let mut c = PathCache::new(2);
        c.add(&ids(&[0, 1]));
        c.add(&ids(&[0, 1, 2, 3])); // extends [0 1]
        assert_eq!(c.paths().collect::<Vec<_>>(), vec![&ids(&[0, 1, 2, 3])]);
        c.add(&ids(&[0, 1, 2])); // contained: nothing changes
        assert_eq!(c.paths().count(), 1);
        c.add(&ids(&[0, 5]));
        c.add(&ids(&[0, 6])); // full: evicts slot 0, then slot 1
        assert_eq!(
            c.paths().collect::<Vec<_>>(),
            vec![&ids(&[0, 6]), &ids(&[0, 5])]
        );
    }

    #[test]
    fn shortest_route_wins_and_secondary_routes_are_promoted_for_use() {
        let mut rc = RouteCache::new(NodeId(0), 30, 64);
        assert!(rc.add_route(&ids(&[0, 1, 2, 3, 4])));
        assert!(!rc.add_route(&ids(&[1, 2])), "must start here");
        // Overheard: 7 sent a packet along 9 7 8 4; we are not on it.
        assert!(rc.notice_route_used(&ids(&[9, 7, 8, 4]), Some(1)));
        assert_eq!(rc.secondary().paths().next(), Some(&ids(&[0, 7, 8, 4])));
        assert_eq!(
            rc.find(NodeId(4), false),
            Some(ids(&[0, 7, 8, 4])),
            "3 hops beat 4"
        );
        assert_eq!(
            rc.find(NodeId(2), false),
            Some(ids(&[0, 1, 2])),
            "prefix up to the destination"
        );
        assert_eq!(rc.find(NodeId(4), true), Some(ids(&[0, 7, 8, 4])));
        assert_eq!(rc.secondary().paths().count(), 0, "promoted");
        assert_eq!(rc.primary().paths().count(), 2);
        assert_eq!(rc.find(NodeId(5), false), None);
    }

    #[test]
    fn a_dead_link_truncates_routes() {
        let mut rc = RouteCache::new(NodeId(0), 30, 64);
        rc.add_route(&ids(&[0, 1, 2, 3]));
        rc.add_route(&ids(&[0, 4, 3]));
        assert!(rc.dead_link(NodeId(1), NodeId(2)));
        assert_eq!(rc.find(NodeId(3), false), Some(ids(&[0, 4, 3])));
        assert_eq!(
            rc.find(NodeId(1), false),
            Some(ids(&[0, 1])),
            "the part before the break stays"
        );
        assert!(rc.dead_link(NodeId(0), NodeId(4)));
        assert_eq!(rc.find(NodeId(3), false), None);
        assert!(!rc.dead_link(NodeId(7), NodeId(8)));
    }
}
