//! The wireless interface above the MAC, as ns-2's LL, ARP and interface queue:
//! [`Simulator::ll_send`] resolves the next hop with ARP, packets and ARP
//! messages reach the interface queue after the LL or ARP delay (`IfqArrive`,
//! `ArpOut`), and the queue feeds the MAC whenever it is free. Also the
//! interface queues' length series (`SampleQueues`).
//!
//! Contract: nothing enters the MAC except through the interface queue; a
//! packet the queue or ARP refuses ends here with its drop reason.

use super::event::Event;
use super::Simulator;
use crate::ids::NodeId;
use crate::mac::arp::{Resolve, ARP_DELAY};
use crate::mac::{ArpMsg, ArpOp, ArpTable, MacAction};
use crate::metrics::DropReason;
use crate::queue::{Queue, Queued};
use crate::sim::SimTime;
use crate::wire::Packet;
use std::rc::Rc;

/// A node's wireless interface above the MAC.
pub(super) struct Wifi {
    pub(super) ifq: Box<dyn Queue>,
    /// ns-2's ARP table (with `[mac] arp`, the default).
    pub(super) arp: Option<ArpTable>,
}

impl Simulator {
    pub(super) fn wifi(&mut self, n: NodeId) -> &mut Wifi {
        self.nodes[n.index()]
            .wifi
            .as_mut()
            .expect("node has a wireless interface")
    }

    /// ns-2 `LL::sendDown` for a unicast packet: resolve the next hop with ARP
    /// (which may hold the packet and broadcast a request, or fail it back to the
    /// routing protocol), then hand the packet to the interface queue after the
    /// LL delay.
    pub(super) fn ll_send(&mut self, now: SimTime, node: NodeId, next_hop: NodeId, pkt: Packet) {
        let w = self.wifi(node);
        // A resolved next hop (the usual case) takes the packet as it is.
        let Some(arp) = w.arp.as_mut().filter(|a| !a.is_resolved(next_hop)) else {
            let p = self.parcels.put(Rc::new(pkt));
            self.sched.schedule_at(
                now + self.mac_params.ll_delay,
                Event::IfqArrive(node, p, Some(next_hop)),
            );
            return;
        };
        match arp.resolve(next_hop, pkt) {
            Resolve::Ready(pkt) => {
                let p = self.parcels.put(Rc::new(pkt));
                self.sched.schedule_at(
                    now + self.mac_params.ll_delay,
                    Event::IfqArrive(node, p, Some(next_hop)),
                );
            }
            Resolve::Held { replaced } => {
                let req = arp.request(next_hop);
                self.sched
                    .schedule_at(now + ARP_DELAY, Event::ArpOut(node, req, None));
                if let Some(old) = replaced {
                    self.trace_drop_towards(
                        node,
                        &old,
                        DropReason::ArpHoldReplaced,
                        Some(next_hop),
                    );
                    self.account_drop(node, &old, DropReason::ArpHoldReplaced);
                }
            }
            Resolve::Failed { held, pkt } => {
                // ns-2 hands both to the routing agent's link-failure callback, or
                // drops a packet that has none (`DROP_IFQ_ARP_FULL`).
                for p in held.into_iter().chain(std::iter::once(pkt)) {
                    if self.nodes[node.index()].routing.failure_callback(&p) {
                        self.with_routing(now, node, |r, ctx| r.tx_failed(ctx, p, next_hop));
                    } else {
                        self.trace_drop_towards(
                            node,
                            &p,
                            DropReason::ArpHoldReplaced,
                            Some(next_hop),
                        );
                        self.account_drop(node, &p, DropReason::ArpHoldReplaced);
                    }
                }
            }
        }
    }

    /// An ARP message reaches node `n`'s interface queue (after the ARP table's
    /// delay); ns-2 queues it like any other non-routing packet.
    pub(super) fn arp_out(&mut self, now: SimTime, n: NodeId, m: ArpMsg, to: Option<NodeId>) {
        if self.is_off(n) {
            return;
        }
        self.ifq_offer(now, n, Queued::arp(m, to));
    }

    /// An ARP message arrived at `n`: learn its sender, release the packet held
    /// for it, and answer a request for us.
    pub(super) fn arp_in(&mut self, now: SimTime, n: NodeId, m: ArpMsg) {
        if self.is_off(n) {
            return;
        }
        let Some(arp) = self.wifi(n).arp.as_mut() else {
            return;
        };
        let input = arp.input(&m);
        if let Some(pkt) = input.release {
            let p = self.parcels.put(Rc::new(pkt));
            self.sched
                .schedule_at(now + ARP_DELAY, Event::IfqArrive(n, p, Some(m.sender)));
        }
        if let Some(reply) = input.reply {
            debug_assert_eq!(reply.op, ArpOp::Reply);
            self.sched
                .schedule_at(now + ARP_DELAY, Event::ArpOut(n, reply, Some(m.sender)));
        }
    }

    pub(super) fn ifq_arrive(
        &mut self,
        now: SimTime,
        n: NodeId,
        pkt: Rc<Packet>,
        next_hop: Option<NodeId>,
    ) {
        if self.is_off(n) {
            self.drop_packet(n, &pkt, DropReason::NodeOff);
            return;
        }
        self.ifq_offer(now, n, Queued::packet(pkt, next_hop));
    }

    fn ifq_offer(&mut self, now: SimTime, n: NodeId, item: Queued) {
        let w = self.wifi(n);
        if let Err((q, why)) = w.ifq.enqueue(now, item) {
            if let Some(m) = q.arp {
                self.trace_arp_drop(n, &m, q.next_hop, why);
                self.nodes[n.index()].counters.on_drop(why, false);
            } else {
                self.trace_drop_towards(n, &q.pkt, why, q.next_hop);
                self.account_drop(n, &q.pkt, why);
            }
            return;
        }
        let len = w.ifq.len() as u32;
        let c = &mut self.nodes[n.index()].counters;
        c.ifq_max_pkts = c.ifq_max_pkts.max(len);
        self.note_queue(now, n);
        if self.air[n.index()].mac.is_free() {
            self.run_mac(now, n, |_, out| out.push(MacAction::Ready));
        }
    }

    /// Queue-length series, event-driven mode: record node `n`'s interface-queue
    /// length if it changed since the last point.
    pub(super) fn note_queue(&mut self, now: SimTime, n: NodeId) {
        if self.series_interval.is_some() {
            return;
        }
        let Some(s) = self.series.as_mut() else {
            return;
        };
        let len = self.nodes[n.index()]
            .wifi
            .as_ref()
            .map_or(0, |w| w.ifq.len() as u32);
        let q = &mut s.queues[n.index()];
        if q.len_pkts.last() != Some(&len) {
            q.t_s.push(now.as_secs_f64());
            q.len_pkts.push(len);
        }
    }

    /// Queue-length series, sampled mode: every node's length now, then again
    /// one interval later.
    pub(super) fn sample_queues(&mut self, now: SimTime) {
        let (Some(s), Some(iv)) = (self.series.as_mut(), self.series_interval) else {
            return;
        };
        for (i, node) in self.nodes.iter().enumerate() {
            let q = &mut s.queues[i];
            q.t_s.push(now.as_secs_f64());
            q.len_pkts
                .push(node.wifi.as_ref().map_or(0, |w| w.ifq.len() as u32));
        }
        self.sched.schedule_at(now + iv, Event::SampleQueues);
    }
}
