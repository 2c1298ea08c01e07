//! Interface queues. A queue discipline decides what waits and what is dropped;
//! it never sees the link or MAC that drains it.

mod droptail;

pub use droptail::DropTail;

use crate::packet::Packet;
use crate::sim::SimTime;

/// A packet queue in front of a transmitter.
pub trait Queue {
    /// Offer a packet; `Err` hands it back as dropped (reason: queue overflow).
    fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<(), Packet>;
    /// Next packet to transmit.
    fn dequeue(&mut self, now: SimTime) -> Option<Packet>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
