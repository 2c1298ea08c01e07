//! Faults in a run (docs/mobility.md): the schedule's `Fault` events, node
//! switches and link failures, and the checks the other layers ask
//! ([`Simulator::is_off`], [`Simulator::fault_blocks`]).
//!
//! Contract: a switched-off node's interface queue is flushed and its MAC's
//! frame dropped (`OFF`); the fault state changes only in `Fault` events, and
//! faults draw no random numbers, so they shift no other stream.

use super::event::Event;
use super::Simulator;
use crate::faults::{Failure, FaultEvent, FaultKind, FaultState, FaultStream};
use crate::ids::NodeId;
use crate::mac::WifiMac;
use crate::metrics::DropReason;
use crate::sim::SimTime;

/// The run's faults: the schedule, how far it has been applied, and the state.
pub(super) struct Faults {
    /// The faults still to come, drawn one at a time as the run goes.
    pub(super) stream: FaultStream,
    /// The next fault (its `Event::Fault` is scheduled), with its failure record.
    pub(super) pending: Option<(FaultEvent, Option<Failure>)>,
    /// The faults applied so far, in order.
    pub(super) log: Vec<FaultEvent>,
    /// The failures begun so far, in order (the results' `faults` table).
    pub(super) failures: Vec<Failure>,
    pub(super) state: FaultState,
    /// `off[n]`: node n is switched off (mirrors `state`, for speed).
    pub(super) off: Vec<bool>,
}

impl Simulator {
    /// Whether node `n` is switched on now.
    pub fn is_node_on(&self, n: u32) -> bool {
        !self.is_off(NodeId(n))
    }

    /// The faults applied so far, in order.
    pub fn fault_log(&self) -> &[FaultEvent] {
        self.faults.as_ref().map_or(&[], |f| &f.log[..])
    }

    /// The failures begun so far, in order (`None` without `[faults]`).
    pub fn failures(&self) -> Option<&[Failure]> {
        self.faults.as_ref().map(|f| &f.failures[..])
    }

    pub(super) fn is_off(&self, n: NodeId) -> bool {
        self.faults.as_ref().is_some_and(|f| f.off[n.index()])
    }

    /// Why a frame or packet cannot cross from `a` to `b` now, if it cannot.
    pub(super) fn fault_blocks(&self, a: NodeId, b: NodeId) -> Option<DropReason> {
        let f = self.faults.as_ref()?;
        if f.off[a.index()] || f.off[b.index()] {
            Some(DropReason::NodeOff)
        } else if f.state.link_effect(a, b).is_some() {
            // A point-to-point link has no carrier to keep: either effect drops.
            Some(DropReason::LinkDown)
        } else {
            None
        }
    }

    /// Apply the fault schedule's next event and schedule the one after it.
    pub(super) fn apply_fault(&mut self, now: SimTime) {
        let f = self.faults.as_mut().expect("fault event without faults");
        let (e, failure) = f.pending.take().expect("a fault event has its fault");
        debug_assert_eq!(e.time, now);
        f.log.push(e);
        f.failures.extend(failure);
        f.pending = f.stream.next_fault();
        if let Some((next, _)) = f.pending {
            self.sched.schedule_at(next.time, Event::Fault);
        }
        let was_off = f.off[e.a.index()];
        f.state.apply(&e);
        let off = !f.state.node_up(e.a);
        f.off[e.a.index()] = off;
        if e.kind == FaultKind::NodeOff && off && !was_off {
            self.switch_off(now, e.a);
        } else if e.kind == FaultKind::NodeOn && !off && was_off {
            if let Some(a) = self.air.get_mut(e.a.index()) {
                a.mac.switch_on(now);
            }
        }
    }

    /// Node `n` just went off: flush its interface queue and reset its MAC; the
    /// frame the MAC held is dropped too. A transmission already on the air ends
    /// normally (its signal is out).
    fn switch_off(&mut self, now: SimTime, n: NodeId) {
        let Some(w) = self.nodes[n.index()].wifi.as_mut() else {
            return;
        };
        let mut flushed = Vec::new();
        while let Some(q) = w.ifq.dequeue(now, &mut flushed) {
            flushed.push(q);
        }
        let a = &mut self.air[n.index()];
        let held = a.mac.switch_off();
        if let WifiMac::Dcf(d) = &mut a.mac {
            d.held_nav = None; // its timer is cancelled: the event would be stale
        }
        self.note_queue(now, n);
        for q in flushed.into_iter().filter(|q| q.arp.is_none()) {
            self.drop_packet(n, &q.pkt, DropReason::NodeOff);
        }
        for pkt in held {
            self.drop_packet(n, &pkt, DropReason::NodeOff);
        }
    }
}
