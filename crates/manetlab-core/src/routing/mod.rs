//! The network layer's routing interface, static routing and the MANET routing
//! protocols.
//!
//! A routing protocol sees packets this node originates or must forward and says
//! what to do with each, by pushing [`RoutingAction`]s into its context — it never
//! touches queues, links or other layers directly. AODV, DSR and DSDV implement the
//! same trait in their own folders (MANET routing issue).
//!
//! What the simulator gives a protocol (docs/routing.md):
//! * [`Routing::route`] for every data packet this node originates or forwards.
//!   A protocol may keep the packet (a send buffer while it discovers a route)
//!   and emit `Forward` actions for it later, from any handler.
//! * [`Routing::recv_control`] for every routing packet (`ip.proto = Manet`)
//!   that arrives at this node, unicast or broadcast, with the neighbour that
//!   sent it. Control packets never go through `route`.
//! * [`Routing::timer`] when a timer it set with `SetTimer` fires.
//! * [`Routing::tx_failed`] when the MAC gives up on a unicast frame (link-layer
//!   feedback), and [`Routing::reclaimed`] for packets it asked to take back from
//!   the interface queue (`ReclaimQueued`).
//! * [`Routing::start`] once at time 0, to arm periodic timers.
//! * [`Routing::overheard`] for unicast data frames between two other nodes
//!   that this node's MAC decoded, if [`Routing::promiscuous`] says so (DSR's
//!   promiscuous "tap").

mod counters;
mod static_routes;

pub mod aodv;
pub mod dsdv;
pub mod dsr;
pub mod frn;
pub mod send_buffer;

pub use aodv::Aodv;
pub use counters::RoutingCounters;
pub use dsdv::Dsdv;
pub use dsr::Dsr;
pub use frn::FrnRouting;
pub use static_routes::{StaticRouteTable, StaticRouting};

use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime, TimerToken};
pub use crate::wire::RoutingMessage;
use crate::wire::{DropReason, Packet};

/// ns-2.35's DSR and DSDV agents add the IP header's 20 bytes to every packet
/// they originate; ns-2's TCP segments already count it, so theirs is counted
/// twice. Assigned, not added, so a packet routed again is not charged twice.
pub(crate) fn mark_tcp_ip_twice(pkt: &mut Packet, on: bool) {
    if on && pkt.ip.proto == crate::wire::IpProto::Tcp {
        pkt.ip.extra_bytes = crate::wire::IP_HEADER_BYTES as u8;
    }
}

/// What a protocol's table holds about one destination (inspection, tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteView {
    pub next_hop: NodeId,
    /// Hops to the destination; `None` when the entry exists but is not usable
    /// (broken: DSDV's infinite metric).
    pub hops: Option<u32>,
    /// The destination sequence number, for protocols that keep one.
    pub seq: Option<u32>,
}

/// What a routing protocol asks the node to do.
#[derive(Debug)]
pub enum RoutingAction {
    /// Hand the packet to the interface towards `next_hop`.
    Forward { pkt: Packet, next_hop: NodeId },
    /// Hand the packet to the interface towards `next_hop` after `delay` (ns-2
    /// AODV's `ARP_DELAY` and DSR's `arp_timeout` spacing of packets released
    /// from a send buffer).
    ForwardAfter {
        pkt: Packet,
        next_hop: NodeId,
        delay: SimDuration,
    },
    /// Drop the packet.
    Drop { pkt: Packet, reason: DropReason },
    /// Tell this node's transport layer about its route to a destination (route
    /// failure / re-established: ELFN, ERDN/ERSN). Static routing never raises it.
    Notify(crate::wire::TransportNotice),
    /// Send the packet to every neighbour (MAC broadcast on the wireless
    /// interface, a copy on every point-to-point link) after `delay` (jitter).
    Broadcast { pkt: Packet, delay: SimDuration },
    /// Call [`Routing::timer`] with `key` and `token` at `at`. The protocol owns
    /// the [`crate::sim::Timer`] that issued `token` and ignores stale firings.
    SetTimer {
        at: SimTime,
        key: u64,
        token: TimerToken,
    },
    /// Take every packet waiting in the wireless interface queue for `next_hop`
    /// out of the queue and hand each to [`Routing::reclaimed`] (ns-2's
    /// `ifqueue->filter(nbr)` after a link break).
    ReclaimQueued { next_hop: NodeId },
}

