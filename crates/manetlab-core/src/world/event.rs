//! The events of a run, and the parcels that carry their packets.
//!
//! Contract: an event owns nothing (it is `Copy`): it names its node, link,
//! flow or transmission by id and its packet by [`Parcel`], so the scheduler's
//! heap moves plain words. Whoever schedules an event with a parcel `put`s the
//! packet; its handler `take`s it back exactly once.

use crate::ids::{FlowId, LinkId, NodeId};
use crate::mac::{ArpMsg, MacTimer};
use crate::phy::radio::TxId;
use crate::sim::TimerToken;
use crate::wire::Packet;
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

/// Every event of a run, declared layer by layer: each group is dispatched by
/// the world file named above it ([`Simulator::dispatch`]). Variants carry ids
/// into the arenas, and a packet as its [`Parcel`]: an event owns nothing
/// (`Copy`), so heap entries stay small (a `Packet` inline made every heap sift
/// copy ~160 bytes: a third of all instructions in a profile) and the scheduler
/// moves and drops them as plain words.
///
/// One flat enum rather than an enum per layer (`Event::Net(NetEvent)`, …):
/// nested, the outer tag finds no niche and the event grows from 24 to 32
/// bytes (`layout_tests`), on every heap entry. Each variant's kind, and so
/// its name in the counts, is given by [`Event::kind`].
#[derive(Clone, Copy, Debug)]
pub(super) enum Event {
    // ---- world/net.rs: applications and the network layer ----
    /// Flow's application sends its next packet.
    AppSend(FlowId),
    /// A routing-protocol timer of a node: the protocol's key and arming token.
    RoutingTimer(NodeId, u64, TimerToken),
    /// A routing broadcast whose jitter delay has passed.
    RoutingBroadcast(NodeId, Parcel),
    /// A unicast a routing protocol delayed (`RoutingAction::ForwardAfter`): node, packet, next hop.
    RoutingForward(NodeId, Parcel, NodeId),
    // ---- world/p2p.rs: point-to-point links ----
    /// Link direction's transmitter finished serialising a packet.
    LinkTxDone(LinkId, u8),
    /// A packet reaches the far end of a link direction.
    LinkArrive(LinkId, u8, Parcel),
    // ---- world/ll.rs: LL, ARP and the interface queue ----
    /// A packet for the wireless interface reaches the interface queue (after the LL delay).
    IfqArrive(NodeId, Parcel, Option<NodeId>),
    /// An ARP message (to `.2`, `None` = broadcast) reaches the node's interface queue.
    ArpOut(NodeId, ArpMsg, Option<NodeId>),
    /// A packet the MAC received from `.2` reaches the network layer (after the
    /// LL delay, ns-2 `LL::sendUp`).
    LlUp(NodeId, Parcel, NodeId),
    /// Sample every interface queue's length (`[outputs] series_interval_s`).
    SampleQueues,
    // ---- world/mac.rs: the MAC ----
    /// A MAC timer of a node: FRN's slot timer. The DCF's timers are not
    /// events: they wait in the scheduler's owned-timer heap (owner = node,
    /// timer = `MacTimer as usize`) and pop as `Popped::Timer`.
    Mac(NodeId, MacTimer, TimerToken),
    // ---- world/air.rs: transmissions and the signal walks ----
    /// A node's own transmission ends.
    TxEnd(NodeId),
    /// A transmission starts arriving at its next receiver (`TxRecord::next_start`).
    /// One heap entry walks a frame's receivers in (time, sequence) order, each
    /// run as its own event; see [`Simulator::signal_starts`].
    SignalStart(TxId),
    /// A transmission stops arriving at its next receiver (`TxRecord::next_end`).
    SignalEnd(TxId),
    // ---- world/tcp.rs: TCP connections ----
    /// An FTP flow's TCP sender opens its connection.
    TcpOpen(FlowId),
    /// An FTP flow's application stops handing data down (stop_s).
    TcpAppStop(FlowId),
    /// A TCP timer of a flow (side 0 = sender, 1 = receiver), with its arming token.
    TcpTimer(FlowId, u8, TimerToken),
    // ---- world/faults.rs ----
    /// The next event of the fault schedule is due.
    Fault,
}

