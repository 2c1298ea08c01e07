//! Carrying out the MAC's actions: [`Simulator::run_mac`] runs a MAC handler
//! and then its [`MacAction`]s in order (timers, transmit, deliver up after the
//! LL delay, a failed frame back to routing, per-frame counters, `Ready` → the
//! next packet from the interface queue); the DCF's timers (popped from the
//! scheduler's owned-timer table) and FRN's slot event; the held-back NAV event;
//! [`Simulator::transmit`], which puts a frame on the air.
//!
//! Contract: a handler's actions, and those its `Ready` appends, run in order
//! after it, never recursing into the same MAC; every handler run ends with
//! the release of the node's held-back NAV event, so the run is the same as if
//! every NAV arming had been its own event.

use super::air::{start_seq, Arrival, TxRecord};
use super::event::{Event, EventKind};
use super::{trace, Simulator};
use crate::faults::LinkEffect;
use crate::ids::NodeId;
use crate::mac::{Frame, FrameKind, FrnMac, MacAction, MacTimer, WifiMac};
use crate::metrics::DropReason;
use crate::phy::radio::TxId;
use crate::sim::{Scheduler, SimDuration, SimTime, TimerToken};
use crate::wire::Packet;
use std::rc::Rc;

/// A MAC armed its NAV timer (`SetTimer(Nav)`) for `at`: hold the event back,
/// with the sequence number it would have had if scheduled now.
#[inline]
pub(super) fn hold_nav(
    pending: &mut Option<(SimTime, u64, TimerToken)>,
    at: SimTime,
    tok: TimerToken,
    sched: &mut Scheduler<Event>,
) {
    *pending = Some((at, sched.reserve_seq(), tok));
}

/// Insert node `n`'s held-back NAV event if its MAC `needs` it
/// ([`WifiMac::needs_nav_event`]) and it is still due; forget it once its
/// time has passed (it would have been a no-op).
#[inline]
pub(super) fn release_nav(
    pending: &mut Option<(SimTime, u64, TimerToken)>,
    n: NodeId,
    needs: bool,
    sched: &mut Scheduler<Event>,
) {
    if let Some((at, seq, tok)) = *pending {
        if !sched.is_pending_key(at, seq) {
            *pending = None;
        } else if needs {
            *pending = None;
            sched.arm_owned_reserved(n.0, MacTimer::Nav as usize, at, seq, tok);
        }
    }
}

impl Simulator {
    /// Record node `n`'s MAC events (tests, MAC traces).
    pub fn enable_mac_log(&mut self, n: u32) {
        if let Some(a) = self.air.get_mut(n as usize) {
            a.mac.enable_log();
        }
    }

    /// Node `n`'s FRN MAC (`[mac] kind = "frn"`), for its counters.
    pub fn frn_mac(&self, n: u32) -> Option<&FrnMac> {
        self.air.get(n as usize).and_then(|a| a.mac.frn())
    }

    /// The FRN slot length (s) when the run uses FRN's MAC.
    pub(super) fn frn_slot_s(&self) -> Option<f64> {
        self.air.first()?.mac.frn().map(|m| m.slot().as_secs_f64())
    }

    /// Node `n`'s MAC event log, if enabled.
    pub fn mac_log(&self, n: u32) -> &[(SimTime, String)] {
        self.air
            .get(n as usize)
            .and_then(|a| a.mac.log())
            .unwrap_or(&[])
    }

