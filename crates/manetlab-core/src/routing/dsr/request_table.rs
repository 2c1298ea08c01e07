//! The DSR route request table (RFC 4728 §4.3), as ns-2's `RequestTable`
//! (`dsr/requesttable.cc`) uses it, in two parts:
//!
//! * for each **originator**, the highest request identification this node has
//!   processed: a request with an identification not above it is a duplicate
//!   (ns-2 keeps one number per originator, where the RFC keeps the last
//!   RequestTableIds (16) identifications; with increasing identifications
//!   they agree);
//! * for each **target** this node discovers routes to, the state of the
//!   discovery: how many request cycles are outstanding, when the last one
//!   started, whether the last request sent was non-propagating. That drives
//!   the backoff between cycles (ns-2 `BackOffTest`).
//!
//! ns-2 bounds the table at 128 entries (FIFO replacement); ours is unbounded,
//! which is the same for networks of up to 128 nodes.

use crate::ids::NodeId;
use crate::sim::{SimTime, Timer};
use std::collections::BTreeMap;

/// The kind of the last request sent for a target (ns-2 `LIMIT0`/`UNLIMIT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// Non-propagating (max propagation 0): only neighbours answer.
    NonPropagating,
    Propagating,
}

/// Discovery state for one target.
#[derive(Debug)]
pub struct Discovery {
    /// Request cycles started since the last reply (ns-2 `rt_reqs_outstanding`).
    pub outstanding: u32,
    /// When the last cycle started (ns-2 `last_rt_req`).
    pub last_cycle: Option<SimTime>,
    /// When the last request was sent, and its kind.
    pub last_request: SimTime,
    pub last_kind: RequestKind,
    /// When this discovery began (first request since a route was last known).
    pub started: Option<SimTime>,
    pub timer: Timer,
}

impl Discovery {
    fn new() -> Self {
        Discovery {
            outstanding: 0,
            last_cycle: None,
            last_request: SimTime::ZERO,
            last_kind: RequestKind::Propagating,
            started: None,
            timer: Timer::new(),
        }
    }
}

#[derive(Debug, Default)]
pub struct RequestTable {
    seen: BTreeMap<NodeId, u32>,
    targets: BTreeMap<NodeId, Discovery>,
}

impl RequestTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether request `id` of `originator` was already processed.
    pub fn seen(&self, originator: NodeId, id: u32) -> bool {
        self.seen.get(&originator).is_some_and(|&last| last >= id)
    }

    /// Record that request `id` of `originator` is being processed.
    pub fn record(&mut self, originator: NodeId, id: u32) {
        self.seen.insert(originator, id);
    }

    /// The discovery state for `target`, created on first use.
    pub fn target(&mut self, target: NodeId) -> &mut Discovery {
        self.targets.entry(target).or_insert_with(Discovery::new)
    }

    pub fn get(&self, target: NodeId) -> Option<&Discovery> {
        self.targets.get(&target)
    }

    /// A route to `target` arrived: back the counters down (ns-2
    /// `acceptRouteReply`: `rt_reqs_outstanding = 0`, `last_rt_req = 0`).
    /// Returns when the discovery started, if one was under way.
    pub fn route_found(&mut self, target: NodeId) -> Option<SimTime> {
        let d = self.targets.get_mut(&target)?;
        d.outstanding = 0;
        d.last_cycle = None;
        d.timer.cancel();
        d.started.take()
    }

    /// A route to `target` was learned without a reply (snooped, or a reply
    /// for another target): the discovery is over, but the backoff stays, as
    /// ns-2 backs its counters down only in `acceptRouteReply`.
    /// Returns when the discovery started, if one was under way.
    pub fn route_learned(&mut self, target: NodeId) -> Option<SimTime> {
        let d = self.targets.get_mut(&target)?;
        d.timer.cancel();
        d.started.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_requests_not_newer_than_the_last_processed() {
        let mut t = RequestTable::new();
        assert!(!t.seen(NodeId(1), 1));
        t.record(NodeId(1), 3);
        assert!(t.seen(NodeId(1), 3));
        assert!(t.seen(NodeId(1), 2));
        assert!(!t.seen(NodeId(1), 4));
        assert!(!t.seen(NodeId(2), 1));
    }

    #[test]
    fn a_reply_resets_the_backoff() {
        let mut t = RequestTable::new();
        let d = t.target(NodeId(5));
        d.outstanding = 3;
        d.last_cycle = Some(SimTime::from_secs_f64(1.0));
        d.started = Some(SimTime::from_secs_f64(0.5));
        assert_eq!(t.route_found(NodeId(5)), Some(SimTime::from_secs_f64(0.5)));
        let d = t.get(NodeId(5)).unwrap();
        assert_eq!((d.outstanding, d.last_cycle), (0, None));
        assert_eq!(t.route_found(NodeId(6)), None);
    }
}
