//! Point-to-point duplex link, modelled on ns-2's `duplex-link`: each direction has
//! its own drop-tail queue, a transmitter that serialises one packet at a time at
//! the link bandwidth, and a propagation delay. An optional i.i.d. packet error
//! rate drops packets on arrival (ns-2 `ErrorModel` attached to the link).
//!
//! The queue limit counts waiting packets; the packet being serialised is not in
//! the queue (as in ns-2, where it sits in the link's `LinkDelay`).

use crate::ids::{LinkId, NodeId};
use crate::queue::{DropTail, Queue, Queued};
use crate::sim::{stream, Component, SimDuration, SimRng, SimTime};
use crate::wire::{Packet, TransportHeader};
use rand::Rng;
use std::rc::Rc;

/// One direction of a duplex link.
pub struct Direction {
    pub from: NodeId,
    pub to: NodeId,
    queue: DropTail,
    busy: bool,
    rng: SimRng,
    pub stats: DirectionStats,
}

#[derive(Clone, Debug, Default)]
pub struct DirectionStats {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub busy_time: SimDuration,
    pub queue_drops: u64,
    pub error_drops: u64,
    pub max_queue_pkts: u32,
}

pub struct P2pLink {
    pub id: LinkId,
    pub bandwidth_bps: f64,
    pub delay: SimDuration,
    pub error_rate: f64,
    pub dirs: [Direction; 2],
    /// Test hook: TCP data segment numbers to drop once in direction 0 (a → b);
    /// see [`P2pLink::scripted_drop`].
    pub drop_tcp_segments: Vec<u64>,
}

/// What the simulator must schedule after the link accepted or finished a packet.
#[derive(Debug, PartialEq)]
pub enum LinkStep {
    /// Transmission started: the transmitter frees at `tx_done`, the packet arrives at `arrive`.
    Started {
        tx_done: SimTime,
        arrive: SimTime,
        pkt: Rc<Packet>,
    },
    /// Queued behind other packets.
    Queued,
    /// Queue full: the packet is dropped (ns-2 reason `IFQ`).
    Dropped(Rc<Packet>),
    /// Nothing to send.
    Idle,
}

impl P2pLink {
    // One argument per link property the scenario gives; a config struct would
    // only rename them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: LinkId,
        a: NodeId,
        b: NodeId,
        bandwidth_bps: f64,
        delay: SimDuration,
        queue_limit: u32,
        error_rate: f64,
        seed: u64,
    ) -> Self {
        let dir = |d: u64, from, to| Direction {
            from,
            to,
            queue: DropTail::new(queue_limit),
            busy: false,
            rng: stream(seed, 2 * id.0 as u64 + d, Component::LinkError),
            stats: DirectionStats::default(),
        };
        P2pLink {
            id,
            bandwidth_bps,
            delay,
            error_rate,
            dirs: [dir(0, a, b), dir(1, b, a)],
            drop_tcp_segments: Vec::new(),
        }
    }

    /// Packets waiting in direction `d`'s queue (not the one being serialised,
    /// which travels in its arrival event), for the end-of-run accounting.
    pub fn for_each_queued(&self, d: usize, f: &mut dyn FnMut(&Packet)) {
        self.dirs[d].queue.for_each_packet(f);
    }

    /// Direction index for a packet leaving `from`.
    pub fn dir_from(&self, from: NodeId) -> usize {
        if self.dirs[0].from == from {
            0
        } else {
            1
        }
    }

    /// Offer a packet to direction `d`.
    pub fn enqueue(&mut self, now: SimTime, d: usize, pkt: Packet) -> LinkStep {
        // Wrapped once here: queued or not, it travels on so (`LinkArrive`).
        let pkt = Rc::new(pkt);
        let dir = &mut self.dirs[d];
        if dir.busy {
            let next_hop = Some(dir.to);
            return match dir.queue.enqueue(now, Queued::packet(pkt, next_hop)) {
                Ok(()) => {
                    dir.stats.max_queue_pkts = dir.stats.max_queue_pkts.max(dir.queue.len() as u32);
                    LinkStep::Queued
                }
                Err((q, _)) => {
                    dir.stats.queue_drops += 1;
                    LinkStep::Dropped(q.pkt)
                }
            };
        }
        self.start(now, d, pkt)
    }

    /// The transmitter of direction `d` finished; start the next queued packet.
    pub fn tx_done(&mut self, now: SimTime, d: usize) -> LinkStep {
        self.dirs[d].busy = false;
        match self.dirs[d].queue.dequeue(now, &mut Vec::new()) {
            Some(q) => self.start(now, d, q.pkt),
            None => LinkStep::Idle,
        }
    }

    fn start(&mut self, now: SimTime, d: usize, pkt: Rc<Packet>) -> LinkStep {
        let tx = SimDuration::transmission(pkt.size_bytes(), self.bandwidth_bps);
        let dir = &mut self.dirs[d];
        dir.busy = true;
        dir.stats.tx_packets += 1;
        dir.stats.tx_bytes += pkt.size_bytes() as u64;
        dir.stats.busy_time = dir.stats.busy_time + tx;
        LinkStep::Started {
            tx_done: now + tx,
            arrive: now + tx + self.delay,
            pkt,
        }
    }

    /// A packet reached the far end of direction `d`: false if the error model drops it.
    pub fn survives(&mut self, d: usize) -> bool {
        if self.error_rate == 0.0 {
            return true;
        }
        let dir = &mut self.dirs[d];
        let ok = dir.rng.gen::<f64>() >= self.error_rate;
        if !ok {
            dir.stats.error_drops += 1;
        }
        ok
    }

    /// Test hook for scripted-loss experiments (Floyd & Fall 1996): true if `pkt`
    /// is a TCP data segment of any flow whose segment number is listed in
    /// `drop_tcp_segments`, arriving over direction 0; the number is then
    /// removed, so only its first arrival is dropped. Counted as an error drop.
    pub fn scripted_drop(&mut self, d: usize, pkt: &Packet) -> bool {
        if d != 0 || self.drop_tcp_segments.is_empty() || pkt.payload_bytes == 0 {
            return false;
        }
        let (TransportHeader::Tcp(_), Some(tag)) = (&pkt.transport, pkt.tag) else {
            return false;
        };
        match self.drop_tcp_segments.iter().position(|&s| s == tag.seq) {
            Some(i) => {
                self.drop_tcp_segments.remove(i);
                self.dirs[0].stats.error_drops += 1;
                true
            }
            None => false,
        }
    }

    pub fn queue_len(&self, d: usize) -> usize {
        self.dirs[d].queue.len()
    }
}
