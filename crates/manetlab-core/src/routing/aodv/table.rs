//! The AODV routing table (RFC 3561 §2, §6.1, §6.2): one entry per destination
//! with its sequence number, hop count, next hop, lifetime, state and precursor
//! list.
//!
//! Freshness (§6.2): information about a destination replaces an entry only if
//! its sequence number is newer, or equal with fewer hops, or the entry's
//! sequence number is unknown, or equal and the entry is invalid. A stale
//! reply therefore never replaces a fresher route — the property that keeps
//! AODV loop-free.
//!
//! Entries are kept in a `BTreeMap` so that every walk over the table (link
//! breaks, RERR lists) is in destination order: runs stay deterministic.

use crate::ids::NodeId;
use crate::sim::SimTime;
use std::collections::BTreeMap;

/// `a` is newer than `b` in 32-bit sequence-number arithmetic (RFC 3561 §6.1:
/// compare as signed 32-bit difference, so numbers may wrap).
pub fn seq_newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteState {
    /// Usable until `expires`.
    Valid,
    /// Broken or expired; the entry keeps its sequence number and last hop count.
    Invalid,
    /// Link broke and this node is repairing locally (§6.12): packets are buffered.
    Repairing,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub dst: NodeId,
    pub seq: u32,
    /// False until a sequence number for `dst` has been learned (§6.2).
    pub valid_seq: bool,
    pub hops: u8,
    pub next_hop: NodeId,
    pub state: RouteState,
    pub expires: SimTime,
    /// Neighbours that use this node to reach `dst` (they get our RERRs).
    pub precursors: Vec<NodeId>,
    /// Hop count when the route last went down (ns-2 `rt_last_hop_count`);
    /// `None` while it never has (ns-2's `INFINITY2`). A request starts its
    /// expanding ring from here.
    pub last_hops: Option<u8>,
}

impl Route {
    /// Take the route down (RFC rules): it keeps its number, remembers its hop
    /// count for the next request, and loses its precursors. The ns-2 rules use
    /// [`down_ns2`](Self::down_ns2) instead.
    pub fn down(&mut self) {
        if self.state != RouteState::Invalid {
            self.last_hops = Some(self.hops);
            self.state = RouteState::Invalid;
        }
        self.precursors.clear();
    }

    /// ns-2's `rt_down` exactly: the hop count is remembered for the next
    /// request, the lifetime becomes 0 (`rt_expire = 0`), and the precursor
    /// list survives (ns-2 empties it only when it passes a RERR on, and
    /// removes a lost neighbour from it), so a route set up again later, e.g.
    /// by a request, still has its old precursors and a later RERR for it is
    /// passed upstream. ns-2 never deletes an entry: it stays down until new
    /// information brings it up (no DELETE_PERIOD).
    pub fn down_ns2(&mut self) {
        if self.state == RouteState::Invalid {
            return;
        }
        self.last_hops = Some(self.hops);
        self.state = RouteState::Invalid;
        self.expires = SimTime::ZERO;
    }

    pub fn add_precursor(&mut self, n: NodeId) {
        if !self.precursors.contains(&n) {
            self.precursors.push(n);
        }
    }
}

/// Information about a route learned from a control message.
#[derive(Clone, Copy, Debug)]
pub struct RouteInfo {
    pub dst: NodeId,
    /// `None`: the message carried no valid sequence number.
    pub seq: Option<u32>,
    pub hops: u8,
    pub next_hop: NodeId,
    pub expires: SimTime,
}

#[derive(Default)]
pub struct RouteTable {
    routes: BTreeMap<NodeId, Route>,
}

