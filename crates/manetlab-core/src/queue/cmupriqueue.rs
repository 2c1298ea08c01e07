//! ns-2's `CMUPriQueue` (queue/dsr-priqueue.cc), the interface queue ns-2.35's
//! DSR requires: four drop-tail bands served in strict priority —
//! routing control, real-time (audio/video, which no manetlab flow produces),
//! TCP ACKs (`PT_ACK`: segments without payload from a TCP receiver), then
//! everything else (TCP data, CBR, ARP). Each band holds `band_limit_pkts`
//! waiting packets (ns-2 `IFQ_MAXLEN` 50, fixed: ns-2 ignores the script's
//! `ifqLen`) besides the one the MAC holds; a packet arriving to a full band
//! is dropped (`ifq.IFQ`), whatever the other bands hold.

use super::{Queue, Queued};
use crate::ids::NodeId;
use crate::sim::SimTime;
use crate::wire::DropReason;
use crate::wire::{Packet, TransportHeader};
use std::collections::VecDeque;

const BANDS: usize = 4;
const ROUTING: usize = 0;
const LOW_DELAY: usize = 2;
const NORMAL: usize = 3;

pub struct CmuPriQueue {
    bands: [VecDeque<Queued>; BANDS],
    band_limit_pkts: usize,
}

impl CmuPriQueue {
    pub fn new(band_limit_pkts: u32) -> Self {
        CmuPriQueue {
            bands: Default::default(),
            band_limit_pkts: band_limit_pkts.max(1) as usize,
        }
    }

    /// ns-2 `prq_assign_queue`.
    fn band(item: &Queued) -> usize {
        if item.arp.is_some() {
            return NORMAL;
        }
        let p = &item.pkt;
        if p.is_routing() {
            return ROUTING;
        }
        match &p.transport {
            // ns-2's TCPSink sends PT_ACK packets; the sender's first (SYN-like)
            // packet and a FIN are PT_TCP.
            TransportHeader::Tcp(h) if p.payload_bytes == 0 && !h.flags.syn && !h.flags.fin => {
                LOW_DELAY
            }
            _ => NORMAL,
        }
    }
}

impl Queue for CmuPriQueue {
    fn enqueue(&mut self, _now: SimTime, item: Queued) -> Result<(), (Queued, DropReason)> {
        let b = &mut self.bands[Self::band(&item)];
        if b.len() >= self.band_limit_pkts {
            return Err((item, DropReason::QueueOverflow));
        }
        b.push_back(item);
        Ok(())
    }
    fn dequeue(&mut self, _now: SimTime, _dropped: &mut Vec<Queued>) -> Option<Queued> {
        self.bands.iter_mut().find_map(|b| b.pop_front())
    }
    fn len(&self) -> usize {
        self.bands.iter().map(VecDeque::len).sum()
    }
    /// ns-2 DSR takes packets for a failed next hop back with `prq_get_nexthop`,
    /// band by band, each in queue order.
    fn drain_for(&mut self, next_hop: NodeId, out: &mut Vec<Queued>) {
        for b in &mut self.bands {
            let mut keep = VecDeque::with_capacity(b.len());
            for item in b.drain(..) {
                if item.next_hop == Some(next_hop) {
                    out.push(item);
                } else {
                    keep.push_back(item);
                }
            }
            *b = keep;
        }
    }
    fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        for item in self.bands.iter().flatten() {
            if item.arp.is_none() {
                f(&item.pkt);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::droptail::tests::pkt;
    use crate::wire::{IpProto, TcpFlags, TcpHeader};

    fn tcp(uid: u64, payload_bytes: u32, syn: bool) -> Queued {
        let mut q = pkt(uid);
        let h = TcpHeader::for_tests(TcpFlags {
            syn,
            ack: !syn,
            fin: false,
        });
        std::rc::Rc::make_mut(&mut q.pkt).ip.proto = IpProto::Tcp;
        std::rc::Rc::make_mut(&mut q.pkt).transport = TransportHeader::Tcp(h);
        std::rc::Rc::make_mut(&mut q.pkt).payload_bytes = payload_bytes;
        q
    }

    fn routing(uid: u64) -> Queued {
        let mut q = pkt(uid);
        std::rc::Rc::make_mut(&mut q.pkt).ip.proto = IpProto::Manet;
        q
    }

    fn order(q: &mut CmuPriQueue) -> Vec<u64> {
        std::iter::from_fn(|| q.dequeue(SimTime::ZERO, &mut Vec::new()))
            .map(|i| i.pkt.uid)
            .collect()
    }

    #[test]
    fn routing_then_tcp_acks_then_the_rest_each_in_arrival_order() {
        let mut q = CmuPriQueue::new(50);
        for item in [
            pkt(1),
            tcp(2, 1000, false),
            tcp(3, 0, false),
            routing(4),
            tcp(5, 0, true),
            tcp(6, 0, false),
            routing(7),
        ] {
            q.enqueue(SimTime::ZERO, item).unwrap();
        }
        assert_eq!(q.len(), 7);
        // The SYN-like first packet is PT_TCP in ns-2, not an ACK.
        assert_eq!(order(&mut q), vec![4, 7, 3, 6, 1, 2, 5]);
    }

    #[test]
    fn each_band_holds_its_own_limit_and_drops_the_arrival() {
        let mut q = CmuPriQueue::new(2);
        q.enqueue(SimTime::ZERO, pkt(1)).unwrap();
        q.enqueue(SimTime::ZERO, pkt(2)).unwrap();
        let (dropped, why) = q.enqueue(SimTime::ZERO, pkt(3)).unwrap_err();
        assert_eq!((dropped.pkt.uid, why), (3, DropReason::QueueOverflow));
        // A full data band does not stop routing packets or ACKs.
        q.enqueue(SimTime::ZERO, routing(4)).unwrap();
        q.enqueue(SimTime::ZERO, tcp(5, 0, false)).unwrap();
        assert_eq!(order(&mut q), vec![4, 5, 1, 2]);
    }

    #[test]
    fn packets_for_a_failed_next_hop_come_back_band_by_band() {
        let mut q = CmuPriQueue::new(50);
        let to = |mut i: Queued, n: u32| {
            i.next_hop = Some(NodeId(n));
            i
        };
        for item in [
            to(pkt(1), 7),
            to(tcp(2, 0, false), 7),
            to(pkt(3), 8),
            to(routing(4), 7),
        ] {
            q.enqueue(SimTime::ZERO, item).unwrap();
        }
        let mut out = Vec::new();
        q.drain_for(NodeId(7), &mut out);
        assert_eq!(
            out.iter().map(|i| i.pkt.uid).collect::<Vec<_>>(),
            vec![4, 2, 1]
        );
        assert_eq!(order(&mut q), vec![3]);
    }
}
