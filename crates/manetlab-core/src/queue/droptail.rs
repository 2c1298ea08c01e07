//! Drop-tail FIFO (ns-2 `Queue/DropTail`): a packet arriving to a full queue is dropped.
//!
//! ns-2's `DropTail::enque` drops when `length + 1 >= qlim_`, so a limit of 50
//! holds 49 waiting packets (plus the one the MAC or link holds): [`DropTail::ns2`].
//! [`DropTail::new`] holds `limit` waiting packets (point-to-point links).

use super::{Queue, Queued};
use crate::sim::SimTime;
use crate::wire::DropReason;
use std::collections::VecDeque;

pub struct DropTail {
    limit_pkts: usize,
    pub(crate) q: VecDeque<Queued>,
}

impl DropTail {
    pub fn new(limit_pkts: u32) -> Self {
        DropTail {
            limit_pkts: limit_pkts as usize,
            q: VecDeque::with_capacity(limit_pkts.min(1024) as usize),
        }
    }

    /// ns-2's capacity for `qlim_ = limit_pkts`: `limit_pkts − 1` waiting packets.
    pub fn ns2(limit_pkts: u32) -> Self {
        Self::new(limit_pkts.saturating_sub(1))
    }

    pub fn capacity_pkts(&self) -> usize {
        self.limit_pkts
    }
}

impl Queue for DropTail {
    fn enqueue(&mut self, _now: SimTime, item: Queued) -> Result<(), (Queued, DropReason)> {
        if self.q.len() >= self.limit_pkts {
            return Err((item, DropReason::QueueOverflow));
        }
        self.q.push_back(item);
        Ok(())
    }
    fn dequeue(&mut self, _now: SimTime, _dropped: &mut Vec<Queued>) -> Option<Queued> {
        self.q.pop_front()
    }
    fn len(&self) -> usize {
        self.q.len()
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&crate::wire::Packet)) {
        self.q.iter().for_each(|q| f(&q.pkt));
    }
    fn drain_for(&mut self, next_hop: crate::ids::NodeId, out: &mut Vec<Queued>) {
        if !self.q.iter().any(|q| q.next_hop == Some(next_hop)) {
            return;
        }
        let mut keep = std::collections::VecDeque::with_capacity(self.q.capacity());
        for q in self.q.drain(..) {
            if q.next_hop == Some(next_hop) {
                out.push(q);
            } else {
                keep.push_back(q);
            }
        }
        self.q = keep;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::wire::*;

    pub(crate) fn pkt(uid: u64) -> Queued {
        let pkt = crate::wire::test_support::udp_ns2(uid, 0, 1, 10);
        Queued::packet(std::rc::Rc::new(pkt), None)
    }

    #[test]
    fn fifo_and_tail_drop_at_limit() {
        let mut q = DropTail::new(2);
        assert!(q.enqueue(SimTime::ZERO, pkt(1)).is_ok());
        assert!(q.enqueue(SimTime::ZERO, pkt(2)).is_ok());
        assert_eq!(q.enqueue(SimTime::ZERO, pkt(3)).unwrap_err().0.pkt.uid, 3);
        assert_eq!(
            q.dequeue(SimTime::ZERO, &mut Vec::new()).unwrap().pkt.uid,
            1
        );
        assert_eq!(
            q.dequeue(SimTime::ZERO, &mut Vec::new()).unwrap().pkt.uid,
            2
        );
        assert!(q.dequeue(SimTime::ZERO, &mut Vec::new()).is_none());
    }

    #[test]
    fn ns2_limit_50_holds_49() {
        // ns-2 DropTail::enque: drop if length + 1 >= qlim_.
        let mut q = DropTail::ns2(50);
        for i in 0..49 {
            assert!(q.enqueue(SimTime::ZERO, pkt(i)).is_ok(), "packet {i}");
        }
        assert_eq!(
            q.enqueue(SimTime::ZERO, pkt(49)).unwrap_err().1,
            DropReason::QueueOverflow
        );
        assert_eq!(q.len(), 49);
    }
}
