//! A node's network layer: what applications hand down (`AppSend` →
//! [`Simulator::originate`]), what links and the wireless LL hand up
//! ([`Simulator::receive_from`]), local delivery, TTL, and the routing
//! protocol's actions ([`Simulator::with_routing`]; `RoutingTimer`,
//! `RoutingBroadcast`, `RoutingForward` events).
//!
//! Contract: a switched-off node drops what reaches this layer (`OFF`); a
//! packet leaves the node only through [`Simulator::send_to_neighbour`], which
//! picks a point-to-point port or the wireless LL. This layer reads no MAC or
//! radio state.

use super::event::Event;
use super::{trace, Simulator};
use crate::ids::{FlowId, NodeId};
use crate::metrics::{Delivery, DropReason};
use crate::routing::{Routing, RoutingAction, RoutingCtx};
use crate::sim::{SimDuration, SimTime};
use crate::transport::udp;
use crate::wire::{Packet, TransportHeader};
use std::rc::Rc;

impl Simulator {
    pub(super) fn app_send(&mut self, now: SimTime, f: FlowId) {
        let flow = &mut self.flows[f.index()];
        let cbr = flow
            .cbr
            .as_mut()
            .expect("AppSend is scheduled for CBR flows only");
        let (seq, next) = cbr.on_send(now);
        let pkt = udp::datagram(
            self.next_uid,
            f,
            flow.src,
            flow.dst,
            flow.udp_port,
            cbr.packet_bytes,
            flow.udp_header,
            seq,
            now,
        );
        self.next_uid += 1;
        flow.counters.on_send(pkt.payload_bytes);
        self.ledger.created(pkt.uid, f.0, true);
        let src = flow.src;
        if let Some(t) = next {
            self.sched.schedule_at(t, Event::AppSend(f));
        }
        self.nodes[src.index()].counters.originated_packets += 1;
        self.originate(now, src, pkt);
    }

    /// A transport hands a packet down at its source: trace it (AGT) and route it.
    pub(super) fn originate(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        self.trace_pkt(trace::Ev::Send, trace::Lv::Agt, node, &pkt, None, None);
        // ns-2 traces the packet entering the source's routing agent (`r RTR`).
        self.trace_pkt(trace::Ev::Recv, trace::Lv::Rtr, node, &pkt, None, None);
        self.route(now, node, pkt);
    }

