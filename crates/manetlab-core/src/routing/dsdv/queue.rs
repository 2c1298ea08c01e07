//! Packets waiting for a route, as ns-2's DSDV keeps them (`forwardPacket`).
//!
//! DSDV is proactive, so the paper has no send buffer: a packet for a
//! destination without a usable route cannot be sent. ns-2 (CMU) queues it
//! instead, per destination (`rtable_ent::q`), whether this node originated or
//! forwards it: at most `MAX_QUEUE_LENGTH` = 5 packets per destination, the
//! oldest dropped when a sixth arrives (`DROP_RTR_QFULL`, "drop-front"), and no
//! timeout — a packet waits until an update brings a usable route, then all the
//! destination's packets are sent in order. We do the same; packets still
//! waiting when the run ends are neither delivered nor dropped (as in ns-2).

use crate::ids::NodeId;
use crate::wire::Packet;
use std::collections::{BTreeMap, VecDeque};

pub struct PacketQueue {
    per_dst: usize,
    q: BTreeMap<NodeId, VecDeque<Packet>>,
}

impl PacketQueue {
    pub fn new(per_dst: u32) -> Self {
        PacketQueue {
            per_dst: per_dst as usize,
            q: BTreeMap::new(),
        }
    }

    /// Queue `pkt` for its destination; returns the packet dropped to make room.
    pub fn push(&mut self, pkt: Packet) -> Option<Packet> {
        let q = self.q.entry(pkt.ip.dst).or_default();
        q.push_back(pkt);
        if q.len() > self.per_dst {
            q.pop_front()
        } else {
            None
        }
    }

    /// Remove and return the packets for `dst`, oldest first.
    pub fn take_for(&mut self, dst: NodeId) -> VecDeque<Packet> {
        self.q.remove(&dst).unwrap_or_default()
    }

    pub fn has_for(&self, dst: NodeId) -> bool {
        self.q.contains_key(&dst)
    }

    /// Every waiting packet, by destination then age.
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.q.values().flatten()
    }

    /// Packets waiting, all destinations together.
    pub fn len(&self) -> usize {
        self.q.values().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(uid: u64, dst: u32) -> Packet {
        crate::wire::test_support::udp_ns2(uid, 0, dst, 10)
    }

    #[test]
    fn five_per_destination_oldest_dropped_first() {
        let mut q = PacketQueue::new(5);
        for uid in 1..=5 {
            assert!(q.push(pkt(uid, 7)).is_none());
        }
        assert!(
            q.push(pkt(100, 8)).is_none(),
            "the limit is per destination"
        );
        assert_eq!(q.push(pkt(6, 7)).map(|p| p.uid), Some(1), "drop-front");
        assert_eq!(q.len(), 6);
        let out: Vec<u64> = q.take_for(NodeId(7)).into_iter().map(|p| p.uid).collect();
        assert_eq!(out, vec![2, 3, 4, 5, 6]);
        assert!(!q.has_for(NodeId(7)) && q.has_for(NodeId(8)));
    }
}