    /// A MAC timer event (counted under its kind, and as stale when its arming
    /// was cancelled). A stale one's handler does nothing (the MACs' `timer`
    /// returns at once for a stale token), so of `run_mac` only the held-back
    /// NAV's release is left.
    #[inline]
    pub(super) fn mac_timer(&mut self, now: SimTime, n: NodeId, timer: MacTimer, tok: TimerToken) {
        let mac = &mut self.air[n.index()].mac;
        if let (MacTimer::Nav, WifiMac::Dcf(d)) = (timer, &mut *mac) {
            // No action can follow, and the MAC's backoff state is unchanged:
            // the held-back NAV needs no release either.
            if d.nav_expiry_quiet(now, tok) {
                return;
            }
        }
        if !mac.timer_is_live(timer, tok) {
            self.event_counts[EventKind::MacStale] += 1;
            self.release_nav(n);
            return;
        }
        self.run_mac(now, n, |mac, out| mac.timer(now, timer, tok, out))
    }

    /// Run a DCF handler of node `n` and carry out its actions in order. Actions
    /// that call back into the same MAC (`Ready` → next packet) append to the queue
    /// instead of recursing.
    pub(super) fn run_mac(
        &mut self,
        now: SimTime,
        n: NodeId,
        f: impl FnOnce(&mut WifiMac, &mut Vec<MacAction>),
    ) {
        let mut buf = std::mem::take(&mut self.mac_buf);
        // The packet the MAC holds now is the one a `FrameDone` below is about:
        // a packet taken on `Ready` cannot finish within the same handler.
        let held_app = self.air[n.index()].mac.held_app();
        f(&mut self.air[n.index()].mac, &mut buf);
        // `buf` is the queue: actions run in order, and those of a `Ready` below
        // are appended behind the rest (no copying between two queues).
        let mut next = 0;
        while next < buf.len() {
            let a = std::mem::replace(&mut buf[next], MacAction::Ready);
            next += 1;
            match a {
                MacAction::Transmit => self.transmit(now, n),
                MacAction::SetTimer(MacTimer::Nav, at, tok) => match &mut self.air[n.index()].mac {
                    WifiMac::Dcf(d) => hold_nav(&mut d.held_nav, at, tok, &mut self.sched),
                    WifiMac::Frn(_) => self.sched.arm_owned(n.0, MacTimer::Nav as usize, at, tok),
                },
                // FRN's slot timer is an event; the DCF's wait in the owned-timer table.
                MacAction::SetTimer(MacTimer::Slot, at, tok) => self
                    .sched
                    .schedule_at(at, Event::Mac(n, MacTimer::Slot, tok)),
                MacAction::SetTimer(t, at, tok) => self.sched.arm_owned(n.0, t as usize, at, tok),
                // Only the DCF cancels, and never its NAV: the arming is in the owned-timer table.
                MacAction::CancelTimer(t) => self.sched.disarm_owned(n.0, t as usize),
                // ns-2's LL passes received packets up after its delay, as it passes them down;
                // the copy is this node's from here (held at `ll` until then).
                MacAction::Deliver(from) => {
                    let pkt = self.air[n.index()].mac.take_parcel();
                    self.pcap(n, &pkt);
                    if pkt.tag.is_some() {
                        self.nodes[n.index()].counters.received_packets += 1;
                    }
                    let p = self.parcels.put(pkt);
                    self.sched
                        .schedule_at(now + self.mac_params.ll_delay, Event::LlUp(n, p, from))
                }
                MacAction::ArpIn(m, _) => self.arp_in(now, n, m),
                // The frame the MAC held when its node went off fails without reaching the air.
                MacAction::TxFailed(next_hop) => {
                    let pkt = self.air[n.index()].mac.take_parcel();
                    if self.is_off(n) {
                        self.drop_packet(n, &pkt, DropReason::NodeOff);
                    } else {
                        self.mac_tx_failed(now, n, Rc::unwrap_or_clone(pkt), next_hop);
                    }
                }
                MacAction::Discard => {
                    let (f, code) = self.air[n.index()].mac.take_discarded();
                    self.trace_discard(n, &f, code);
                }
                MacAction::Overheard(from, to) => {
                    let pkt = self.air[n.index()].mac.take_parcel();
                    if !self.is_off(n) {
                        self.with_routing(now, n, |r, ctx| r.overheard(ctx, &pkt, from, to));
                    }
                }
                MacAction::FrameDone { .. } if self.is_off(n) => {}
                MacAction::FrameDone { retries, ok } => {
                    let app = self.air[n.index()].mac.done_is_app(held_app);
                    let c = &mut self.nodes[n.index()].counters;
                    if ok && app {
                        // Acknowledged: the copy is the next hop's now.
                        c.sent_packets += 1;
                    }
                    c.mac_frames_failed += u64::from(!ok);
                    c.mac_frames += 1;
                    c.mac_retries += retries as u64;
                    // LRED learns the retry count and decides on adaptive pacing.
                    let w = self.wifi(n);
                    w.ifq.mac_feedback(retries);
                    let pacing = w.ifq.pacing();
                    self.air[n.index()].mac.set_pacing(pacing);
                }
                MacAction::Ready => {
                    let mut dropped = Vec::new();
                    let mac = &mut self.air[n.index()].mac;
                    if mac.is_free() {
                        let w = self.nodes[n.index()].wifi.as_mut().expect("wireless node");
                        if let Some(q) = w.ifq.dequeue(now, &mut dropped) {
                            match q.arp {
                                Some(m) => mac.enqueue_arp(now, m, q.next_hop, &mut buf),
                                None => mac.enqueue(now, q.pkt, q.next_hop, &mut buf),
                            }
                        }
                        self.note_queue(now, n);
                    }
                    for q in dropped {
                        if let Some(m) = q.arp {
                            self.trace_arp_drop(n, &m, q.next_hop, DropReason::EarlyDrop);
                            self.nodes[n.index()]
                                .counters
                                .on_drop(DropReason::EarlyDrop, false);
                        } else {
                            self.trace_drop_towards(n, &q.pkt, DropReason::EarlyDrop, q.next_hop);
                            self.account_drop(n, &q.pkt, DropReason::EarlyDrop);
                        }
                    }
                }
            }
        }
        buf.clear();
        self.mac_buf = buf;
        self.release_nav(n);
    }

