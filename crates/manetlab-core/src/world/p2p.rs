//! Point-to-point links: a link direction's steps (`LinkStep`) and its events
//! (`LinkTxDone`, `LinkArrive`).
//!
//! Contract: a packet arriving over a link draws the link's error first, then
//! meets scripted drops and faults, so faults never shift the link's error
//! stream; a surviving packet goes up to the network layer of the far end.

use super::event::Event;
use super::Simulator;
use crate::ids::{LinkId, NodeId};
use crate::link::p2p::LinkStep;
use crate::metrics::DropReason;
use crate::sim::SimTime;
use crate::wire::Packet;
use std::rc::Rc;

impl Simulator {
    /// `LinkTxDone`: link direction `d` of `l` finished serialising a packet.
    pub(super) fn link_tx_done(&mut self, now: SimTime, l: LinkId, d: u8) {
        let step = self.links[l.index()].tx_done(now, d as usize);
        self.link_step(l, d, step, None);
    }

    /// `LinkArrive`: `pkt` reaches the far end of direction `d` of `l`.
    pub(super) fn link_arrive(&mut self, now: SimTime, l: LinkId, d: u8, pkt: Rc<Packet>) {
        let dir = &self.links[l.index()].dirs[d as usize];
        let (from, to) = (dir.from, dir.to);
        if pkt.tag.is_some() {
            // Handed over: the copy is now `to`'s, whatever happens to it there.
            self.nodes[from.index()].counters.sent_packets += 1;
            self.nodes[to.index()].counters.received_packets += 1;
        }
        let link = &mut self.links[l.index()];
        // Draw the error first so faults do not shift the link's error stream.
        if !link.survives(d as usize) || link.scripted_drop(d as usize, &pkt) {
            self.drop_packet(to, &pkt, DropReason::LinkError);
        } else if let Some(why) = self.fault_blocks(from, to) {
            self.drop_packet(to, &pkt, why);
        } else {
            self.pcap(to, &pkt);
            self.receive_from(now, to, pkt, from);
        }
    }

    /// Carry out a link direction's step: schedule its events, or drop the
    /// packet its queue refused (`from`: the node that offered it, if known).
    pub(super) fn link_step(&mut self, l: LinkId, d: u8, step: LinkStep, from: Option<NodeId>) {
        match step {
            LinkStep::Started {
                tx_done,
                arrive,
                pkt,
            } => {
                self.pcap(self.links[l.index()].dirs[d as usize].from, &pkt);
                self.sched.schedule_at(tx_done, Event::LinkTxDone(l, d));
                let p = self.parcels.put(pkt);
                self.sched.schedule_at(arrive, Event::LinkArrive(l, d, p));
            }
            LinkStep::Dropped(pkt) => {
                let node = from.unwrap_or(self.links[l.index()].dirs[d as usize].from);
                self.drop_packet(node, &pkt, DropReason::QueueOverflow);
            }
            LinkStep::Queued | LinkStep::Idle => {}
        }
    }
}
