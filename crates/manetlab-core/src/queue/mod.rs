//! Interface queues. A queue discipline decides what waits and what is dropped;
//! it never sees the link or MAC that drains it.

mod droptail;

pub use droptail::DropTail;

use crate::ids::NodeId;
use crate::packet::Packet;
use crate::sim::SimTime;

/// A packet waiting for a transmitter, with the neighbour it is for
/// (ns-2 keeps this in the common header's `next_hop_`).
#[derive(Debug)]
pub struct Queued {
    pub pkt: Packet,
    pub next_hop: Option<NodeId>,
}

/// A packet queue in front of a transmitter.
pub trait Queue {
    /// Offer a packet; `Err` hands it back as dropped (reason: queue overflow).
    fn enqueue(&mut self, now: SimTime, item: Queued) -> Result<(), Queued>;
    /// Next packet to transmit.
    fn dequeue(&mut self, now: SimTime) -> Option<Queued>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