    /// [`Air::release_nav`] after a MAC handler of node `n`.
    pub(super) fn release_nav(&mut self, n: NodeId) {
        self.air[n.index()].release_nav(n, &mut self.sched);
    }

    /// Put node `n`'s MAC's frame on the air: every node that senses it gets
    /// a signal start and end, delayed by the propagation time.
    fn transmit(&mut self, now: SimTime, n: NodeId) {
        let frame = self.air[n.index()].mac.take_frame();
        self.trace_frame(trace::Ev::Send, n, &frame);
        if let (FrameKind::Data, false, Some(p)) = (frame.kind, frame.retry, &frame.pkt) {
            // The datagram leaves the interface: once, at its first attempt (MAC retries are below IP).
            if !self.is_off(n) {
                self.pcap(n, p);
            }
        }
        self.air[n.index()].radio.start_tx();
        let airtime = frame.airtime;
        // The TxEnd's key, taken before the receivers'; the event is its own
        // only without receivers, else the signal-end walk's (`TxRecord::tx_end`).
        let (tx_end_at, tx_end_seq) = (now + airtime, self.sched.reserve_seq());
        let id = match self.free_txs.pop() {
            Some(id) => id,
            None => {
                self.txs.push(None);
                (self.txs.len() - 1) as TxId
            }
        };
        let Simulator {
            channel,
            phy_rngs,
            faults,
            rx_pool,
            ..
        } = self;
        let ch = channel.as_mut().expect("wireless transmit needs a channel");
        let (params, random) = (ch.params, ch.params.propagation.is_random());
        let (faults, cs_threshold_w) = (faults.as_ref(), params.cs_threshold_w);
        let mut rx = rx_pool.pop().unwrap_or_default();
        // An off node's radio puts nothing on the air.
        let neighbors = match faults {
            Some(f) if f.off[n.index()] => &[][..],
            _ => ch.neighbors_at_arrival_order(n, now),
        };
        // Each receiver's start and end events get the numbers of one
        // contiguous block right after the TxEnd's, two per receiver in
        // (arrival, node) order (taken from the scheduler below). The events
        // used to be scheduled one by one in node order, so equal arrivals ran
        // in node order: the same order as here; and no other event's number
        // falls inside the block. The channel lists receivers in (delay, node)
        // order already.
        // Written into spare capacity (no growth check per receiver).
        rx.clear();
        rx.reserve(neighbors.len());
        let slots = &mut rx.spare_capacity_mut()[..neighbors.len()];
        /// The usual case (no faults, no shadowing draw): the loop below in a
        /// function of its own, whose few live values stay in registers.
        #[inline(never)]
        fn plain(
            neighbors: &[crate::phy::Neighbor],
            slots: &mut [std::mem::MaybeUninit<Arrival>],
            now: SimTime,
            cs_threshold_w: f64,
        ) -> usize {
            let mut len = 0;
            for nb in neighbors {
                if nb.mean_power_w < cs_threshold_w {
                    continue;
                }
                slots[len].write(Arrival {
                    node: nb.node,
                    undecodable: false,
                    power_w: nb.mean_power_w,
                    start: now + nb.delay,
                });
                len += 1;
            }
            len
        }
        let len = if faults.is_none() && !random {
            plain(neighbors, slots, now, cs_threshold_w)
        } else {
            let mut len = 0;
            for nb in neighbors {
                let power_w = if random {
                    params
                        .propagation
                        .rx_from_mean_w(nb.mean_power_w, &mut phy_rngs[nb.node.index()])
                } else {
                    nb.mean_power_w
                };
                let mut undecodable = false;
                if let Some(f) = faults {
                    // Off receivers and blocked links carry no signal (not even
                    // carrier); an undecodable link carries one that is never
                    // decoded. Checked after the draw so faults do not shift a
                    // receiver's stream.
                    if f.off[nb.node.index()] {
                        continue;
                    }
                    if f.state.any_link_down() {
                        match f.state.link_effect(n, nb.node) {
                            None => {}
                            Some(LinkEffect::Blocked) => continue,
                            Some(LinkEffect::Undecodable) => undecodable = true,
                        }
                    }
                }
                if power_w < cs_threshold_w {
                    continue;
                }
                slots[len].write(Arrival {
                    node: nb.node,
                    undecodable,
                    power_w,
                    start: now + nb.delay,
                });
                len += 1;
            }
            len
        };
        // SAFETY: the first `len` slots were written just above, and `len` is at
        // most `neighbors.len()`, within the reserved capacity.
        unsafe { rx.set_len(len) };
        if rx.is_empty() {
            self.free_txs.push(id);
            self.rx_pool.push(rx);
            self.sched
                .schedule_reserved(tx_end_at, tx_end_seq, Event::TxEnd(n));
        } else {
            debug_assert!(rx
                .windows(2)
                .all(|w| (w[0].start, w[0].node) < (w[1].start, w[1].node)));
            // Take the block numbered above: nothing was reserved since the TxEnd's.
            let block = self.sched.reserve_seqs(2 * rx.len() as u64);
            debug_assert_eq!(block, tx_end_seq + 1);
            self.sched
                .schedule_reserved(rx[0].start, start_seq(block, 0), Event::SignalStart(id));
            self.sched
                .schedule_reserved(tx_end_at, tx_end_seq, Event::SignalEnd(id));
            // The slot is free (`None`): nothing to drop, so no drop code.
            let old = self.txs[id as usize].replace(TxRecord {
                frame,
                airtime,
                rx,
                seq0: block,
                next_start: 0,
                next_end: 0,
                tx_end: Some(n),
            });
            debug_assert!(old.is_none());
            std::mem::forget(old);
        }
    }

