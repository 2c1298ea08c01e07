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

impl Simulator {
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