/// Declares the counted event kinds once: the [`EventKind`] enum, each kind's
/// name ([`EventKind::name`], the variant's own unless given) and
/// [`EVENT_KINDS`], all from one list, so no kind has a number written by hand.
macro_rules! event_kinds {
    ($($(#[$doc:meta])* $kind:ident $(= $name:literal)?,)*) => {
        /// What [`Simulator::event_counts`] counts: one kind per event variant,
        /// MAC timers split by timer, and the stale timer events counted again.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(super) enum EventKind {
            $($(#[$doc])* $kind,)*
        }

        impl EventKind {
            /// The kind's name in [`Simulator::event_counts`].
            pub(super) const fn name(self) -> &'static str {
                match self {
                    $(EventKind::$kind => event_kinds!(@name $kind $($name)?),)*
                }
            }
        }

        /// Names of the event kinds, in `EventKind` order (for
        /// [`Simulator::event_counts`]; benchmarks print the breakdown).
        pub const EVENT_KINDS: [&str; [$(EventKind::$kind),*].len()] =
            [$(EventKind::$kind.name()),*];
    };
    (@name $kind:ident) => { stringify!($kind) };
    (@name $kind:ident $name:literal) => { $name };
}

event_kinds! {
    AppSend,
    RoutingTimer,
    RoutingBroadcast,
    RoutingForward,
    LinkTxDone,
    LinkArrive,
    IfqArrive,
    ArpOut,
    LlUp,
    SampleQueues,
    MacBackoff = "Mac.Backoff",
    MacDefer = "Mac.Defer",
    MacSend = "Mac.Send",
    MacNav = "Mac.Nav",
    /// FRN's slotted MAC (mac/frn).
    MacSlot = "Mac.Slot",
    /// A MAC timer event whose arming had been cancelled or replaced (also
    /// counted under its timer).
    MacStale = "Mac (stale)",
    TxEnd,
    SignalStart,
    SignalEnd,
    TcpOpen,
    TcpAppStop,
    TcpTimer,
    /// A TCP timer event whose arming had been cancelled or moved (also
    /// counted as `TcpTimer`).
    TcpTimerStale = "TcpTimer (stale)",
    Fault,
}

impl EventKind {
    /// The kind of a MAC timer's event.
    #[inline]
    pub(super) const fn mac(timer: MacTimer) -> EventKind {
        match timer {
            MacTimer::Backoff => EventKind::MacBackoff,
            MacTimer::Defer => EventKind::MacDefer,
            MacTimer::Send => EventKind::MacSend,
            MacTimer::Nav => EventKind::MacNav,
            MacTimer::Slot => EventKind::MacSlot,
        }
    }
}

impl Event {
    /// This event's kind.
    #[inline]
    pub(super) fn kind(&self) -> EventKind {
        match *self {
            Event::AppSend(..) => EventKind::AppSend,
            Event::RoutingTimer(..) => EventKind::RoutingTimer,
            Event::RoutingBroadcast(..) => EventKind::RoutingBroadcast,
            Event::RoutingForward(..) => EventKind::RoutingForward,
            Event::LinkTxDone(..) => EventKind::LinkTxDone,
            Event::LinkArrive(..) => EventKind::LinkArrive,
            Event::IfqArrive(..) => EventKind::IfqArrive,
            Event::ArpOut(..) => EventKind::ArpOut,
            Event::LlUp(..) => EventKind::LlUp,
            Event::SampleQueues => EventKind::SampleQueues,
            Event::Mac(_, timer, _) => EventKind::mac(timer),
            Event::TxEnd(..) => EventKind::TxEnd,
            Event::SignalStart(..) => EventKind::SignalStart,
            Event::SignalEnd(..) => EventKind::SignalEnd,
            Event::TcpOpen(..) => EventKind::TcpOpen,
            Event::TcpAppStop(..) => EventKind::TcpAppStop,
            Event::TcpTimer(..) => EventKind::TcpTimer,
            Event::Fault => EventKind::Fault,
        }
    }
}

/// Events executed per [`EventKind`]; not part of the results.
pub(super) struct EventCounts([u64; EVENT_KINDS.len()]);

impl EventCounts {
    pub(super) fn new() -> Self {
        EventCounts([0; EVENT_KINDS.len()])
    }

    /// Each kind's name and count, in [`EventKind`] order.
    pub(super) fn named(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        EVENT_KINDS.iter().copied().zip(self.0.iter().copied())
    }
}

impl std::ops::Index<EventKind> for EventCounts {
    type Output = u64;

    #[inline]
    fn index(&self, k: EventKind) -> &u64 {
        &self.0[k as usize]
    }
}

impl std::ops::IndexMut<EventKind> for EventCounts {
    #[inline]
    fn index_mut(&mut self, k: EventKind) -> &mut u64 {
        &mut self.0[k as usize]
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    /// Every pending event is one slot in the scheduler: keep it at three words.
    #[test]
    fn an_event_is_three_words() {
        assert_eq!(std::mem::size_of::<Event>(), 24);
    }

    /// The counts' names follow the kinds, and name each kind once.
    #[test]
    fn kind_names_are_derived_and_distinct() {
        assert_eq!(EVENT_KINDS[EventKind::AppSend as usize], "AppSend");
        assert_eq!(EVENT_KINDS[EventKind::MacNav as usize], "Mac.Nav");
        assert_eq!(EventKind::mac(MacTimer::Slot).name(), "Mac.Slot");
        let mut names = EVENT_KINDS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EVENT_KINDS.len());
    }
}
