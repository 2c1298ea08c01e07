//! The channel's side of a transmission: each node's [`Air`] (radio and MAC,
//! laid out for the walks), a frame on the air ([`TxRecord`]) and its receivers
//! ([`Arrival`]), and the signal walks (`SignalStart`, `SignalEnd`, `TxEnd`):
//! one heap entry walks a frame's receivers, running each signal start or end
//! inline while it is the earliest pending event. Reception outcomes and
//! carrier changes go to the MAC's handlers (world/mac.rs) only when they can
//! matter to it.
//!
//! Contract: the walks run receivers in the order and at the times separate
//! events would have (their sequence numbers are reserved at `transmit`), and
//! count each receiver as one event of its kind.

use super::event::{Event, EventKind};
use super::mac::release_nav;
use super::{trace, Simulator};
use crate::ids::NodeId;
use crate::mac::dcf::FrameHead;
use crate::mac::{Frame, MacTimer, WifiMac};
use crate::phy::radio::{RxFailure, TxId};
use crate::phy::{CaptureParams, Radio, RadioExtra, RadioParams, Reception, RxResult};
use crate::sim::{Scheduler, SimDuration, SimTime};

/// A node's MAC and radio: what a frame's signal start and end read and
/// write at each of its receivers. Kept in one dense array indexed by node
/// (`Simulator::air`), apart from the rest of the node, with the fields the
/// walks read in its first line: the radio (32 bytes) and the DCF's first 32
/// bytes; a NAV extension also writes the next line (the DCF's NAV timer and
/// held-back arming, [`Dcf::held_nav`]). At 1000 nodes a receiver's state is
/// usually out of cache, and each line it spans costs a miss.
///
/// The held-back NAV arming: most NAV expiries find no backoff to resume, so
/// the MAC's NAV timer is armed in the scheduler (`arm_owned_reserved`,
/// replacing a NAV arming released earlier) only once the MAC needs it
/// (`Dcf::needs_nav_event`), with the sequence number it had when armed: the
/// run is the same as with every NAV event scheduled, minus the no-op ones.
#[repr(C, align(64))]
pub(super) struct Air {
    pub(super) radio: Radio,
    pub(super) mac: WifiMac,
    /// Used in SINR mode and by switched-off nodes only (the general walk).
    pub(super) radio_extra: RadioExtra,
}

impl Air {
    /// After a MAC handler (or what stands for one): node `n`'s held-back
    /// NAV event.
    #[inline]
    pub(super) fn release_nav(&mut self, n: NodeId, sched: &mut Scheduler<Event>) {
        if let WifiMac::Dcf(d) = &mut self.mac {
            let needs = d.needs_nav_event();
            release_nav(&mut d.held_nav, n, needs, sched);
        }
    }

    /// The radio's carrier state after a signal event, `sensing`
    /// (`radio.sensing()`), which the event `changed`; returns it when the MAC
    /// must run its carrier handler: the change can matter to it
    /// ([`Dcf::carrier_quiet`]). The MAC knows the state before the event:
    /// signals come and go only in signal events, and each one tells the
    /// MAC (here, or with a reception) when it changes the carrier.
    #[inline]
    fn note_carrier(&mut self, now: SimTime, sensing: bool, changed: bool) -> Option<bool> {
        debug_assert_eq!(sensing, self.radio.sensing());
        if !changed {
            return None;
        }
        if let WifiMac::Dcf(d) = &mut self.mac {
            if d.carrier_quiet(now, sensing) {
                return None;
            }
        }
        Some(sensing)
    }
}