impl RouteTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, dst: NodeId) -> Option<&Route> {
        self.routes.get(&dst)
    }

    pub fn get_mut(&mut self, dst: NodeId) -> Option<&mut Route> {
        self.routes.get_mut(&dst)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Route> {
        self.routes.values()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Route> {
        self.routes.values_mut()
    }

    /// The usable route to `dst` at `now` (RFC rules). A valid route whose
    /// lifetime has passed is invalidated here (lazily) with its sequence
    /// number incremented (§6.1: a node may bump a destination's number when
    /// its route expires) and its precursors cleared. The ns-2 rules never
    /// call this on their default path: there a route is expired only by the
    /// purge timer (`rt_purge` → [`Route::down_ns2`], precursors kept); only
    /// HELLO-learned routes (HELLO detection is not in ns-2's build) use it.
    pub fn active(&mut self, now: SimTime, dst: NodeId) -> Option<&mut Route> {
        let r = self.routes.get_mut(&dst)?;
        if r.state == RouteState::Valid && r.expires <= now {
            r.seq = r.seq.wrapping_add(1);
            r.down();
        }
        if r.state == RouteState::Valid {
            Some(r)
        } else {
            None
        }
    }

    /// Apply route information under the freshness rules of §6.2. Returns true
    /// if the entry was created or replaced (it is then valid).
    pub fn update(&mut self, now: SimTime, info: RouteInfo) -> bool {
        let Some(r) = self.routes.get_mut(&info.dst) else {
            self.routes.insert(
                info.dst,
                Route {
                    dst: info.dst,
                    seq: info.seq.unwrap_or(0),
                    valid_seq: info.seq.is_some(),
                    hops: info.hops,
                    next_hop: info.next_hop,
                    state: RouteState::Valid,
                    expires: info.expires,
                    precursors: Vec::new(),
                    last_hops: None,
                },
            );
            return true;
        };
        let usable = r.state == RouteState::Valid && r.expires > now;
        if info.seq.is_none() && usable && r.hops == info.hops && r.next_hop == info.next_hop {
            // The same neighbour route heard again: only its lifetime moves.
            r.expires = r.expires.max(info.expires);
            return false;
        }
        let accept = match info.seq {
            // A neighbour heard directly (no sequence number): a one-hop route is
            // always right for it, but it must not overwrite a route that has a
            // known sequence number unless that route is unusable.
            None => !usable || !r.valid_seq || (r.hops > info.hops),
            Some(s) => {
                !r.valid_seq
                    || seq_newer(s, r.seq)
                    || (s == r.seq && (!usable || info.hops < r.hops))
            }
        };
        if !accept {
            return false;
        }
        if let Some(s) = info.seq {
            r.seq = s;
            r.valid_seq = true;
        }
        if r.next_hop != info.next_hop || !usable {
            r.precursors.clear();
        }
        r.hops = info.hops;
        r.next_hop = info.next_hop;
        r.state = RouteState::Valid;
        r.expires = if usable {
            r.expires.max(info.expires)
        } else {
            info.expires
        };
        true
    }

    /// ns-2's freshness test (`recvReply`, `recvRequest`): newer number, or the
    /// same number and fewer hops than the entry has. ns-2 looks at neither the
    /// route's flags nor its lifetime: only `rt_down` sets the hop count to
    /// `INFINITY2`, so an invalid entry takes any reply with its number, but a
    /// route under local repair (or up past its lifetime, until the purge timer
    /// sees it) keeps its hop count, and a reply with the same number and as
    /// many or more hops is turned down. That is why ns-2's local repair, whose
    /// request carries the route's own number, is answered by the neighbours
    /// (which hold that number) and yet never repaired by them.
    ///
    /// An accepted update is ns-2's `rt_update`: number, hops, next hop, up,
    /// and the lifetime set to exactly `info.expires` whatever the entry had
    /// (callers pass ns-2's value: `max(rt_expire, now + REV_ROUTE_LIFE)` for a
    /// request, `now + rp_lifetime` for a reply); the precursor list is left
    /// alone. Information without a number is judged as
    /// [`RouteTable::update`] does.
    pub fn update_ns2(&mut self, now: SimTime, info: RouteInfo) -> bool {
        let (Some(s), Some(r)) = (info.seq, self.routes.get_mut(&info.dst)) else {
            return self.update(now, info);
        };
        let hops = if r.state == RouteState::Invalid {
            u8::MAX
        } else {
            r.hops
        };
        let fresher = !r.valid_seq || seq_newer(s, r.seq) || (s == r.seq && info.hops < hops);
        if !fresher {
            return false;
        }
        r.seq = s;
        r.valid_seq = true;
        r.hops = info.hops;
        r.next_hop = info.next_hop;
        r.state = RouteState::Valid;
        r.expires = info.expires;
        true
    }

    /// Invalidate the route to `dst` (link break, RERR): the sequence number is
    /// set to `seq`, precursors are returned to the caller.
    pub fn invalidate(&mut self, dst: NodeId, seq: u32) -> Vec<NodeId> {
        let r = self
            .routes
            .get_mut(&dst)
            .expect("invalidate an existing route");
        r.seq = seq;
        r.valid_seq = true;
        let precursors = std::mem::take(&mut r.precursors);
        r.down();
        precursors
    }

    /// The route to `dst` if it is up, whatever its lifetime says (ns-2: a
    /// route stays up until the route-purge timer finds it expired).
    pub fn up(&mut self, dst: NodeId) -> Option<&mut Route> {
        self.routes
            .get_mut(&dst)
            .filter(|r| r.state == RouteState::Valid)
    }

    /// Extend a usable route's lifetime to at least `until` (§6.2: each use of a
    /// route for data refreshes it).
    pub fn refresh(&mut self, now: SimTime, dst: NodeId, until: SimTime) {
        if let Some(r) = self.active(now, dst) {
            r.expires = r.expires.max(until);
        }
    }

    pub fn len(&self) -> usize {
        self.routes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: f64) -> SimTime {
        SimTime::from_secs_f64(s)
    }

    fn info(seq: Option<u32>, hops: u8, next: u32) -> RouteInfo {
        RouteInfo {
            dst: NodeId(9),
            seq,
            hops,
            next_hop: NodeId(next),
            expires: t(10.0),
        }
    }

    #[test]
    fn sequence_numbers_compare_with_wraparound() {
        assert!(seq_newer(5, 4));
        assert!(!seq_newer(4, 5));
        assert!(!seq_newer(4, 4));
        assert!(seq_newer(1, u32::MAX), "1 follows 2^32 − 1");
        assert!(!seq_newer(u32::MAX, 1));
    }

    #[test]
    fn a_stale_rrep_never_replaces_a_fresher_route() {
        let mut rt = RouteTable::new();
        assert!(rt.update(t(0.0), info(Some(10), 3, 1)));
        // Older sequence number, even with fewer hops: rejected.
        assert!(!rt.update(t(0.0), info(Some(9), 1, 2)));
        let r = rt.get(NodeId(9)).unwrap();
        assert_eq!((r.seq, r.hops, r.next_hop), (10, 3, NodeId(1)));
        // Same number, more hops: rejected. Same number, fewer hops: accepted.
        assert!(!rt.update(t(0.0), info(Some(10), 4, 2)));
        assert!(rt.update(t(0.0), info(Some(10), 2, 2)));
        assert_eq!(rt.get(NodeId(9)).unwrap().next_hop, NodeId(2));
        // Newer number, more hops: accepted (freshness beats length).
        assert!(rt.update(t(0.0), info(Some(11), 6, 3)));
        let r = rt.get(NodeId(9)).unwrap();
        assert_eq!((r.seq, r.hops, r.next_hop), (11, 6, NodeId(3)));
        // An invalidated route keeps its (bumped) number: an RREP carrying the
        // number the route had before the break is still stale.
        rt.invalidate(NodeId(9), 12);
        assert!(!rt.update(t(0.0), info(Some(11), 1, 4)));
        assert!(rt.active(t(0.0), NodeId(9)).is_none());
        // Equal number on an invalid route is accepted (§6.2 (iv)).
        assert!(rt.update(t(0.0), info(Some(12), 5, 4)));
        assert!(rt.active(t(0.0), NodeId(9)).is_some());
    }

    #[test]
    fn unknown_sequence_numbers_and_neighbour_routes() {
        let mut rt = RouteTable::new();
        // A neighbour heard without a number creates a route without a valid number.
        assert!(rt.update(t(0.0), info(None, 1, 9)));
        assert!(!rt.get(NodeId(9)).unwrap().valid_seq);
        // Any numbered information replaces it.
        assert!(rt.update(t(0.0), info(Some(3), 2, 5)));
        assert!(rt.get(NodeId(9)).unwrap().valid_seq);
        // Hearing the destination directly again gives the shorter one-hop route
        // but keeps the known number.
        assert!(rt.update(t(0.0), info(None, 1, 9)));
        let r = rt.get(NodeId(9)).unwrap();
        assert_eq!(
            (r.seq, r.valid_seq, r.hops, r.next_hop),
            (3, true, 1, NodeId(9))
        );
    }

    #[test]
    fn ns2_freshness_compares_hops_whatever_the_state_except_for_a_route_that_is_down() {
        // ns-2 `recvReply`: newer, or equal with fewer hops; only `rt_down`
        // makes the hop count INFINITY2.
        let mut rt = RouteTable::new();
        rt.update(t(0.0), info(Some(4), 2, 1));
        rt.get_mut(NodeId(9)).unwrap().state = RouteState::Repairing;
        assert!(
            !rt.update_ns2(t(1.0), info(Some(4), 2, 2)),
            "same number, as many hops"
        );
        assert!(
            !rt.update_ns2(t(1.0), info(Some(4), 4, 3)),
            "same number, more hops"
        );
        assert_eq!(rt.get(NodeId(9)).unwrap().state, RouteState::Repairing);
        // The RFC rule takes any equal number for a route that is not usable.
        let mut rfc = RouteTable::new();
        rfc.update(t(0.0), info(Some(4), 2, 1));
        rfc.get_mut(NodeId(9)).unwrap().state = RouteState::Repairing;
        assert!(rfc.update(t(1.0), info(Some(4), 4, 3)));
        // Up but past its lifetime (the purge timer has not seen it yet): still
        // compared by hops in ns-2.
        let mut old = RouteTable::new();
        old.update(t(0.0), info(Some(4), 2, 1));
        assert!(!old.update_ns2(t(20.0), info(Some(4), 3, 3)));
        assert!(old.update_ns2(t(20.0), info(Some(4), 1, 3)), "fewer hops");
        // Down: any reply with its number.
        rt.get_mut(NodeId(9)).unwrap().down_ns2();
        assert!(rt.update_ns2(t(1.0), info(Some(4), 6, 3)));
        let r = rt.get(NodeId(9)).unwrap();
        assert_eq!(
            (r.state, r.hops, r.next_hop),
            (RouteState::Valid, 6, NodeId(3))
        );
        // Older numbers never.
        assert!(!rt.update_ns2(t(1.0), info(Some(3), 1, 2)));
    }

    #[test]
    fn expired_routes_are_invalid_with_a_bumped_number() {
        let mut rt = RouteTable::new();
        rt.update(t(0.0), info(Some(4), 2, 1));
        rt.refresh(t(5.0), NodeId(9), t(12.0));
        assert!(rt.active(t(11.9), NodeId(9)).is_some());
        assert!(rt.active(t(12.0), NodeId(9)).is_none());
        let r = rt.get(NodeId(9)).unwrap();
        assert_eq!((r.state, r.seq), (RouteState::Invalid, 5));
    }
}
