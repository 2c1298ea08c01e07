//! Interface queues. A queue discipline decides what waits and what is dropped;
//! it never sees the link or MAC that drains it.

mod droptail;
mod lred;
mod priqueue;
mod red;

pub use droptail::DropTail;
pub use lred::{Lred, LredParams};
pub use priqueue::PriQueue;
pub use red::{Red, RedParams};

use crate::ids::NodeId;
use crate::metrics::DropReason;
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