    /// A packet arrived at `node` from neighbour `from`: routing control goes to
    /// the routing protocol, everything else to the network layer. The packet
    /// may still be shared with the frame that brought it: the node copies it
    /// only when a routing protocol takes it.
    pub(super) fn receive_from(
        &mut self,
        now: SimTime,
        node: NodeId,
        pkt: Rc<Packet>,
        from: NodeId,
    ) {
        if self.is_off(node) {
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        // ns-2's node hands a data packet for itself straight to the agent; the
        // router sees (`r RTR`) routing messages and packets to forward, and with
        // DSR every packet (DSR is the node's entry).
        if pkt.is_routing() || pkt.ip.dst != node || pkt.source_route.is_some() {
            self.trace_pkt(trace::Ev::Recv, trace::Lv::Rtr, node, &pkt, None, None);
        }
        if pkt.is_routing() {
            self.with_routing(now, node, |r, ctx| {
                r.recv_control(ctx, Rc::unwrap_or_clone(pkt), from)
            });
        } else {
            self.receive(now, node, pkt);
        }
    }

    /// A packet arrived at `node` from a link.
    fn receive(&mut self, now: SimTime, node: NodeId, pkt: Rc<Packet>) {
        if self.is_off(node) {
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        if pkt.ip.dst == node {
            self.deliver(now, node, &pkt);
            return;
        }
        // Forwarding (on the node's own copy): decrement TTL first (RFC 791);
        // a packet that reaches 0 is dropped, unless it is back at its source:
        // routing calls that a loop first (ns-2's AODV and DSDV `recv` test the
        // loop before the TTL).
        let mut pkt = Rc::unwrap_or_clone(pkt);
        if pkt.ip.hop() == 0 && pkt.ip.src != node {
            self.drop_packet(node, &pkt, DropReason::TtlExpired);
            return;
        }
        self.nodes[node.index()].counters.forwarded_packets += 1;
        self.route(now, node, pkt);
    }

    fn deliver(&mut self, now: SimTime, node: NodeId, pkt: &Packet) {
        self.trace_pkt(trace::Ev::Recv, trace::Lv::Agt, node, pkt, None, None);
        self.nodes[node.index()].counters.delivered_packets += 1;
        // One packet, one fate: only its first copy counts as delivered; later
        // copies (DSR salvage after a lost MAC ACK) are duplicates.
        let first = match pkt.tag {
            Some(tag) => {
                let d = self.ledger.delivered(pkt.uid);
                let data = self.ledger.is_data(pkt.uid);
                let c = &mut self.flows[tag.flow.index()].counters;
                match (d, data) {
                    (Delivery::First, true) => c.delivered_packets += 1,
                    (Delivery::Duplicate, true) => c.dup_rx_packets += 1,
                    _ => {}
                }
                d == Delivery::First
            }
            None => true,
        };
        if let TransportHeader::Tcp(h) = pkt.transport {
            // TCP sees every copy, as a real receiver would (it discards duplicates itself).
            self.tcp_deliver(now, node, pkt, &h);
            return;
        }
        if !first {
            return;
        }
        if let Some(tag) = pkt.tag {
            let since = now.since(tag.created);
            let delay = since.as_secs_f64();
            self.flows[tag.flow.index()].counters.on_receive(
                now.as_secs_f64(),
                pkt.payload_bytes,
                since,
            );
            if let Some(s) = self.series.as_mut() {
                let fs = &mut s.flows[tag.flow.index()];
                fs.t_s.push(now.as_secs_f64());
                fs.delay_s.push(delay);
            }
        }
    }

    /// Ask `node`'s routing protocol what to do with `pkt`, then do it.
    fn route(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        if self.is_off(node) {
            // A switched-off node neither originates nor forwards.
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        self.with_routing(now, node, |r, ctx| r.route(ctx, pkt));
    }

    /// Run a routing handler of `node` and carry out the actions it asks for.
    pub(super) fn with_routing(
        &mut self,
        now: SimTime,
        node: NodeId,
        f: impl FnOnce(&mut dyn Routing, &mut RoutingCtx),
    ) {
        let mut actions = std::mem::take(&mut self.actions);
        {
            let mut ctx = RoutingCtx {
                now,
                node,
                actions: &mut actions,
                next_uid: &mut self.next_uid,
            };
            f(self.nodes[node.index()].routing.as_mut(), &mut ctx);
        }
        for a in actions.drain(..) {
            match a {
                RoutingAction::Forward { pkt, next_hop } => {
                    self.routing_forward(now, node, pkt, next_hop)
                }
                RoutingAction::ForwardAfter {
                    pkt,
                    next_hop,
                    delay,
                } => {
                    let p = self.parcels.put(Rc::new(pkt));
                    self.sched
                        .schedule_at(now + delay, Event::RoutingForward(node, p, next_hop))
                }
                RoutingAction::Drop { pkt, reason } => self.drop_packet(node, &pkt, reason),
                RoutingAction::Notify(notice) => self.tcp_notice(now, node, notice),
                RoutingAction::Broadcast { pkt, delay } => {
                    let ev = if pkt.ip.src == node {
                        trace::Ev::Send
                    } else {
                        trace::Ev::Forward
                    };
                    self.trace_pkt(ev, trace::Lv::Rtr, node, &pkt, None, None);
                    if delay == SimDuration::ZERO {
                        self.broadcast(now, node, pkt);
                    } else {
                        let p = self.parcels.put(Rc::new(pkt));
                        self.sched
                            .schedule_at(now + delay, Event::RoutingBroadcast(node, p));
                    }
                }
                RoutingAction::SetTimer { at, key, token } => self
                    .sched
                    .schedule_at(at, Event::RoutingTimer(node, key, token)),
                RoutingAction::ReclaimQueued { next_hop } => {
                    self.reclaim_queued(now, node, next_hop)
                }
            }
        }
        self.actions = actions;
    }

    /// A unicast the routing protocol of `node` hands down towards `next_hop`.
    fn routing_forward(&mut self, now: SimTime, node: NodeId, pkt: Packet, next_hop: NodeId) {
        let ev = if pkt.ip.src == node {
            trace::Ev::Send
        } else {
            trace::Ev::Forward
        };
        self.trace_pkt(ev, trace::Lv::Rtr, node, &pkt, None, Some(next_hop));
        self.send_to_neighbour(now, node, next_hop, pkt)
    }

    /// `RoutingForward`: a unicast whose routing delay has passed goes down
    /// towards `next_hop`, unless `node` was switched off meanwhile.
    pub(super) fn routing_forward_due(
        &mut self,
        now: SimTime,
        node: NodeId,
        pkt: Rc<Packet>,
        next_hop: NodeId,
    ) {
        if self.is_off(node) {
            // Switched off while the packet waited for its delay.
            self.drop_packet(node, &pkt, DropReason::NodeOff);
        } else {
            self.routing_forward(now, node, Rc::unwrap_or_clone(pkt), next_hop);
        }
    }

    /// Send a routing broadcast from `node`: to the wireless interface queue
    /// (MAC broadcast, after the LL delay) and a copy over every point-to-point link.
    pub(super) fn broadcast(&mut self, now: SimTime, node: NodeId, pkt: Packet) {
        if self.is_off(node) {
            // A switched-off node's protocol timers still fire; nothing leaves it.
            self.drop_packet(node, &pkt, DropReason::NodeOff);
            return;
        }
        let ports: Vec<NodeId> = self.nodes[node.index()].ports.iter().map(|p| p.0).collect();
        for nb in ports {
            self.send_to_neighbour(now, node, nb, pkt.clone());
        }
        if self.nodes[node.index()].wifi.is_some() {
            let p = self.parcels.put(Rc::new(pkt));
            self.sched.schedule_at(
                now + self.mac_params.ll_delay,
                Event::IfqArrive(node, p, None),
            );
        }
    }

    /// Take `node`'s queued packets for `next_hop` out of its interface queue and
    /// give them back to its routing protocol (after a link break).
    fn reclaim_queued(&mut self, now: SimTime, node: NodeId, next_hop: NodeId) {
        let Some(w) = self.nodes[node.index()].wifi.as_mut() else {
            return;
        };
        let mut taken = Vec::new();
        w.ifq.drain_for(next_hop, &mut taken);
        // An ARP reply to the broken neighbour is useless now; only packets go back.
        taken.retain(|q| q.arp.is_none());
        self.note_queue(now, node);
        if !taken.is_empty() {
            self.with_routing(now, node, |r, ctx| {
                for q in taken {
                    r.reclaimed(ctx, Rc::unwrap_or_clone(q.pkt), next_hop);
                }
            });
        }
    }

    fn send_to_neighbour(&mut self, now: SimTime, node: NodeId, next_hop: NodeId, pkt: Packet) {
        let ports = &self.nodes[node.index()].ports;
        let Ok(i) = ports.binary_search_by_key(&next_hop, |p| p.0) else {
            if self.nodes[node.index()].wifi.is_some() {
                self.ll_send(now, node, next_hop, pkt);
            } else {
                // A routing protocol named a node we have no link to: no route.
                self.drop_packet(node, &pkt, DropReason::NoRoute);
            }
            return;
        };
        let l = ports[i].1;
        let link = &mut self.links[l.index()];
        let d = link.dir_from(node);
        let step = link.enqueue(now, d, pkt);
        self.link_step(l, d as u8, step, Some(node));
    }
}