/// The context a routing handler runs in: the time, the node, and an outbox.
pub struct RoutingCtx<'a> {
    pub now: SimTime,
    pub node: NodeId,
    pub actions: &'a mut Vec<RoutingAction>,
    /// The run's packet-uid counter, for control packets a protocol creates.
    pub next_uid: &'a mut u64,
}

impl RoutingCtx<'_> {
    /// A fresh packet uid (ns-2's `uid`, unique per run).
    pub fn new_uid(&mut self) -> u64 {
        let u = *self.next_uid;
        *self.next_uid += 1;
        u
    }
}

pub trait Routing {
    fn name(&self) -> &'static str;
    /// A data packet for another node, either originated here or received for
    /// forwarding. The protocol forwards it, drops it, or keeps it for later.
    fn route(&mut self, ctx: &mut RoutingCtx, pkt: Packet);
    /// Link-layer feedback: a packet could not be delivered to `next_hop`.
    fn tx_failed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, _next_hop: NodeId) {
        ctx.actions.push(RoutingAction::Drop {
            pkt,
            reason: DropReason::RetryLimit,
        });
    }
    /// Whether the link layer hands `pkt` back through [`Routing::tx_failed`] when it
    /// gives the packet up (ns-2's `xmit_failure_` callback is set on the packet).
    /// When not, the packet ends where the link layer gave it up: the MAC's retry
    /// limit (`RET`) or ARP's failed resolution (`ARP`).
    fn failure_callback(&self, _pkt: &Packet) -> bool {
        true
    }
    /// A routing control packet arrived from neighbour `from`.
    fn recv_control(&mut self, ctx: &mut RoutingCtx, pkt: Packet, _from: NodeId) {
        ctx.actions.push(RoutingAction::Drop {
            pkt,
            reason: DropReason::NoRoute,
        });
    }
    /// A timer set with `RoutingAction::SetTimer` fired.
    fn timer(&mut self, _ctx: &mut RoutingCtx, _key: u64, _token: TimerToken) {}
    /// A packet taken back from the interface queue after `ReclaimQueued`.
    fn reclaimed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, _next_hop: NodeId) {
        ctx.actions.push(RoutingAction::Drop {
            pkt,
            reason: DropReason::MacCallback,
        });
    }
    /// Called once at time 0, before any packet.
    fn start(&mut self, _ctx: &mut RoutingCtx) {}
    /// Whether this node's MAC should pass up unicast frames addressed to other
    /// nodes ([`Routing::overheard`]). Read once when the node is built.
    fn promiscuous(&self) -> bool {
        false
    }
    /// A unicast packet from neighbour `from` to neighbour `to` that this node
    /// overheard (promiscuous mode only). The packet is not ours to keep.
    fn overheard(&mut self, _ctx: &mut RoutingCtx, _pkt: &Packet, _from: NodeId, _to: NodeId) {}
    /// The protocol's counters (routing overhead, discoveries, breaks), if it keeps any.
    fn counters(&self) -> Option<&RoutingCounters> {
        None
    }
    /// The protocol's table entry for `dst`, if it keeps one and cares to show it.
    fn route_entry(&self, _dst: NodeId) -> Option<RouteView> {
        None
    }
    /// Every data packet the protocol holds (send buffer, per-destination
    /// queue), for the end-of-run packet accounting (docs/metrics.md). A
    /// protocol that keeps packets between handlers must list them here.
    fn buffered(&self, _f: &mut dyn FnMut(&Packet)) {}
}
