//! The RREQ id cache (RFC 3561 §6.3, §6.5): which (originator, RREQ ID) pairs
//! this node has already processed, so each request is handled — and
//! rebroadcast — at most once. Entries live for a fixed time (ns-2
//! `BCAST_ID_SAVE`, RFC PATH_DISCOVERY_TIME), so insertions arrive in expiry
//! order and a FIFO gives O(1) expiry.

use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime};
use std::collections::{HashSet, VecDeque};

pub struct RreqCache {
    lifetime: SimDuration,
    seen: HashSet<(NodeId, u32)>,
    /// (expiry, key) in insertion (= expiry) order.
    order: VecDeque<(SimTime, (NodeId, u32))>,
}

impl RreqCache {
    pub fn new(lifetime: SimDuration) -> Self {
        RreqCache {
            lifetime,
            seen: HashSet::new(),
            order: VecDeque::new(),
        }
    }

    fn expire(&mut self, now: SimTime) {
        while let Some(&(t, key)) = self.order.front() {
            if t > now {
                break;
            }
            self.order.pop_front();
            self.seen.remove(&key);
        }
    }

    /// Record `(originator, id)`; false if it was already there (a duplicate).
    pub fn insert(&mut self, now: SimTime, originator: NodeId, id: u32) -> bool {
        self.expire(now);
        if !self.seen.insert((originator, id)) {
            return false;
        }
        self.order
            .push_back((now + self.lifetime, (originator, id)));
        true
    }

    pub fn contains(&mut self, now: SimTime, originator: NodeId, id: u32) -> bool {
        self.expire(now);
        self.seen.contains(&(originator, id))
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_caught_until_the_entry_expires() {
        let mut c = RreqCache::new(SimDuration::from_secs_f64(6.0));
        let t0 = SimTime::from_secs_f64(1.0);
        assert!(c.insert(t0, NodeId(4), 7));
        assert!(!c.insert(t0, NodeId(4), 7), "same request again");
        assert!(c.insert(t0, NodeId(4), 8), "next id of the same originator");
        assert!(
            c.insert(t0, NodeId(5), 7),
            "same id from another originator"
        );
        assert!(c.contains(SimTime::from_secs_f64(6.9), NodeId(4), 7));
        assert!(
            !c.contains(SimTime::from_secs_f64(7.0), NodeId(4), 7),
            "expired after 6 s"
        );
        assert!(c.is_empty());
    }
}