    /// The MAC's carrier handler. Out of the signal walks' line: most carrier
    /// changes run none ([`Air::note_carrier`]), and the walks keep their
    /// registers.
    #[inline(never)]
    pub(super) fn mac_carrier(&mut self, now: SimTime, n: NodeId, sensing: bool) {
        self.run_mac(now, n, |mac, out| mac.carrier(now, sensing, out));
    }

    /// The MAC's handler of a captured frame of `airtime` (out of line, as [`Simulator::mac_carrier`]).
    #[inline(never)]
    pub(super) fn mac_captured(&mut self, now: SimTime, n: NodeId, airtime: SimDuration) {
        self.run_mac(now, n, |mac, out| mac.rx_captured(now, airtime, out));
    }

    /// A frame `tx` decoded at `n` that [`Air::reception_quiet`] left to the
    /// MAC's handlers (out of the walk's line).
    #[inline(never)]
    pub(super) fn mac_frame(
        &mut self,
        now: SimTime,
        n: NodeId,
        tx: TxId,
        sensing: bool,
        changed: bool,
    ) {
        // A copy while the MAC reads it (a few words; the packet is shared).
        let frame = self.frame_of(tx);
        if frame.dst.is_none_or(|d| d == n) {
            self.trace_frame(trace::Ev::Recv, n, &frame);
        }
        self.mac_reception(now, n, Ok(&frame), sensing, changed);
    }

