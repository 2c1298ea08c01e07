//! Interface queues. A queue discipline decides what waits and what is dropped;
//! it never sees the link or MAC that drains it.

mod cmupriqueue;
mod droptail;
mod lred;
mod priqueue;
mod red;

pub use cmupriqueue::CmuPriQueue;
pub use droptail::DropTail;
pub use lred::{Lred, LredParams};
pub use priqueue::PriQueue;
pub use red::{Red, RedParams};

use crate::ids::NodeId;
use crate::sim::SimTime;
use crate::wire::DropReason;
use crate::wire::Packet;
use std::rc::Rc;

/// A packet waiting for a transmitter, with the neighbour it is for
/// (ns-2 keeps this in the common header's `next_hop_`). The packet is an
/// `Rc`: it comes so from its event and goes on so to the MAC (whose frames
/// share it), so queueing moves a few words, not a packet.
#[derive(Debug)]
pub struct Queued {
    pub pkt: Rc<Packet>,
    pub next_hop: Option<NodeId>,
    /// An ARP message queued like a data packet (ns-2 sends ARP through the
    /// interface queue); `pkt` then only stands in for it in the disciplines
    /// (a non-routing packet of ARP's 28 bytes, see [`Queued::arp`]).
    pub arp: Option<crate::wire::arp::ArpMsg>,
}

impl Queued {
    pub fn packet(pkt: Rc<Packet>, next_hop: Option<NodeId>) -> Self {
        Queued {
            pkt,
            next_hop,
            arp: None,
        }
    }

    /// An ARP message from `m.sender` to `next_hop` (`None` = broadcast).
    pub fn arp(m: crate::wire::arp::ArpMsg, next_hop: Option<NodeId>) -> Self {
        use crate::wire::{
            IpHeader, IpProto, TransportHeader, UdpHeader, DEFAULT_TTL, IP_BROADCAST,
        };
        // Stand-in: IP 20 + UDP 8 + 0 = 28 bytes, the ARP message's size; never sent.
        let pkt = Packet::new(
            0,
            IpHeader::new(
                m.sender,
                next_hop.unwrap_or(IP_BROADCAST),
                DEFAULT_TTL,
                IpProto::Udp,
            ),
            TransportHeader::Udp(UdpHeader {
                src_port: 0,
                dst_port: 0,
                on_wire: false,
            }),
            0,
        );
        Queued {
            pkt: Rc::new(pkt),
            next_hop,
            arp: Some(m),
        }
    }
}

/// A packet queue in front of a transmitter.
pub trait Queue {
    /// Offer a packet; `Err` hands back a dropped packet (the offered one, or one
    /// the discipline evicted) with the reason.
    fn enqueue(&mut self, now: SimTime, item: Queued) -> Result<(), (Queued, DropReason)>;
    /// Next packet to transmit. Packets the discipline discards on the way
    /// (LRED's head-of-line drops, reason `EarlyDrop`) are pushed to `dropped`.
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<Queued>) -> Option<Queued>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// MAC feedback: a unicast frame finished after `retries` retransmissions.
    fn mac_feedback(&mut self, _retries: u32) {}
    /// Whether link-layer adaptive pacing is on (LRED turns it on).
    fn pacing(&self) -> bool {
        false
    }
    /// Remove every packet waiting for `next_hop`, in queue order, into `out`
    /// (ns-2 `PriQueue::filter`, used by routing after a link break). The
    /// default keeps them: a discipline that can remove packets overrides it.
    fn drain_for(&mut self, _next_hop: NodeId, _out: &mut Vec<Queued>) {}
    /// Every waiting packet, head first (end-of-run packet accounting,
    /// docs/metrics.md). A discipline that holds packets must list them.
    fn for_each_packet(&self, _f: &mut dyn FnMut(&Packet)) {}
}