impl Air {
    /// A reception's outcome (`Some`: the frame arrived intact; `None`: it
    /// ended in error) and the carrier change after it, when all they can do
    /// is set the NAV ([`Dcf::rx_quiet`], most receptions): carried out here,
    /// with no handler run (`Ok(None)`), or with the carrier handler only when
    /// the carrier change can matter (`Ok(Some(sensing))`). Otherwise returns
    /// the carrier state and whether it `changed` (in the signal's end, as
    /// [`Air::note_carrier`]), for [`Simulator::mac_reception`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn reception_quiet(
        &mut self,
        now: SimTime,
        n: NodeId,
        f: Option<FrameHead>,
        changed: bool,
        sched: &mut Scheduler<Event>,
    ) -> Result<Option<bool>, (bool, bool)> {
        let sensing = self.radio.sensing();
        let WifiMac::Dcf(d) = &mut self.mac else {
            return Err((sensing, changed));
        };
        let Some(nav) = d.rx_quiet(now, f) else {
            return Err((sensing, changed));
        };
        if let Some((at, tok)) = nav {
            // As `run_mac` does with the `SetTimer(Nav)` of `rx_ok`/`rx_error`
            // (`hold_nav`), and after it (`release_nav`, whose key, just
            // reserved, is still pending).
            let seq = sched.reserve_seq();
            if d.needs_nav_event() {
                d.held_nav = None;
                sched.arm_owned_reserved(n.0, MacTimer::Nav as usize, at, seq, tok);
            } else {
                d.held_nav = Some((at, seq, tok));
            }
        }
        if changed && !d.carrier_quiet_after_rx(now, sensing) {
            return Ok(Some(sensing));
        }
        Ok(None)
    }
}

/// A frame on the air, shared by all its receivers until the last signal ends.
pub(super) struct TxRecord {
    /// Held inline (a few words: the packet is shared), so a transmission
    /// allocates nothing; a receiver's MAC reads a copy ([`Simulator::frame_of`]).
    pub(super) frame: Frame,
    pub(super) airtime: SimDuration,
    /// Its receivers, sorted by (arrival, sequence number of the start event).
    pub(super) rx: Vec<Arrival>,
    /// The sequence number of `rx[0]`'s signal start: receiver `i`'s start
    /// and end events have `seq0 + 2i` and `seq0 + 2i + 1` ([`Arrival`]).
    pub(super) seq0: u64,
    /// Index in `rx` of the next signal start and of the next signal end.
    pub(super) next_start: usize,
    pub(super) next_end: usize,
    /// The sender while its `TxEnd` is still to run: until then the walk of
    /// the signal ends waits at the `TxEnd`'s key (which is before the first
    /// end's: its sequence number was taken first) and runs it first. One
    /// heap entry less per frame.
    pub(super) tx_end: Option<NodeId>,
}

/// One receiver of a frame, the `i`th of its [`TxRecord`]: the signal starts at
/// `start` with key (start, seq0 + 2i) and ends at start + airtime with key
/// (start + airtime, seq0 + 2i + 1), the sequence numbers the two events had
/// when each was scheduled on its own. 24 bytes: the walks read the list
/// in order, and at 1000 nodes most of it is out of cache.
#[derive(Clone, Copy)]
pub(super) struct Arrival {
    pub(super) node: NodeId,
    /// The link from the sender was failed as a lossy link when the frame
    /// was sent (`effect = "undecodable"`): sensed, never decoded. In the
    /// padding after `node`: the list stays 24 bytes an arrival.
    pub(super) undecodable: bool,
    pub(super) power_w: f64,
    pub(super) start: SimTime,
}

/// The sequence number of the signal start of receiver `i` of a transmission
/// whose first is `seq0` (its end's is one more).
#[inline(always)]
pub(super) fn start_seq(seq0: u64, i: usize) -> u64 {
    seq0 + 2 * i as u64
}

impl Simulator {
    /// Run the signal starts of transmission `tx`, from the next one on, as long
    /// as each is the earliest pending event (receivers hear a frame within
    /// microseconds of each other, so usually all of them); then put the walk
    /// back in the heap at the next start's key. The events run in the same
    /// order, at the same times, as if each had been its own heap entry.
    pub(super) fn signal_starts(&mut self, now: SimTime, tx: TxId) {
        let params = self.channel.as_ref().expect("channel").params;
        // A MAC-level drop trace writes the frames a collision drops at its start
        // (`collision_drop`): the general walk.
        match CaptureParams::of(&params) {
            Some(c) if self.faults.is_none() && !self.traces_mac_drops() => {
                self.signal_starts_in::<true>(now, tx, &params, c)
            }
            _ => self.signal_starts_in::<false>(now, tx, &params, CaptureParams::default()),
        }
    }

