//! Priority drop-tail (ns-2 `Queue/DropTail/PriQueue` with `Prefer_Routing_Protocols 1`):
//! routing packets jump to the head of the queue; when that overfills the queue
//! the packet at the tail is dropped, so routing traffic is never the victim.
//! Capacity as ns-2 (`recvHighPriority` drops when `length >= qlim_`, DropTail
//! when `length + 1 >= qlim_`): `limit − 1` waiting packets.

use super::droptail::DropTail;
use super::{Queue, Queued};
use crate::sim::SimTime;
use crate::wire::DropReason;

pub struct PriQueue {
    inner: DropTail,
    limit_pkts: usize,
}

impl PriQueue {
    pub fn new(limit_pkts: u32) -> Self {
        let inner = DropTail::ns2(limit_pkts);
        let limit_pkts = inner.capacity_pkts();
        PriQueue { inner, limit_pkts }
    }
}

impl Queue for PriQueue {
    fn enqueue(&mut self, now: SimTime, item: Queued) -> Result<(), (Queued, DropReason)> {
        if !item.pkt.is_routing() {
            return self.inner.enqueue(now, item);
        }
        self.inner.q.push_front(item);
        if self.inner.q.len() > self.limit_pkts {
            return Err((
                self.inner.q.pop_back().expect("queue is over its limit"),
                DropReason::QueueOverflow,
            ));
        }
        Ok(())
    }
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<Queued>) -> Option<Queued> {
        self.inner.dequeue(now, dropped)
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&crate::wire::Packet)) {
        self.inner.for_each_packet(f)
    }
    fn drain_for(&mut self, next_hop: crate::ids::NodeId, out: &mut Vec<Queued>) {
        self.inner.drain_for(next_hop, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::droptail::tests::pkt;
    use crate::wire::IpProto;

    #[test]
    fn routing_packets_go_first_and_evict_the_tail() {
        let mut q = PriQueue::new(3); // ns-2 qlim_ 3: two waiting
        q.enqueue(SimTime::ZERO, pkt(1)).unwrap();
        q.enqueue(SimTime::ZERO, pkt(2)).unwrap();
        let mut r = pkt(3);
        std::rc::Rc::make_mut(&mut r.pkt).ip.proto = IpProto::Manet;
        let (evicted, why) = q.enqueue(SimTime::ZERO, r).unwrap_err();
        assert_eq!((evicted.pkt.uid, why), (2, DropReason::QueueOverflow));
        let mut d = Vec::new();
        assert_eq!(q.dequeue(SimTime::ZERO, &mut d).unwrap().pkt.uid, 3);
        assert_eq!(q.dequeue(SimTime::ZERO, &mut d).unwrap().pkt.uid, 1);
        // Data still tail-drops when full.
        q.enqueue(SimTime::ZERO, pkt(4)).unwrap();
        q.enqueue(SimTime::ZERO, pkt(5)).unwrap();
        assert_eq!(q.enqueue(SimTime::ZERO, pkt(6)).unwrap_err().0.pkt.uid, 6);
    }
}