    /// What [`Air::reception_quiet`] left of an errored reception to the MAC's handlers.
    #[inline(always)]
    pub(super) fn after_quiet_error(
        &mut self,
        now: SimTime,
        n: NodeId,
        quiet: Result<Option<bool>, (bool, bool)>,
    ) {
        match quiet {
            Ok(None) => {}
            Ok(Some(sensing)) => self.mac_carrier(now, n, sensing),
            Err((sensing, changed)) => self.mac_reception(now, n, Err(()), sensing, changed),
        }
    }

    /// Tell the MAC of a reception outcome (first) and any carrier change (then),
    /// so that EIFS is chosen before the idle medium resumes the backoff: the
    /// part of a reception [`Air::reception_quiet`] left to the MAC's handlers
    /// (`sensing` and whether it `changed` are already noted).
    #[inline(never)]
    fn mac_reception(
        &mut self,
        now: SimTime,
        n: NodeId,
        rx: Result<&Frame, ()>,
        sensing: bool,
        changed: bool,
    ) {
        self.run_mac(now, n, |mac, out| {
            match rx {
                Ok(frame) => mac.rx_ok(now, frame, out),
                Err(()) => mac.rx_error(now, out),
            }
            if changed {
                mac.carrier(now, sensing, out);
            }
        });
    }

    /// The DCF gave `pkt` up after its retry limit and hands it back to routing
    /// (ns-2's `xmit_failure_` callback), unless routing set none on it
    /// ([`Routing::failure_callback`]): then it ends here as `mac.RET`. The MAC traces the frame itself when
    /// it discards it right after (its `Discard`), so routing's own `RetryLimit`
    /// drop of the packet during the callback is not traced a second time.
    fn mac_tx_failed(&mut self, now: SimTime, n: NodeId, pkt: Packet, next_hop: NodeId) {
        let dcf = self.air[n.index()].mac.dcf().is_some();
        let before = self
            .tracer
            .as_mut()
            .filter(|_| dcf)
            .map(|t| t.handing_back.replace((n, pkt.uid)));
        if self.nodes[n.index()].routing.failure_callback(&pkt) {
            self.with_routing(now, n, |r, ctx| r.tx_failed(ctx, pkt, next_hop));
        } else {
            // No callback (ns-2): the packet ends at the MAC, whose discard line is its trace.
            self.drop_packet(n, &pkt, DropReason::RetryLimit);
        }
        if let (Some(t), Some(before)) = (self.tracer.as_mut(), before) {
            t.handing_back = before;
        }
    }
}
