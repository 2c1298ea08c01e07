//! The events of a run, and the parcels that carry their packets.
//!
//! Contract: an event owns nothing (it is `Copy`): it names its node, link,
//! flow or transmission by id and its packet by [`Parcel`], so the scheduler's
//! heap moves plain words. Whoever schedules an event with a parcel `put`s the
//! packet; its handler `take`s it back exactly once.

use crate::ids::{FlowId, LinkId, NodeId};
use crate::mac::{ArpMsg, MacTimer};
use crate::packet::Packet;
use crate::phy::radio::TxId;
use crate::sim::TimerToken;
use std::rc::Rc;

/// A packet travelling in an event: its slot in [`Simulator::parcels`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Parcel(u32);

/// The packets of pending events, by [`Parcel`]; freed slots are reused. A
/// packet is an `Rc`: it goes on so to the interface queue and the MAC, and a
/// received one may still be shared with its frame (the network layer copies
/// it only when it needs its own).
#[derive(Default)]
pub(super) struct Parcels {
    pub(super) slots: Vec<Option<Rc<Packet>>>,
    pub(super) free: Vec<u32>,
}

impl Parcels {
    #[inline]
    pub(super) fn put(&mut self, pkt: Rc<Packet>) -> Parcel {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(pkt);
                Parcel(i)
            }
            None => {
                self.slots.push(Some(pkt));
                Parcel((self.slots.len() - 1) as u32)
            }
        }
    }

    #[inline]
    pub(super) fn take(&mut self, p: Parcel) -> Rc<Packet> {
        let pkt = self.slots[p.0 as usize].take().expect("pending parcel");
        self.free.push(p.0);
        pkt
    }

    pub(super) fn get(&self, p: Parcel) -> &Packet {
        self.slots[p.0 as usize].as_deref().expect("pending parcel")
    }
}

/// Every kind of event in a run. Variants carry ids into the arenas, and a
/// packet as its [`Parcel`]: an event owns nothing (`Copy`), so heap entries
/// stay small (a `Packet` inline made every heap sift copy ~160 bytes: a third
/// of all instructions in a profile) and the scheduler moves and drops them
/// as plain words.
#[derive(Clone, Copy, Debug)]
pub(super) enum Event {
    /// Flow's application sends its next packet.
    AppSend(FlowId),
    /// Link direction's transmitter finished serialising a packet.
    LinkTxDone(LinkId, u8),
    /// A packet reaches the far end of a link direction.
    LinkArrive(LinkId, u8, Parcel),
    /// A packet for the wireless interface reaches the interface queue (after the LL delay).
    IfqArrive(NodeId, Parcel, Option<NodeId>),
    /// A MAC timer of a node: FRN's slot timer. The DCF's timers are not
    /// events: they wait in the scheduler's owned-timer heap (owner = node,
    /// timer = `MacTimer as usize`) and pop as `Popped::Timer`.
    Mac(NodeId, MacTimer, TimerToken),
    /// An ARP message (to `.2`, `None` = broadcast) reaches the node's interface queue.
    ArpOut(NodeId, ArpMsg, Option<NodeId>),
    /// A packet the MAC received from `.2` reaches the network layer (after the
    /// LL delay, ns-2 `LL::sendUp`).
    LlUp(NodeId, Parcel, NodeId),
    /// A node's own transmission ends.
    TxEnd(NodeId),
    /// A transmission starts arriving at its next receiver (`TxRecord::next_start`).
    /// One heap entry walks a frame's receivers in (time, sequence) order, each
    /// run as its own event; see [`Simulator::signal_starts`].
    SignalStart(TxId),
    /// A transmission stops arriving at its next receiver (`TxRecord::next_end`).
    SignalEnd(TxId),
    /// Sample every interface queue's length (`[outputs] series_interval_s`).
    SampleQueues,
    /// An FTP flow's TCP sender opens its connection.
    TcpOpen(FlowId),
    /// An FTP flow's application stops handing data down (stop_s).
    TcpAppStop(FlowId),
    /// A TCP timer of a flow (side 0 = sender, 1 = receiver), with its arming token.
    TcpTimer(FlowId, u8, TimerToken),
    /// A routing-protocol timer of a node: the protocol's key and arming token.
    RoutingTimer(NodeId, u64, TimerToken),
    /// A routing broadcast whose jitter delay has passed.
    RoutingBroadcast(NodeId, Parcel),
    /// A unicast a routing protocol delayed (`RoutingAction::ForwardAfter`): node, packet, next hop.
    RoutingForward(NodeId, Parcel, NodeId),
    /// The next event of the fault schedule is due.
    Fault,
}

/// Names of the event kinds, in the order of [`Event::kind`] (for
/// [`Simulator::event_counts`]; benchmarks print the breakdown).
/// `Mac` events are split by timer; `Mac (stale)` counts those whose arming had
/// been cancelled or replaced (they are also counted under their timer).
pub const EVENT_KINDS: [&str; 24] = [
    "AppSend",
    "LinkTxDone",
    "LinkArrive",
    "IfqArrive",
    "Mac.Backoff",
    "ArpOut",
    "LlUp",
    "TxEnd",
    "SignalStart",
    "SignalEnd",
    "SampleQueues",
    "TcpOpen",
    "TcpAppStop",
    "TcpTimer",
    "RoutingTimer",
    "RoutingBroadcast",
    "RoutingForward",
    "Fault",
    "Mac.Defer",
    "Mac.Send",
    "Mac.Nav",
    "Mac (stale)",
    "TcpTimer (stale)",
    "Mac.Slot",
];

pub(super) const KIND_MAC_STALE: usize = 21;

pub(super) const KIND_TCP_STALE: usize = 22;

pub(super) const KIND_SIGNAL_START: usize = 8;

pub(super) const KIND_SIGNAL_END: usize = 9;

pub(super) const KIND_TX_END: usize = 7;

impl Event {
    /// Index of this event's kind in [`EVENT_KINDS`].
    pub(super) fn kind(&self) -> usize {
        match self {
            Event::AppSend(..) => 0,
            Event::LinkTxDone(..) => 1,
            Event::LinkArrive(..) => 2,
            Event::IfqArrive(..) => 3,
            Event::Mac(_, MacTimer::Backoff, _) => 4,
            Event::Mac(_, MacTimer::Defer, _) => 18,
            Event::Mac(_, MacTimer::Send, _) => 19,
            Event::Mac(_, MacTimer::Nav, _) => 20,
            // FRN's slotted MAC (mac/frn).
            Event::Mac(_, MacTimer::Slot, _) => 23,
            Event::ArpOut(..) => 5,
            Event::LlUp(..) => 6,
            Event::TxEnd(..) => 7,
            Event::SignalStart(..) => 8,
            Event::SignalEnd(..) => 9,
            Event::SampleQueues => 10,
            Event::TcpOpen(..) => 11,
            Event::TcpAppStop(..) => 12,
            Event::TcpTimer(..) => 13,
            Event::RoutingTimer(..) => 14,
            Event::RoutingBroadcast(..) => 15,
            Event::RoutingForward(..) => 16,
            Event::Fault => 17,
        }
    }
}