    /// [`Simulator::signal_starts`]; `PLAIN`: capture mode (`c`) and no
    /// faults, checked once per walk instead of at every receiver.
    #[inline(always)]
    fn signal_starts_in<const PLAIN: bool>(
        &mut self,
        mut now: SimTime,
        tx: TxId,
        params: &RadioParams,
        c: CaptureParams,
    ) {
        // The receiver list is lent to the walk: no handler reads it, and the
        // slot stays `tx`'s while the walk runs (it is freed after the last end).
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        let (rx, airtime, seq0, first) = (
            std::mem::take(&mut rec.rx),
            rec.airtime,
            rec.seq0,
            rec.next_start,
        );
        let mut i = first;
        loop {
            let a = rx[i];
            i += 1;
            self.signal_start::<PLAIN>(now, a, tx, airtime, params, c);
            let Some(b) = rx.get(i) else { break };
            let seq = start_seq(seq0, i);
            if !self.sched.advance_inline(b.start, seq) {
                self.sched
                    .schedule_reserved(b.start, seq, Event::SignalStart(tx));
                break;
            }
            now = b.start;
        }
        // The first start was counted by `dispatch`.
        self.event_counts[EventKind::SignalStart] += (i - first - 1) as u64;
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        rec.rx = rx;
        rec.next_start = i;
    }

    /// Node `n`'s own transmission ends.
    pub(super) fn tx_end(&mut self, now: SimTime, n: NodeId) {
        let w = &mut self.air[n.index()];
        w.radio.end_tx();
        match &mut w.mac {
            // The DCF's handler has no actions: of `run_mac` only the NAV's release is left.
            WifiMac::Dcf(d) => {
                d.tx_end_quiet();
                w.release_nav(n, &mut self.sched);
            }
            WifiMac::Frn(_) => self.run_mac(now, n, |mac, out| mac.tx_end(now, out)),
        }
    }

    /// As [`Simulator::signal_starts`] for the signal ends; the last one frees
    /// `tx`. The first entry is the sender's `TxEnd` ([`TxRecord::tx_end`]).
    pub(super) fn signal_ends(&mut self, mut now: SimTime, tx: TxId) {
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        if let Some(n) = rec.tx_end.take() {
            // This event was the TxEnd (counted as a signal end by `dispatch`).
            self.event_counts[EventKind::SignalEnd] -= 1;
            self.event_counts[EventKind::TxEnd] += 1;
            self.tx_end(now, n);
            let rec = self.txs[tx as usize].as_ref().expect("live transmission");
            let (at, seq) = (rec.rx[0].start + rec.airtime, start_seq(rec.seq0, 0) + 1);
            if !self.sched.advance_inline(at, seq) {
                self.sched.schedule_reserved(at, seq, Event::SignalEnd(tx));
                return;
            }
            self.event_counts[EventKind::SignalEnd] += 1;
            now = at;
        }
        match self.faults {
            None if matches!(
                self.channel.as_ref().expect("channel").params.reception,
                Reception::Capture { .. }
            ) =>
            {
                self.signal_ends_in::<true>(now, tx)
            }
            _ => self.signal_ends_in::<false>(now, tx),
        }
    }

    /// The walk of [`Simulator::signal_ends`] (`PLAIN` as in [`Simulator::signal_starts_in`]).
    #[inline(always)]
    fn signal_ends_in<const PLAIN: bool>(&mut self, mut now: SimTime, tx: TxId) {
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        let (mut rx, airtime, seq0, first) = (
            std::mem::take(&mut rec.rx),
            rec.airtime,
            rec.seq0,
            rec.next_end,
        );
        let mut i = first;
        // What the receivers' quiet paths read of the frame, read once.
        let head = FrameHead::of(&rec.frame);
        let params = self.channel.as_ref().expect("channel").params;
        loop {
            let a = rx[i];
            i += 1;
            self.signal_end::<PLAIN>(now, a.node, tx, head, &params);
            let Some(b) = rx.get(i) else {
                // The first end was counted by `dispatch` (or the TxEnd's walk step).
                self.event_counts[EventKind::SignalEnd] += (i - first - 1) as u64;
                // All of `tx`'s signals have ended: its slot and receiver list are reused.
                self.txs[tx as usize] = None;
                self.free_txs.push(tx);
                rx.clear();
                self.rx_pool.push(rx);
                return;
            };
            let (at, seq) = (b.start + airtime, start_seq(seq0, i) + 1);
            if !self.sched.advance_inline(at, seq) {
                self.sched.schedule_reserved(at, seq, Event::SignalEnd(tx));
                break;
            }
            now = at;
        }
        self.event_counts[EventKind::SignalEnd] += (i - first - 1) as u64;
        let rec = self.txs[tx as usize].as_mut().expect("live transmission");
        rec.rx = rx;
        rec.next_end = i;
    }

