//! The network layer's routing interface and static routing.
//!
//! A routing protocol sees packets this node originates or must forward and says
//! what to do with each, by pushing [`RoutingAction`]s into its context — it never
//! touches queues, links or other layers directly. AODV, DSR and DSDV implement the
//! same trait in their own folders (MANET routing issue).

mod static_routes;

pub use static_routes::StaticRouting;

use crate::ids::NodeId;
use crate::metrics::DropReason;
use crate::packet::Packet;
use crate::sim::SimTime;

/// What a routing protocol asks the node to do.
#[derive(Debug)]
pub enum RoutingAction {
    /// Hand the packet to the interface towards `next_hop`.
    Forward { pkt: Packet, next_hop: NodeId },
    /// Drop the packet.
    Drop { pkt: Packet, reason: DropReason },
    /// Tell this node's transport layer about its route to a destination (route
    /// failure / re-established: ELFN, ERDN/ERSN). Static routing never raises it.
    Notify(crate::transport::TransportNotice),
}

/// The context a routing handler runs in: the time, the node, and an outbox.
pub struct RoutingCtx<'a> {
    pub now: SimTime,
    pub node: NodeId,
    pub actions: &'a mut Vec<RoutingAction>,
}

pub trait Routing {
    fn name(&self) -> &'static str;
    /// A packet for another node, either originated here or received for forwarding.
    fn route(&mut self, ctx: &mut RoutingCtx, pkt: Packet);
    /// Link-layer feedback: a packet could not be delivered to `next_hop`.
    fn tx_failed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, _next_hop: NodeId) {
        ctx.actions.push(RoutingAction::Drop { pkt, reason: DropReason::RetryLimit });
    }
}