    /// One receiver's signal start (`PLAIN` as in [`Simulator::signal_starts_in`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn signal_start<const PLAIN: bool>(
        &mut self,
        now: SimTime,
        a: Arrival,
        tx: TxId,
        airtime: SimDuration,
        params: &RadioParams,
        c: CaptureParams,
    ) {
        let (n, power_w) = (a.node, a.power_w);
        // Only a walk with faults (not `PLAIN`) meets failed lossy links.
        let undecodable = !PLAIN && a.undecodable;
        if !PLAIN && self.is_off(n) {
            // Switched off since the frame was sent.
            let w = &mut self.air[n.index()];
            w.radio.signal_missed(&mut w.radio_extra, tx);
            return;
        }
        let w = &mut self.air[n.index()];
        let end = now + airtime;
        let was_idle = !w.radio.sensing();
        // The lock before, when a collision's dropped frame may be traced.
        let before = if !PLAIN
            && matches!(params.reception, Reception::Capture { .. })
            && self.tracer.is_some()
        {
            w.radio.lock_view()
        } else {
            None
        };
        let transmitting = w.radio.is_transmitting();
        let captured = if PLAIN {
            w.radio.capture_start(c, tx, power_w, end)
        } else if undecodable {
            w.radio
                .signal_start_undecodable(&mut w.radio_extra, params, tx, power_w, end)
        } else {
            w.radio
                .signal_start(&mut w.radio_extra, params, tx, power_w, end)
        };
        if let (Some((old_tx, old_failure)), false) = (before, captured) {
            // Locked and not captured: a collision. ns-2 discards at once the frame
            // that ends first (`Mac802_11::collision`); a frame that was never
            // decodable (below RXThresh, or met while transmitting) leaves no line
            // (`discard` frees errored packets silently).
            let new_lock = self.air[n.index()].radio.lock_view().map(|(t, _)| t);
            let (dropped, decodable) = if new_lock != Some(old_tx) {
                (
                    old_tx,
                    !matches!(
                        old_failure,
                        Some(
                            RxFailure::BelowThreshold
                                | RxFailure::HalfDuplex
                                | RxFailure::LinkFailed
                        )
                    ),
                )
            } else {
                (
                    tx,
                    !transmitting && !undecodable && power_w >= params.rx_threshold_w,
                )
            };
            if decodable {
                self.collision_drop(n, dropped);
            }
        }
        let w = &mut self.air[n.index()];
        if captured {
            // The radio was busy already: no carrier change to report.
            self.mac_captured(now, n, airtime);
        } else if let Some(sensing) = w.note_carrier(now, true, was_idle) {
            self.mac_carrier(now, n, sensing);
        }
    }

    /// One receiver's signal end (`PLAIN` as in [`Simulator::signal_starts_in`]).
    #[inline(always)]
    fn signal_end<const PLAIN: bool>(
        &mut self,
        now: SimTime,
        n: NodeId,
        tx: TxId,
        head: FrameHead,
        params: &RadioParams,
    ) {
        let Simulator {
            air, faults, sched, ..
        } = self;
        let w = &mut air[n.index()];
        // A plain walk's signal was counted at its start (no missed starts).
        let was_sensing = PLAIN || w.radio.sensing();
        let result = if PLAIN {
            w.radio.capture_end(tx)
        } else {
            w.radio.signal_end(&mut w.radio_extra, params, tx)
        };
        let changed = was_sensing != w.radio.sensing();
        if !PLAIN && faults.as_ref().is_some_and(|f| f.off[n.index()]) {
            // An off node's MAC learns of carrier changes only, never of frames.
            self.report_carrier(now, n, changed);
            return;
        }
        match result {
            RxResult::NotLocked => {
                if let Some(sensing) = w.note_carrier(now, w.radio.sensing(), changed) {
                    self.mac_carrier(now, n, sensing);
                }
            }
            RxResult::Decoded => {
                // A frame for us is never quiet, so it is traced (`mac_frame`) before the MAC hears of it.
                match w.reception_quiet(now, n, Some(head), changed, sched) {
                    Ok(None) => {}
                    Ok(Some(sensing)) => self.mac_carrier(now, n, sensing),
                    Err((sensing, changed)) => self.mac_frame(now, n, tx, sensing, changed),
                }
            }
            RxResult::Failed(why) => {
                // Most errors are signals too weak to decode: no frame to look at.
                if why == RxFailure::Collision && head.dst.is_none_or(|d| d == n) {
                    self.collision_for_us(now, n, tx, changed);
                } else {
                    let quiet = w.reception_quiet(now, n, None, changed, sched);
                    self.after_quiet_error(now, n, quiet);
                }
            }
        }
    }

    /// Whether the trace writes MAC drops (then collisions are traced at their start too).
    fn traces_mac_drops(&self) -> bool {
        self.tracer
            .as_ref()
            .is_some_and(|t| t.wants_drop(crate::trace::ns2::Level::Mac))
    }

    /// A decodable frame `tx` that a collision at `n` dropped as it began (ns-2
    /// `collision` → `discard(…, DROP_MAC_COLLISION)`): a `D … MAC COL` line when
    /// it was for `n` (or broadcast), as ns-2's `discard` rules. Trace only: the
    /// `mac_collisions` counter counts the receptions that end in a collision.
    #[inline(never)]
    fn collision_drop(&mut self, n: NodeId, tx: TxId) {
        let frame = self.frame_of(tx);
        if frame.dst.is_none_or(|d| d == n) {
            self.trace_frame(trace::Ev::Drop, n, &frame);
        }
    }

    /// Frame `tx` for `n` was lost to a collision (out of the walk's line).
    #[inline(never)]
    fn collision_for_us(&mut self, now: SimTime, n: NodeId, tx: TxId, changed: bool) {
        let frame = self.frame_of(tx);
        self.frame_collision(n, &frame);
        let Simulator { air, sched, .. } = self;
        let quiet = air[n.index()].reception_quiet(now, n, None, changed, sched);
        self.after_quiet_error(now, n, quiet);
    }

    /// A copy of transmission `tx`'s frame, for a handler that may start
    /// transmissions of its own (and so reallocate `txs`).
    #[inline(always)]
    pub(super) fn frame_of(&self, tx: TxId) -> Frame {
        self.txs[tx as usize]
            .as_ref()
            .expect("live transmission")
            .frame
            .clone()
    }

    /// Tell the MAC of a carrier change, if a signal event `changed` the
    /// radio's carrier. Most changes cannot matter to the MAC
    /// ([`Dcf::carrier_quiet`]) and cost no handler run.
    #[inline]
    fn report_carrier(&mut self, now: SimTime, n: NodeId, changed: bool) {
        let w = &mut self.air[n.index()];
        if let Some(sensing) = w.note_carrier(now, w.radio.sensing(), changed) {
            self.mac_carrier(now, n, sensing);
        }
    }

    /// A frame for `n` was lost to a collision: a MAC event, not a packet drop
    /// (its sender still holds the packet and retries). Traced `COL` like ns-2.
    fn frame_collision(&mut self, n: NodeId, f: &Frame) {
        // Every frame kind, RTS/CTS/ACK included, as ns-2 traces them.
        self.trace_frame(trace::Ev::Drop, n, f);
        self.nodes[n.index()].counters.mac_collisions += 1;
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::mac::{Dcf, MacParams};
    use crate::sim::{stream, Component};
    use std::mem::{align_of, offset_of};

    /// The signal walks read a receiver's radio and its DCF's first 32 bytes
    /// (`Dcf`'s layout test): one line.
    #[test]
    fn air_keeps_the_walks_fields_in_one_line() {
        assert_eq!(align_of::<Air>(), 64);
        assert_eq!(offset_of!(Air, radio), 0);
        assert!(std::mem::size_of::<Radio>() <= 32);
        assert_eq!(offset_of!(Air, mac), 32);
        let a = Air {
            radio: Radio::new(),
            mac: WifiMac::Dcf(Dcf::new(
                NodeId(0),
                MacParams::default(),
                stream(1, 0, Component::Mac),
            )),
            radio_extra: RadioExtra::default(),
        };
        let WifiMac::Dcf(d) = &a.mac else {
            unreachable!()
        };
        // The DCF sits at the start of its enum (the variant is told by a niche, not a tag before it).
        assert_eq!(
            d as *const Dcf as usize - &a as *const Air as usize,
            offset_of!(Air, mac)
        );
    }
}
