//! IEEE 802.11 Distributed Coordination Function as ns-2.35's `Mac802_11`
//! (`mac/mac-802_11.cc`, `mac/mac-timers.cc`), re-implemented state for state so
//! that its timing quirks are reproduced; switches in [`MacParams`] give the
//! standard's behaviour where ns-2 departs from it (docs/wireless.md).
//!
//! ns-2's structure, which this follows:
//! * the medium is idle when no frame is being received (here: no signal ≥
//!   CSThresh on the air), our transmit state is idle, and the NAV has expired;
//! * one backoff timer: `start` draws `rand % cw` slots (0..cw−1) and, if the
//!   medium is idle, counts them down after `difs`; it pauses when the medium
//!   turns busy (keeping whole elapsed slots) and resumes after DIFS when it is
//!   idle again — always DIFS: an errored frame sets the NAV to EIFS instead, so
//!   ns-2 waits EIFS + DIFS (`eifs_mode`);
//! * a packet from the queue always starts a DIFS + backoff, even on an idle
//!   medium (`bugFix_timer_`; `immediate_access` gives §9.2.5.1);
//! * CTS and ACK wait SIFS on a defer timer; a CTS (and the DATA after a CTS) is
//!   sent only if the medium is idle then, otherwise dropped (CTS) or replaced by a
//!   new RTS with a doubled window (DATA); an ACK goes regardless;
//! * a transmit state (RTS, CTS, SEND, ACK) lasts until its send timer: RTS + CTS
//!   round trip, CTS + the DATA it announced, DATA + ACK, or the ACK's own length;
//!   while it is set the node neither counts down nor answers an RTS;
//! * retry counts are the station's (ssrc/slrc); a CTS resets ssrc; DATA after
//!   RTS/CTS counts against the long limit; an exhausted frame goes back to the
//!   routing protocol (`xmit_failure_`) and the window resets without a backoff;
//! * a data frame that did not follow our CTS is discarded, not acknowledged
//!   (`ack_data_without_cts` for §9.2.8);
//! * a frame that ends while we transmit is lost silently (no EIFS); a captured
//!   frame sets the NAV to its end + EIFS.
//!
//! `FrameDone` reports every retransmission of a frame (RTS and DATA), not the
//! station counter, so LRED and the `mac_retries` metric see what Fu et al. mean
//! by "retries per packet". Link-layer adaptive pacing (paper 001, Alg. 2) adds
//! one data-frame time to the backoff after a successful exchange.
//!
//! Style: handlers take `now` and push [`MacAction`]s; the simulator carries them
//! out (radio, channel, timers, network layer), so the DCF is testable alone.

use super::arp::{ArpMsg, ARP_BYTES};
use super::frame::{
    duration_field, EifsMode, Frame, FrameKind, MacParams, Outbox, ACK_BYTES, CTS_BYTES,
    MAX_PROPAGATION, RTS_BYTES,
};
use crate::ids::NodeId;
use crate::sim::{SimDuration, SimRng, SimTime, Timer, TimerToken};
use crate::wire::Packet;
use rand::Rng;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// ns-2's trace codes of the frames the DCF discards ([`MacAction::Discard`]):
/// given up after the retry limit, and received twice (`DROP_MAC_DUPLICATE`,
/// a frame event, not a packet drop: no `DropReason`).
pub const DROP_RETRY: &str = crate::wire::DropReason::RetryLimit.code();
pub const DROP_DUPLICATE: &str = "DUP";

/// The DCF's timers (ns-2 `mhBackoff_`, `mhDefer_`, `mhSend_`, `mhNav_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacTimer {
    Backoff,
    /// SIFS before a CTS, ACK, or the DATA that follows a CTS.
    Defer,
    /// The transmit state ends (response timeout, or end of our CTS/ACK/broadcast).
    Send,
    /// The NAV expires.
    Nav,
    /// The FRN slotted MAC's slot timer (`mac/frn`); the DCF never arms it.
    Slot,
}

/// An action is a few words and owns nothing (`Copy`): the simulator moves
/// every action (mostly `SetTimer`) through its queues, and a queue of them
/// is emptied without a drop per action. A frame to transmit waits in the
/// MAC (`take_frame`), and so does the packet of a `Deliver`, `TxFailed` or
/// `Overheard`, in the MAC's parcel queue (`take_parcel`), one per such
/// action in the actions' order.
#[derive(Clone, Copy, Debug)]
pub enum MacAction {
    /// Put the MAC's frame ([`Dcf::take_frame`]) on the air now (the simulator
    /// ends it after `frame.airtime`).
    Transmit,
    SetTimer(MacTimer, SimTime, TimerToken),
    /// The pending arming of this timer was cancelled: its expiry would find
    /// the token stale and do nothing, so the simulator drops it.
    CancelTimer(MacTimer),
    /// A data frame for this node (or broadcast) arrived intact from `from`.
    /// Parcel: its packet, still shared with the frame and the sender's MAC
    /// (the network layer takes its own copy).
    Deliver(NodeId),
    /// An ARP message arrived intact from `from`.
    ArpIn(ArpMsg, NodeId),
    /// Link-layer feedback: the parcel could not reach `next_hop` within the retry limit.
    /// The DCF follows it with the `Discard` of its data frame.
    TxFailed(NodeId),
    /// A frame discarded, for the trace only. Given up after the retry limit
    /// (ns-2 `discard(…, DROP_MAC_RETRY_COUNT_EXCEEDED)`): the RTS when the
    /// RTS failed, then the data frame (an IP packet's after its `TxFailed`, as
    /// ns-2 discards it after the routing callback). Or a data frame received
    /// twice (its ACK was lost; `DROP_MAC_DUPLICATE`), acknowledged again and
    /// not delivered. Nothing else happens. The frame and its ns-2 drop code
    /// wait in the MAC ([`Dcf::take_discarded`]).
    Discard,
    /// Promiscuous mode: a data frame from `.0` to `.1` (another node) arrived
    /// intact. Parcel: its packet.
    Overheard(NodeId, NodeId),
    /// A unicast frame finished (acknowledged or dropped) after `retries`
    /// retransmissions (RTS and DATA together).
    FrameDone {
        retries: u32,
        ok: bool,
    },
    /// The MAC can take the next packet from the interface queue.
    Ready,
}

/// ns-2's `tx_state_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TxState {
    Idle,
    Rts,
    Cts,
    Send,
    Ack,
}

/// What a data frame carries. The packet is shared with the frames that
/// carry it (no copy per attempt), with its size (the exchange asks for it
/// at every step; the packet does not change while the MAC holds it).
#[derive(Clone, Debug)]
enum Sdu {
    Ip(Rc<Packet>, u32),
    Arp(ArpMsg),
}

impl Sdu {
    fn ip(pkt: Rc<Packet>) -> Sdu {
        let bytes = pkt.size_bytes();
        Sdu::Ip(pkt, bytes)
    }
    fn bytes(&self) -> u32 {
        match self {
            Sdu::Ip(_, bytes) => *bytes,
            Sdu::Arp(_) => ARP_BYTES,
        }
    }
}

/// The frame the MAC holds (ns-2 `pktTx_`).
struct Outgoing {
    sdu: Sdu,
    dst: Option<NodeId>,
    seq: u16,
    retry: bool,
    /// Retransmissions so far (RTS and DATA), for `FrameDone`.
    retries: u32,
}

/// What [`Dcf::rx_quiet`] reads of a decoded frame: its receiver and its
/// NAV duration. The simulator takes them once per frame, not once per
/// receiver.
#[derive(Clone, Copy, Debug)]
pub struct FrameHead {
    pub dst: Option<NodeId>,
    pub nav: SimDuration,
}

impl FrameHead {
    pub fn of(f: &Frame) -> FrameHead {
        FrameHead {
            dst: f.dst,
            nav: f.nav,
        }
    }
}

/// What a reception's outcome does to the NAV and the EIFS ([`Dcf::rx_effect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RxEffect {
    /// False when we were transmitting: the frame was never seen, nothing changes.
    seen: bool,
    /// A NAV to set, from now.
    nav: Option<SimDuration>,
    /// The new EIFS state (standard mode reads it), if it changes.
    use_eifs: Option<bool>,
}

/// ns-2's `BackoffTimer`, except whether it runs and is paused, which are
/// [`Dcf::bo_busy`] and [`Dcf::bo_paused`].
#[derive(Default)]
struct Backoff {
    /// When the current countdown (with its DIFS) started.
    stime: SimTime,
    /// Remaining backoff.
    rtime: SimDuration,
    /// Idle wait before the countdown.
    difs_wait: SimDuration,
    timer: Timer,
}

/// Cancel `timer` (`which`); if it was armed, tell the simulator, which then
/// drops the pending arming instead of popping it stale.
#[inline]
fn cancel(timer: &mut Timer, which: MacTimer, out: &mut Vec<MacAction>) {
    if timer.is_armed() {
        out.push(MacAction::CancelTimer(which));
    }
    timer.cancel();
}

/// A one-value field whose invalid values carry an enum's variant ([`Dcf::niche`]).
#[repr(u64)]
#[derive(Clone, Copy)]
enum NicheMark {
    Here = 0,
}

/// A NAV timer arming whose event the simulator holds back: (time, reserved
/// sequence number, token). The simulator's (`world/mac.rs`, `Air`), stored here
/// beside the NAV timer, which every NAV extension writes too; the DCF never
/// reads it.
pub type HeldNav = Option<(SimTime, u64, TimerToken)>;

/// The fields the signal walks read at every receiver (`carrier_quiet`,
/// `rx_quiet`, `needs_nav_event`) come first, in 32 bytes (with `repr(C)` the
/// order is the declared one), which the simulator keeps in one cache line
/// with the radio's; a NAV extension's (the NAV timer, the held-back arming)
/// fill the next 64. At 1000 nodes a receiver's MAC is usually out of cache,
/// and scattered fields cost a miss each.
#[repr(C, align(32))]
pub struct Dcf {
    /// Tells [`WifiMac`](super::WifiMac)'s variants apart, in this line: the
    /// enum keeps its variant in a niche of the DCF, the largest one (this
    /// one has 2⁶⁴ − 1 invalid values, an `Option`'s tag widened to 8 bytes
    /// 2⁶⁴ − 2), and matching on the MAC reads it.
    niche: NicheMark,
    nav_until: SimTime,
    me: NodeId,
    tx_state: TxState,
    tx_active: bool,
    phy_busy: bool,
    use_eifs: bool,
    /// Pass up data frames addressed to other nodes (`MacAction::Overheard`),
    /// for routing protocols that snoop (DSR's tap, ns-2 `Mac::installTap`).
    pub promiscuous: bool,
    /// The backoff runs (ns-2 `BackoffTimer::busy`) and is paused.
    bo_busy: bool,
    bo_paused: bool,
    /// `p.immediate_access` and `p.eifs_mode == Standard` (`p` is private and never changed after `new`, so the copies cannot drift).
    immediate_access: bool,
    eifs_standard: bool,
    /// `immediate_access || log.is_some()`: no reception is quiet
    /// ([`Dcf::rx_quiet`]), one flag read per reception.
    rx_loud: bool,
    // ---- a NAV extension's
    /// `p.eifs()`, which divides and rounds: read at every errored reception.
    eifs: SimDuration,
    nav_timer: Timer,
    pub held_nav: HeldNav,
    // ---- the rest
    /// Optional event log for tests and MAC traces: (time, what); set by
    /// [`Dcf::enable_log`], which also sets `rx_loud`.
    // Boxed: one pointer when off (every run but tests and MAC traces) keeps the
    // hot DCF state small.
    #[allow(clippy::box_collection)]
    log: Option<Box<Vec<(SimTime, String)>>>,
    /// Shared by every node's DCF (one hot copy instead of 80 bytes in each
    /// node's state: the 6400-node grid of `benchmarks/scaling.py` 4–7 % faster).
    p: std::rc::Rc<MacParams>,
    rng: SimRng,
    /// Link-layer adaptive pacing (paper 001, Alg. 2), switched by LRED.
    pub pacing: bool,
    cw: u32,
    ssrc: u32,
    slrc: u32,
    next_seq: u16,
    tx: Option<Outgoing>,
    /// An RTS must precede the frame (ns-2 `pktRTS_`).
    rts_pending: bool,
    /// CTS or ACK waiting for SIFS (ns-2 `pktCTRL_`).
    ctrl: Option<Frame>,
    /// A `Ready` is owed once the held frame is done (ns-2 `callback_`).
    callback: bool,
    bo: Backoff,
    defer_timer: Timer,
    send_timer: Timer,
    /// Standard mode: when the medium last turned idle, and whether EIFS is due.
    was_idle: bool,
    idle_since: SimTime,
    /// Time of the last `check_backoff`, and whether the radio and the transmit
    /// state were idle then (they change only through `check_backoff`): with
    /// them, a NAV expiry whose event was never scheduled is seen afterwards as
    /// if its handler had run (`sync_idle`).
    last_check: SimTime,
    phy_tx_idle_at_check: bool,
    last_seq: HashMap<NodeId, u16>,
    pub duplicates: u64,
    /// The frame and packets its actions hand over ([`MacAction`]).
    outbox: Outbox,
    /// The frames of the `Discard` actions pushed, in order, with their ns-2
    /// drop code (rare: give-ups and duplicates only).
    discarded: VecDeque<(Frame, &'static str)>,
}

impl Dcf {
    pub fn new(me: NodeId, p: impl Into<std::rc::Rc<MacParams>>, rng: SimRng) -> Self {
        let p = p.into();
        Dcf {
            niche: NicheMark::Here,
            bo_busy: false,
            bo_paused: false,
            immediate_access: p.immediate_access,
            rx_loud: p.immediate_access,
            eifs_standard: p.eifs_mode == EifsMode::Standard,
            cw: p.cw_min,
            eifs: p.eifs(),
            p,
            me,
            rng,
            pacing: false,
            ssrc: 0,
            slrc: 0,
            next_seq: 1, // ns-2 sta_seqno_ starts at 1; 0 means "none" in its duplicate cache
            tx: None,
            rts_pending: false,
            ctrl: None,
            callback: false,
            tx_state: TxState::Idle,
            tx_active: false,
            phy_busy: false,
            nav_until: SimTime::ZERO,
            bo: Backoff::default(),
            defer_timer: Timer::new(),
            send_timer: Timer::new(),
            nav_timer: Timer::new(),
            was_idle: true,
            idle_since: SimTime::ZERO,
            last_check: SimTime::ZERO,
            phy_tx_idle_at_check: true,
            use_eifs: false,
            last_seq: HashMap::new(),
            log: None,
            held_nav: None,
            promiscuous: false,
            duplicates: 0,
            outbox: Outbox::default(),
            discarded: VecDeque::new(),
        }
    }

    /// Start keeping the event log (tests and MAC traces).
    pub fn enable_log(&mut self) {
        self.log = Some(Box::default());
        self.rx_loud = true;
    }

    /// The event log, if kept.
    pub fn log(&self) -> Option<&[(SimTime, String)]> {
        self.log.as_deref().map(|v| v.as_slice())
    }

    fn note(&mut self, now: SimTime, what: impl FnOnce() -> String) {
        if let Some(log) = self.log.as_mut() {
            log.push((now, what()));
        }
    }

    /// The packet the MAC holds (being sent or retried), if any.
    pub fn current_packet(&self) -> Option<&Packet> {
        match self.tx.as_ref().map(|o| &o.sdu) {
            Some(Sdu::Ip(p, _)) => Some(p),
            Some(Sdu::Arp(_)) | None => None,
        }
    }

    /// True when the MAC can take a new packet.
    pub fn is_free(&self) -> bool {
        self.tx.is_none() && !self.callback
    }

    pub fn cw(&self) -> u32 {
        self.cw
    }

    fn is_idle(&self, now: SimTime) -> bool {
        !self.phy_busy && self.tx_state == TxState::Idle && now >= self.nav_until
    }

    /// ns-2 counts DATA retries against the long limit when the frame is larger
    /// than the RTS threshold (`size > RTSThreshold_`; RTS use is `>=`).
    fn counts_long(&self, msdu_bytes: u32) -> bool {
        self.p.ns2_frame_bytes(msdu_bytes) > self.p.rts_threshold_bytes
    }

    fn inc_cw(&mut self) {
        self.cw = (2 * self.cw + 1).min(self.p.cw_max);
    }

    fn rst_cw(&mut self) {
        self.cw = self.p.cw_min;
    }

    /// The wait before a resumed countdown: DIFS, or EIFS after an errored frame
    /// in standard mode (ns-2 gets its EIFS from the NAV instead).
    fn resume_ifs(&self) -> SimDuration {
        if self.eifs_standard && self.use_eifs {
            self.eifs
        } else {
            self.p.difs()
        }
    }

    // ---- backoff timer (ns-2 BackoffTimer) ---------------------------------------

    fn bo_start(
        &mut self,
        now: SimTime,
        idle: bool,
        difs: SimDuration,
        extra: SimDuration,
        out: &mut Vec<MacAction>,
    ) {
        if self.bo_busy {
            return; // ns-2 asserts this never happens; keep the running countdown
        }
        let slots = if self.p.backoff_includes_cw {
            self.rng.gen_range(0..=self.cw)
        } else {
            self.rng.gen_range(0..self.cw)
        };
        self.note(now, || format!("backoff {slots}"));
        self.bo_busy = true;
        self.bo_paused = !idle;
        self.bo.stime = now;
        self.bo.rtime = SimDuration(self.p.slot.0 * slots as u64) + extra;
        self.bo.difs_wait = difs;
        if idle {
            let at = now + self.bo.rtime + difs;
            let tok = self.bo.timer.arm(at);
            out.push(MacAction::SetTimer(MacTimer::Backoff, at, tok));
        }
    }

    fn bo_pause(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let counting_from = self.bo.stime + self.bo.difs_wait;
        let slots = if now > counting_from {
            (now - counting_from).0 / self.p.slot.0
        } else {
            0
        };
        self.bo.rtime = SimDuration(self.bo.rtime.0.saturating_sub(slots * self.p.slot.0));
        self.bo.difs_wait = SimDuration::ZERO;
        self.bo_paused = true;
        cancel(&mut self.bo.timer, MacTimer::Backoff, out);
    }

    fn bo_resume(&mut self, now: SimTime, difs: SimDuration, out: &mut Vec<MacAction>) {
        self.bo_paused = false;
        self.bo.stime = now;
        self.bo.difs_wait = difs;
        let at = now + self.bo.rtime + difs;
        let tok = self.bo.timer.arm(at);
        out.push(MacAction::SetTimer(MacTimer::Backoff, at, tok));
    }

    /// ns-2 `checkBackoffTimer`, run after every change of the medium's state.
    fn check_backoff(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if self.medium_unwatched() {
            return;
        }
        let idle = self.is_idle(now);
        if self.immediate_access {
            self.track_idle(now, idle);
        }
        if self.bo_busy && self.bo_paused == idle {
            if idle {
                self.bo_resume(now, self.resume_ifs(), out);
            } else {
                self.bo_pause(now, out);
            }
        }
    }

    /// `check_backoff`'s record of when the medium became idle, read only by
    /// immediate access (`send`; without it these fields are never read).
    /// Pausing or resuming the backoff changes none of what it reads.
    #[inline(never)]
    fn track_idle(&mut self, now: SimTime, idle: bool) {
        self.sync_idle(now);
        if idle != self.was_idle {
            self.was_idle = idle;
            if idle {
                self.idle_since = now;
            }
        }
        self.last_check = now;
        self.phy_tx_idle_at_check = !self.phy_busy && self.tx_state == TxState::Idle;
    }

    /// Apply a NAV expiry that happened since the last `check_backoff` without its
    /// timer event (the simulator leaves the NAV event out while no backoff runs,
    /// [`Dcf::needs_nav_event`]): had the event run at `nav_until`, its
    /// `check_backoff` would have found the medium idle then iff the radio and
    /// transmit state were idle, which they have been since the last check.
    fn sync_idle(&mut self, now: SimTime) {
        if !self.was_idle
            && self.phy_tx_idle_at_check
            && self.last_check < self.nav_until
            && self.nav_until <= now
        {
            self.was_idle = true;
            self.idle_since = self.nav_until;
        }
    }

    /// Whether a change of the medium's state can matter now: it pauses or
    /// resumes a backoff (none runs), and when the medium became idle is read
    /// only by immediate access (`send`). Most nodes most of the time have no
    /// backoff, so most carrier changes, NAV settings and errored receptions
    /// skip `check_backoff`'s bookkeeping; its idle-time fields are then stale,
    /// which nothing reads without immediate access.
    #[inline]
    fn medium_unwatched(&self) -> bool {
        !self.bo_busy && !self.immediate_access
    }

    /// Whether `check_backoff` now would change nothing that is read: no
    /// backoff to pause (it is paused already, or the medium is idle) or to
    /// resume (it runs already, or the medium is busy), and no immediate access.
    #[inline]
    fn check_is_noop(&self, now: SimTime) -> bool {
        !self.immediate_access && self.backoff_unmoved(now)
    }

    /// [`Dcf::check_is_noop`] when immediate access is known to be off (a
    /// quiet reception: `rx_loud` covers it). With a backoff, whether the
    /// medium is idle is evaluated whole, without short cuts: it varies from
    /// receiver to receiver of a frame, so each early exit would be a branch
    /// the processor often mispredicts.
    #[inline(always)]
    fn backoff_unmoved(&self, now: SimTime) -> bool {
        debug_assert!(!self.immediate_access);
        if !self.bo_busy {
            return true;
        }
        let idle = !self.phy_busy & (self.tx_state == TxState::Idle) & (now >= self.nav_until);
        debug_assert_eq!(idle, self.is_idle(now));
        self.bo_paused != idle
    }

    /// Whether the NAV timer's event must run: only a running (or paused)
    /// backoff makes the NAV handler do more than note when the medium became
    /// idle, which [`Dcf::sync_idle`] reconstructs. Checked by the simulator
    /// after every MAC handler while a NAV event is held back.
    pub fn needs_nav_event(&self) -> bool {
        self.bo_busy
    }

    fn set_tx_state(&mut self, now: SimTime, s: TxState, out: &mut Vec<MacAction>) {
        self.tx_state = s;
        self.check_backoff(now, out);
    }

    fn set_nav(&mut self, now: SimTime, d: SimDuration, out: &mut Vec<MacAction>) {
        if let Some(until) = self.nav_extension(now, d) {
            let tok = self.extend_nav(until);
            out.push(MacAction::SetTimer(MacTimer::Nav, until, tok));
            self.check_backoff(now, out);
        }
    }

    /// The NAV's new end if a NAV of `d` from now extends it (it never shortens).
    #[inline]
    fn nav_extension(&self, now: SimTime, d: SimDuration) -> Option<SimTime> {
        let until = now + d;
        (until > self.nav_until).then_some(until)
    }

    /// Extend the NAV to `until` (from [`Dcf::nav_extension`]); returns the
    /// NAV timer's arming, whose event the caller schedules.
    #[inline]
    fn extend_nav(&mut self, until: SimTime) -> TimerToken {
        self.nav_until = until;
        self.nav_timer.arm(until)
    }

    /// What a reception's outcome (`Some`: a frame arrived intact; `None`: it
    /// ended in error) does to the NAV and the EIFS, apart from what a frame
    /// for us asks: the one rule of [`Dcf::rx_ok`], [`Dcf::rx_error`] and
    /// [`Dcf::rx_quiet`].
    #[inline]
    fn rx_effect(&self, f: Option<FrameHead>) -> RxEffect {
        match f {
            // ns-2 recv_timer: a frame that ends while we transmit was never seen.
            _ if self.tx_active => RxEffect {
                seen: false,
                nav: None,
                use_eifs: None,
            },
            // A correct reception ends any EIFS (§9.2.3.4); one for another
            // node (or broadcast) sets the NAV from its duration field.
            Some(f) => RxEffect {
                seen: true,
                nav: (f.dst != Some(self.me)).then_some(f.nav),
                use_eifs: Some(false),
            },
            // An error: EIFS before the next access, which ns-2 makes a NAV.
            None if self.eifs_standard => RxEffect {
                seen: true,
                nav: None,
                use_eifs: Some(true),
            },
            None => RxEffect {
                seen: true,
                nav: Some(self.eifs),
                use_eifs: None,
            },
        }
    }

    fn defer(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let at = now + self.p.sifs;
        let tok = self.defer_timer.arm(at);
        out.push(MacAction::SetTimer(MacTimer::Defer, at, tok));
    }

    // ---- power -----------------------------------------------------------------

    /// The node is switched off: forget the exchange in progress, the backoff,
    /// the NAV and every timer (their pending events become stale). Returns the
    /// packet the MAC held, for the caller to drop.
    pub fn switch_off(&mut self) -> Option<Packet> {
        for t in [
            &mut self.bo.timer,
            &mut self.defer_timer,
            &mut self.send_timer,
            &mut self.nav_timer,
        ] {
            t.cancel();
        }
        self.bo = Backoff {
            timer: std::mem::take(&mut self.bo.timer),
            ..Backoff::default()
        };
        self.bo_busy = false;
        self.bo_paused = false;
        self.ctrl = None;
        self.rts_pending = false;
        self.callback = false;
        self.tx_state = TxState::Idle;
        self.cw = self.p.cw_min;
        self.ssrc = 0;
        self.slrc = 0;
        self.nav_until = SimTime::ZERO;
        self.use_eifs = false;
        match self.tx.take().map(|c| c.sdu) {
            Some(Sdu::Ip(p, _)) => Some(Rc::unwrap_or_clone(p)),
            _ => None,
        }
    }

    /// The node is switched on at `now`: it starts with an idle medium and no
    /// backoff (its carrier sense is reported afresh by the radio).
    pub fn switch_on(&mut self, now: SimTime) {
        self.was_idle = self.is_idle(now);
        self.idle_since = now;
    }

    // ---- from the radio -------------------------------------------------------

    /// Physical carrier sense changed, and the change cannot matter now
    /// ([`Dcf::check_is_noop`] with the new carrier: no backoff, or one that
    /// stays paused or stays running): records it and returns true, with the
    /// same effect as [`Dcf::carrier`], which it saves the simulator from
    /// running (no actions can follow). Otherwise changes nothing and returns false.
    #[inline]
    pub fn carrier_quiet(&mut self, now: SimTime, busy: bool) -> bool {
        let was = self.phy_busy;
        self.phy_busy = busy;
        if self.check_is_noop(now) {
            return true;
        }
        self.phy_busy = was;
        false
    }

    /// [`Dcf::carrier_quiet`] after a quiet reception ([`Dcf::rx_quiet`]
    /// returned `Some`, so immediate access is off).
    #[inline]
    pub fn carrier_quiet_after_rx(&mut self, now: SimTime, busy: bool) -> bool {
        debug_assert!(!self.rx_loud);
        let was = self.phy_busy;
        self.phy_busy = busy;
        if self.backoff_unmoved(now) {
            return true;
        }
        self.phy_busy = was;
        false
    }

    /// Physical carrier sense changed.
    pub fn carrier(&mut self, now: SimTime, busy: bool, out: &mut Vec<MacAction>) {
        self.phy_busy = busy;
        self.check_backoff(now, out);
    }

    /// Our transmission ended (ns-2 `txHandler`: only clears `tx_active_`).
    pub fn tx_end(&mut self, _now: SimTime, _out: &mut Vec<MacAction>) {
        self.tx_end_quiet();
    }

    /// [`Dcf::tx_end`], which never acts: the simulator calls it without a
    /// handler run.
    #[inline]
    pub fn tx_end_quiet(&mut self) {
        self.tx_active = false;
    }

    /// A frame ended in error (collision, too weak, or overlapped our transmission).
    pub fn rx_error(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let effect = self.rx_effect(None);
        if !effect.seen {
            self.note(now, || "rx lost while transmitting".into());
            return;
        }
        self.note(now, || "rx error".into());
        if let Some(e) = effect.use_eifs {
            self.use_eifs = e;
        }
        if let Some(d) = effect.nav {
            self.set_nav(now, d, out);
        }
    }

    /// A frame of `airtime` starting now was captured (ignored as noise) while we
    /// were receiving a stronger one. ns-2 `capture`: NAV to its end + EIFS.
    pub fn rx_captured(&mut self, now: SimTime, airtime: SimDuration, out: &mut Vec<MacAction>) {
        if !self.eifs_standard {
            self.set_nav(now, duration_field(self.eifs + airtime), out);
        }
    }

    /// A reception's outcome (`Some`: a frame arrived intact; `None`: it ended
    /// in error) when all it can do is set the NAV: no log is kept, the frame,
    /// if any, is a unicast for another node and we do not snoop, and the
    /// `check_backoff` after a NAV change is a no-op ([`Dcf::check_is_noop`]:
    /// no backoff, or one that stays paused). Then it has the same effect as
    /// [`Dcf::rx_ok`] or [`Dcf::rx_error`] and returns `Some` with the NAV
    /// arming the simulator must record (the `SetTimer(Nav)` those would have
    /// pushed), saving it a handler run for most receptions (a frame is heard
    /// by every node in carrier-sense range). Otherwise returns `None` and
    /// changes nothing. The carrier change that follows is the caller's
    /// ([`Dcf::carrier_quiet`] or [`Dcf::carrier`]).
    #[inline]
    pub fn rx_quiet(
        &mut self,
        now: SimTime,
        f: Option<FrameHead>,
    ) -> Option<Option<(SimTime, TimerToken)>> {
        if self.rx_loud {
            return None;
        }
        if let Some(f) = f {
            if self.promiscuous || f.dst.is_none_or(|d| d == self.me) {
                return None;
            }
        }
        let effect = self.rx_effect(f);
        let mut arming = None;
        if let Some(until) = effect.nav.and_then(|d| self.nav_extension(now, d)) {
            // `set_nav`'s `check_backoff` must be a no-op with the new NAV.
            let old = self.nav_until;
            self.nav_until = until;
            // Not loud: immediate access is off.
            let noop = self.backoff_unmoved(now);
            self.nav_until = old;
            if !noop {
                return None;
            }
            arming = Some((until, self.extend_nav(until)));
        }
        if let Some(e) = effect.use_eifs {
            self.use_eifs = e;
        }
        Some(arming)
    }

    /// A frame arrived intact.
    pub fn rx_ok(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        let effect = self.rx_effect(Some(FrameHead::of(f)));
        if !effect.seen {
            self.note(now, || "rx lost while transmitting".into());
            return;
        }
        if let Some(e) = effect.use_eifs {
            self.use_eifs = e;
        }
        self.note(now, || format!("rx {} from {}", f.kind.name(), f.src));
        if let Some(d) = effect.nav {
            self.set_nav(now, d, out);
        }
        match f.dst {
            Some(d) if d == self.me => self.rx_for_me(now, f, out),
            None => {
                if f.kind == FrameKind::Data {
                    if let Some(pkt) = &f.pkt {
                        self.outbox.push_parcel(pkt.clone());
                        out.push(MacAction::Deliver(f.src));
                    }
                    if let Some(m) = f.arp {
                        out.push(MacAction::ArpIn(m, f.src));
                    }
                }
            }
            Some(d) => {
                if self.promiscuous {
                    if let (FrameKind::Data, Some(pkt)) = (f.kind, &f.pkt) {
                        self.outbox.push_parcel(pkt.clone());
                        out.push(MacAction::Overheard(f.src, d));
                    }
                }
            }
        }
    }

    fn rx_for_me(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        match f.kind {
            FrameKind::Rts => {
                if self.tx_state != TxState::Idle || self.ctrl.is_some() {
                    self.note(now, || "drop RTS busy".into());
                    return;
                }
                let cts_time = self.p.ctrl_airtime(CTS_BYTES);
                let nav = duration_field(SimDuration(
                    f.nav.0.saturating_sub((self.p.sifs + cts_time).0),
                ));
                self.ctrl = Some(Frame {
                    kind: FrameKind::Cts,
                    src: self.me,
                    dst: Some(f.src),
                    nav,
                    seq: 0,
                    retry: false,
                    pkt: None,
                    arp: None,
                    airtime: cts_time,
                });
                cancel(&mut self.defer_timer, MacTimer::Defer, out);
                self.tx_resume(now, out);
            }
            FrameKind::Cts => {
                if self.tx_state != TxState::Rts {
                    self.note(now, || "drop CTS invalid state".into());
                    return;
                }
                self.rts_pending = false;
                cancel(&mut self.send_timer, MacTimer::Send, out);
                // §9.2.5.3 (and ns-2): a CTS resets the short retry count, not the window.
                self.ssrc = 0;
                self.tx_resume(now, out);
            }
            FrameKind::Data => {
                let msdu =
                    f.pkt.as_ref().map_or(0, |p| p.size_bytes()) + f.arp.map_or(0, |_| ARP_BYTES);
                if self.p.uses_rts(msdu)
                    && (self.tx_state == TxState::Cts || !self.p.ack_data_without_cts)
                {
                    if self.tx_state != TxState::Cts {
                        // ns-2 recvDATA: a data frame we did not clear with a CTS is discarded.
                        self.note(now, || "drop DATA without CTS".into());
                        return;
                    }
                    self.ctrl = None;
                    cancel(&mut self.send_timer, MacTimer::Send, out);
                    self.ctrl = Some(self.ack_to(f.src));
                    self.tx_resume(now, out);
                } else {
                    if self.ctrl.is_some() {
                        self.note(now, || "drop DATA busy".into());
                        return;
                    }
                    self.ctrl = Some(self.ack_to(f.src));
                    if !self.send_timer.is_armed() {
                        self.tx_resume(now, out);
                    }
                }
                let last = self.last_seq.insert(f.src, f.seq);
                if last == Some(f.seq) {
                    self.duplicates += 1;
                    self.note(now, || "drop DATA duplicate".into());
                    // ns-2 `recvDATA` discards it as `DROP_MAC_DUPLICATE` (a trace line).
                    self.discarded.push_back((f.clone(), DROP_DUPLICATE));
                    out.push(MacAction::Discard);
                    return;
                }
                if let Some(pkt) = &f.pkt {
                    self.outbox.push_parcel(pkt.clone());
                    out.push(MacAction::Deliver(f.src));
                }
                if let Some(m) = f.arp {
                    out.push(MacAction::ArpIn(m, f.src));
                }
            }
            FrameKind::Ack => {
                if self.tx_state != TxState::Send {
                    self.note(now, || "drop ACK invalid state".into());
                    return;
                }
                cancel(&mut self.send_timer, MacTimer::Send, out);
                let c = self.tx.take().expect("SEND state holds a frame");
                if self.counts_long(c.sdu.bytes()) {
                    self.slrc = 0;
                } else {
                    self.ssrc = 0;
                }
                self.rst_cw();
                out.push(MacAction::FrameDone {
                    retries: c.retries,
                    ok: true,
                });
                // Paper 001 Alg. 2: after a successful exchange, pace by one data-frame time.
                let extra = if self.pacing {
                    self.p.data_airtime(c.sdu.bytes())
                } else {
                    SimDuration::ZERO
                };
                let idle = self.is_idle(now);
                self.bo_start(now, idle, SimDuration::ZERO, extra, out);
                self.tx_resume(now, out);
            }
        }
    }

    fn ack_to(&self, dst: NodeId) -> Frame {
        let airtime = self.p.ctrl_airtime(ACK_BYTES);
        Frame {
            kind: FrameKind::Ack,
            src: self.me,
            dst: Some(dst),
            nav: SimDuration::ZERO,
            seq: 0,
            retry: false,
            pkt: None,
            arp: None,
            airtime,
        }
    }

    // ---- from the interface queue ----------------------------------------------

    /// Take a packet for `next_hop` (`None` = broadcast). Only when [`Dcf::is_free`].
    pub fn enqueue(
        &mut self,
        now: SimTime,
        pkt: impl Into<Rc<Packet>>,
        next_hop: Option<NodeId>,
        out: &mut Vec<MacAction>,
    ) {
        self.send(now, Sdu::ip(pkt.into()), next_hop, out);
    }

    /// Take an ARP message (request: broadcast; reply: unicast). Only when free.
    pub fn enqueue_arp(
        &mut self,
        now: SimTime,
        m: ArpMsg,
        next_hop: Option<NodeId>,
        out: &mut Vec<MacAction>,
    ) {
        self.send(now, Sdu::Arp(m), next_hop, out);
    }

    /// ns-2 `Mac802_11::send`.
    fn send(&mut self, now: SimTime, sdu: Sdu, dst: Option<NodeId>, out: &mut Vec<MacAction>) {
        assert!(self.tx.is_none(), "MAC given a packet while busy");
        self.callback = true;
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        self.tx = Some(Outgoing {
            sdu,
            dst,
            seq,
            retry: false,
            retries: 0,
        });
        self.make_rts();
        if self.bo_busy {
            return;
        }
        if self.is_idle(now) {
            if self.defer_timer.is_armed() {
                return;
            }
            self.sync_idle(now);
            if self.immediate_access && now >= self.idle_since + self.resume_ifs() {
                // §9.2.5.1: idle for DIFS already → transmit now.
                self.backoff_done(now, out);
            } else {
                self.bo_start(now, true, self.p.difs(), SimDuration::ZERO, out);
            }
        } else {
            self.bo_start(now, false, SimDuration::ZERO, SimDuration::ZERO, out);
        }
    }

    /// ns-2 `sendRTS`: the frame needs an RTS if unicast and above the threshold.
    fn make_rts(&mut self) {
        self.rts_pending = self
            .tx
            .as_ref()
            .is_some_and(|c| c.dst.is_some() && self.p.uses_rts(c.sdu.bytes()));
    }

    /// ns-2 `tx_resume`: decide what to do next once an exchange step is over.
    fn tx_resume(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if self.ctrl.is_some() {
            self.defer(now, out);
        } else if self.rts_pending {
            if !self.bo_busy {
                let idle = self.is_idle(now);
                self.bo_start(now, idle, self.p.difs(), SimDuration::ZERO, out);
            }
        } else if let Some(c) = self.tx.as_ref() {
            if !self.bo_busy {
                if c.dst.is_none() || !self.p.uses_rts(c.sdu.bytes()) {
                    let idle = self.is_idle(now);
                    self.bo_start(now, idle, self.p.difs(), SimDuration::ZERO, out);
                } else {
                    // The DATA after a CTS.
                    self.defer(now, out);
                }
            }
        } else if self.callback {
            self.callback = false;
            out.push(MacAction::Ready);
        }
        self.set_tx_state(now, TxState::Idle, out);
    }

    /// ns-2 `backoffHandler`.
    fn backoff_done(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if self.ctrl.is_some() {
            return;
        }
        if !self.check_rts(now, out) {
            self.check_tx(now, out);
        }
    }

    /// ns-2 `deferHandler`.
    fn defer_done(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if self.check_ctrl(now, out) {
            return;
        }
        if !self.check_rts(now, out) {
            self.check_tx(now, out);
        }
    }

    fn transmit(&mut self, now: SimTime, f: Frame, timeout: SimDuration, out: &mut Vec<MacAction>) {
        self.note(now, || format!("tx {}", f.kind.name()));
        self.tx_active = true;
        let at = now + timeout;
        let tok = self.send_timer.arm(at);
        out.push(MacAction::SetTimer(MacTimer::Send, at, tok));
        self.outbox.put_frame(f);
        out.push(MacAction::Transmit);
    }

    /// The frame of the `Transmit` action just reported.
    pub fn take_frame(&mut self) -> Frame {
        self.outbox.take_frame()
    }

    /// The packet of the oldest `Deliver`, `TxFailed` or `Overheard` action
    /// not yet carried out.
    pub fn take_parcel(&mut self) -> Rc<Packet> {
        self.outbox.take_parcel()
    }

    /// The frame of the oldest `Discard` action not yet carried out, and its
    /// ns-2 drop code (`RET`, `DUP`).
    pub fn take_discarded(&mut self) -> (Frame, &'static str) {
        self.discarded
            .pop_front()
            .expect("a Discard action's frame")
    }

    /// ns-2 `check_pktCTRL`; true when it dealt with a CTS/ACK.
    fn check_ctrl(&mut self, now: SimTime, out: &mut Vec<MacAction>) -> bool {
        if self.ctrl.is_none() || matches!(self.tx_state, TxState::Cts | TxState::Ack) {
            return false;
        }
        let f = self.ctrl.clone().expect("checked");
        let timeout = match f.kind {
            FrameKind::Cts => {
                if !self.is_idle(now) {
                    self.note(now, || "drop CTS busy".into());
                    self.ctrl = None;
                    return true;
                }
                self.set_tx_state(now, TxState::Cts, out);
                // CTS + the frame it announces, minus the final SIFS + ACK (ns-2's guess).
                let ack = self.p.ctrl_airtime(ACK_BYTES);
                SimDuration(
                    (f.airtime + MAX_PROPAGATION + f.nav + MAX_PROPAGATION)
                        .0
                        .saturating_sub((self.p.sifs + ack).0),
                )
            }
            FrameKind::Ack => {
                // §9.2.8: ACKs go after SIFS whatever the medium.
                self.set_tx_state(now, TxState::Ack, out);
                f.airtime
            }
            k => unreachable!("control frame {k:?}"),
        };
        self.transmit(now, f, timeout, out);
        true
    }

    /// ns-2 `check_pktRTS`; true when an RTS was pending.
    fn check_rts(&mut self, now: SimTime, out: &mut Vec<MacAction>) -> bool {
        if !self.rts_pending {
            return false;
        }
        if !self.is_idle(now) {
            self.inc_cw();
            let idle = self.is_idle(now);
            self.bo_start(now, idle, SimDuration::ZERO, SimDuration::ZERO, out);
            return true;
        }
        self.set_tx_state(now, TxState::Rts, out);
        let f = self.rts_frame(self.tx.as_ref().expect("RTS for a held frame"));
        let (rts, cts) = (f.airtime, self.p.ctrl_airtime(CTS_BYTES));
        let timeout = rts + MAX_PROPAGATION + self.p.sifs + cts + MAX_PROPAGATION;
        self.transmit(now, f, timeout, out);
        true
    }

    /// ns-2 `check_pktTx`.
    fn check_tx(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if self.tx.is_none() {
            return;
        }
        if !self.is_idle(now) {
            self.make_rts();
            self.inc_cw();
            let idle = self.is_idle(now);
            self.bo_start(now, idle, SimDuration::ZERO, SimDuration::ZERO, out);
            return;
        }
        self.set_tx_state(now, TxState::Send, out);
        let c = self.tx.as_ref().expect("checked");
        let bytes = c.sdu.bytes();
        let (pkt, arp) = match &c.sdu {
            Sdu::Ip(p, _) => (Some(p.clone()), None),
            Sdu::Arp(m) => (None, Some(*m)),
        };
        let (airtime, nav, timeout) = match c.dst {
            Some(_) => {
                let t = self.p.data_airtime(bytes);
                let ack = self.p.ctrl_airtime(ACK_BYTES);
                (
                    t,
                    duration_field(ack + self.p.sifs),
                    t + MAX_PROPAGATION + self.p.sifs + ack + MAX_PROPAGATION,
                )
            }
            None => {
                let t = self.p.broadcast_airtime(bytes);
                (t, SimDuration::ZERO, t)
            }
        };
        let f = Frame {
            kind: FrameKind::Data,
            src: self.me,
            dst: c.dst,
            nav,
            seq: c.seq,
            retry: c.retry,
            pkt,
            arp,
            airtime,
        };
        self.transmit(now, f, timeout, out);
    }

    // ---- timers ----------------------------------------------------------------

    /// Whether the event of timer `which` carrying `tok` is the live arming (profiling).
    pub fn timer_is_live(&self, which: MacTimer, tok: TimerToken) -> bool {
        match which {
            MacTimer::Backoff => self.bo.timer.is_live(tok),
            MacTimer::Defer => self.defer_timer.is_live(tok),
            MacTimer::Send => self.send_timer.is_live(tok),
            MacTimer::Nav => self.nav_timer.is_live(tok),
            // FRN's slot timer; the DCF never arms it.
            MacTimer::Slot => false,
        }
    }

    /// The NAV timer's event with `tok` pops and its handler would change
    /// nothing but the timer ([`Dcf::check_is_noop`]: no backoff, or one that
    /// stays paused, the radio or transmit state still busy, or that runs
    /// already): fires the timer and returns true, saving the simulator a
    /// handler run (two thirds of NAV expiries on the 20-node benchmark: the
    /// next frame of the exchange is on the air). Otherwise changes nothing
    /// and returns false (a stale token too: [`Dcf::timer`] counts nothing).
    #[inline]
    pub fn nav_expiry_quiet(&mut self, now: SimTime, tok: TimerToken) -> bool {
        if self.check_is_noop(now) && self.nav_timer.is_live(tok) {
            self.nav_timer.fire(tok);
            return true;
        }
        false
    }

    pub fn timer(
        &mut self,
        now: SimTime,
        which: MacTimer,
        tok: TimerToken,
        out: &mut Vec<MacAction>,
    ) {
        match which {
            MacTimer::Backoff => {
                if self.bo.timer.fire(tok) {
                    self.bo_busy = false;
                    self.bo_paused = false;
                    self.bo.rtime = SimDuration::ZERO;
                    self.bo.difs_wait = SimDuration::ZERO;
                    self.backoff_done(now, out);
                }
            }
            MacTimer::Defer => {
                if self.defer_timer.fire(tok) {
                    self.defer_done(now, out);
                }
            }
            MacTimer::Send => {
                if self.send_timer.fire(tok) {
                    self.send_timer_done(now, out);
                }
            }
            MacTimer::Slot => {}
            MacTimer::Nav => {
                if self.nav_timer.fire(tok) {
                    // ns-2 navHandler resumes a paused backoff; check_backoff does that.
                    self.check_backoff(now, out);
                }
            }
        }
    }

    /// ns-2 `send_timer`: the transmit state ends.
    fn send_timer_done(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        match self.tx_state {
            TxState::Rts => self.retransmit_rts(now, out),
            TxState::Cts | TxState::Ack => self.ctrl = None,
            TxState::Send => self.retransmit_data(now, out),
            TxState::Idle => {}
        }
        self.tx_resume(now, out);
    }

    /// ns-2's give-up after the retry limit (`RetransmitRTS`/`RetransmitDATA`):
    /// the RTS is discarded first when it was the RTS that failed, the packet
    /// goes back to routing, then the data frame is discarded.
    fn fail_frame(&mut self, now: SimTime, rts_failed: bool, out: &mut Vec<MacAction>) {
        let c = self.tx.take().expect("failing a held frame");
        self.note(now, || "retry limit".into());
        if rts_failed {
            self.discarded.push_back((self.rts_frame(&c), DROP_RETRY));
            out.push(MacAction::Discard);
        }
        out.push(MacAction::FrameDone {
            retries: c.retries,
            ok: false,
        });
        if let Some(dst) = c.dst {
            let bytes = c.sdu.bytes();
            let nav = duration_field(self.p.ctrl_airtime(ACK_BYTES) + self.p.sifs);
            let mut f = Frame {
                kind: FrameKind::Data,
                src: self.me,
                dst: c.dst,
                nav,
                seq: c.seq,
                retry: c.retry,
                pkt: None,
                arp: None,
                airtime: self.p.data_airtime(bytes),
            };
            match c.sdu {
                Sdu::Ip(pkt, _) => {
                    f.pkt = Some(pkt.clone());
                    self.outbox.push_parcel(pkt);
                    out.push(MacAction::TxFailed(dst));
                }
                Sdu::Arp(m) => f.arp = Some(m),
            }
            self.discarded.push_back((f, DROP_RETRY));
            out.push(MacAction::Discard);
        }
        self.rst_cw();
    }

    /// The RTS announcing the held frame `c`.
    fn rts_frame(&self, c: &Outgoing) -> Frame {
        let data = self.p.data_airtime(c.sdu.bytes());
        let (rts, cts, ack) = (
            self.p.ctrl_airtime(RTS_BYTES),
            self.p.ctrl_airtime(CTS_BYTES),
            self.p.ctrl_airtime(ACK_BYTES),
        );
        let nav = duration_field(self.p.sifs + cts + self.p.sifs + data + self.p.sifs + ack);
        Frame {
            kind: FrameKind::Rts,
            src: self.me,
            dst: c.dst,
            nav,
            seq: 0,
            retry: false,
            pkt: None,
            arp: None,
            airtime: rts,
        }
    }

    fn retransmit_rts(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        self.ssrc += 1;
        if self.ssrc >= self.p.short_retry_limit {
            self.rts_pending = false;
            self.ssrc = 0;
            self.fail_frame(now, true, out);
        } else {
            self.note(now, || "timeout".into());
            self.tx.as_mut().expect("RTS for a held frame").retries += 1;
            self.inc_cw();
            let idle = self.is_idle(now);
            self.bo_start(now, idle, SimDuration::ZERO, SimDuration::ZERO, out);
        }
    }

    fn retransmit_data(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let c = self.tx.as_ref().expect("SEND state holds a frame");
        if c.dst.is_none() {
            // Broadcast: done at the end of its transmission; back off before the next.
            self.tx = None;
            self.rst_cw();
            let idle = self.is_idle(now);
            self.bo_start(now, idle, SimDuration::ZERO, SimDuration::ZERO, out);
            return;
        }
        let long = self.counts_long(c.sdu.bytes());
        let (count, limit) = if long {
            (&mut self.slrc, self.p.long_retry_limit)
        } else {
            (&mut self.ssrc, self.p.short_retry_limit)
        };
        *count += 1;
        if *count >= limit {
            *count = 0;
            self.fail_frame(now, false, out);
        } else {
            self.note(now, || "timeout".into());
            let c = self.tx.as_mut().expect("checked");
            c.retries += 1;
            c.retry = true;
            self.make_rts();
            self.inc_cw();
            let idle = self.is_idle(now);
            self.bo_start(now, idle, SimDuration::ZERO, SimDuration::ZERO, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{stream, Component};

    #[test]
    fn fields_the_signal_walks_read_come_first() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Dcf>(), 32);
        let ends = [
            offset_of!(Dcf, niche) + 8,
            offset_of!(Dcf, nav_until) + 8,
            offset_of!(Dcf, me) + 4,
            offset_of!(Dcf, tx_state) + 1,
            offset_of!(Dcf, tx_active) + 1,
            offset_of!(Dcf, phy_busy) + 1,
            offset_of!(Dcf, use_eifs) + 1,
            offset_of!(Dcf, promiscuous) + 1,
            offset_of!(Dcf, bo_busy) + 1,
            offset_of!(Dcf, bo_paused) + 1,
            offset_of!(Dcf, immediate_access) + 1,
            offset_of!(Dcf, eifs_standard) + 1,
            offset_of!(Dcf, rx_loud) + 1,
        ];
        assert!(ends.iter().all(|&e| e <= 32), "{ends:?}");
        // A NAV extension's fields: the next 64 bytes.
        let nav = [
            (offset_of!(Dcf, eifs), 8),
            (offset_of!(Dcf, nav_timer), size_of::<Timer>()),
            (offset_of!(Dcf, held_nav), size_of::<HeldNav>()),
        ];
        assert!(
            nav.iter().all(|&(at, len)| at >= 32 && at + len <= 96),
            "{nav:?}"
        );
    }

    fn pkt() -> Packet {
        crate::wire::test_support::udp(1, 0, 1, 100)
    }

    /// Drives one DCF alone: fires its timers in time order and ends its
    /// transmissions; records what it sent and reported.
    struct Bench {
        m: Dcf,
        now: SimTime,
        timers: Vec<(SimTime, MacTimer, TimerToken)>,
        tx_ends: Vec<SimTime>,
        sent: Vec<(SimTime, Frame)>,
        events: Vec<MacAction>,
        /// The frames of the `Discard` events and their codes, in order.
        discarded: Vec<(Frame, &'static str)>,
    }

    impl Bench {
        fn new(p: MacParams, seed: u64) -> Self {
            Bench {
                m: Dcf::new(NodeId(0), p, stream(seed, 0, Component::Mac)),
                now: SimTime::ZERO,
                timers: vec![],
                tx_ends: vec![],
                sent: vec![],
                events: vec![],
                discarded: vec![],
            }
        }
        fn absorb(&mut self, out: Vec<MacAction>) {
            for a in out {
                match a {
                    MacAction::SetTimer(t, at, tok) => self.timers.push((at, t, tok)),
                    // The arming stays, and pops stale: the handler must ignore it.
                    MacAction::CancelTimer(_) => {}
                    MacAction::Transmit => {
                        let f = self.m.take_frame();
                        self.tx_ends.push(self.now + f.airtime);
                        self.sent.push((self.now, f));
                    }
                    MacAction::Discard => {
                        self.discarded.push(self.m.take_discarded());
                        self.events.push(MacAction::Discard);
                    }
                    a => self.events.push(a),
                }
            }
        }
        fn with(&mut self, f: impl FnOnce(&mut Dcf, SimTime, &mut Vec<MacAction>)) {
            let mut out = vec![];
            f(&mut self.m, self.now, &mut out);
            self.absorb(out);
        }
        /// Run timers and transmission ends up to `until`.
        fn run_until(&mut self, until: SimTime) {
            loop {
                let t_timer = self.timers.iter().map(|t| t.0).min();
                let t_end = self.tx_ends.iter().copied().min();
                let next = match (t_timer, t_end) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) => a,
                    (None, Some(b)) => b,
                    (None, None) => break,
                };
                if next > until {
                    break;
                }
                self.now = next;
                if t_timer == Some(next) {
                    let i = self.timers.iter().position(|t| t.0 == next).unwrap();
                    let (_, which, tok) = self.timers.remove(i);
                    self.with(|m, now, out| m.timer(now, which, tok, out));
                } else {
                    self.tx_ends.retain(|&t| t != next);
                    self.with(|m, now, out| m.tx_end(now, out));
                }
            }
            self.now = until;
        }
        fn at(&mut self, t: SimTime) {
            self.run_until(t);
        }
        /// Step until `n` frames have been sent (stops right at the n-th).
        fn until_sent(&mut self, n: usize) {
            while self.sent.len() < n {
                let next = self
                    .timers
                    .iter()
                    .map(|t| t.0)
                    .chain(self.tx_ends.iter().copied())
                    .min()
                    .expect("something pending");
                self.run_until(next);
            }
        }
        fn sent_kinds(&self) -> Vec<FrameKind> {
            self.sent.iter().map(|(_, f)| f.kind).collect()
        }
        fn backoff_timers(&self) -> Vec<SimTime> {
            self.timers
                .iter()
                .filter(|t| t.1 == MacTimer::Backoff)
                .map(|t| t.0)
                .collect()
        }
    }

    fn us(x: u64) -> SimDuration {
        SimDuration::from_micros(x)
    }
    fn t_us(x: u64) -> SimTime {
        SimTime::ZERO + us(x)
    }
    fn frame(
        kind: FrameKind,
        src: u32,
        dst: Option<u32>,
        nav: SimDuration,
        p: &MacParams,
    ) -> Frame {
        let airtime = match kind {
            FrameKind::Rts => p.ctrl_airtime(RTS_BYTES),
            FrameKind::Cts => p.ctrl_airtime(CTS_BYTES),
            FrameKind::Ack => p.ctrl_airtime(ACK_BYTES),
            FrameKind::Data => p.data_airtime(128),
        };
        let pk = (kind == FrameKind::Data).then(|| Rc::new(pkt()));
        Frame {
            kind,
            src: NodeId(src),
            dst: dst.map(NodeId),
            nav,
            seq: 7,
            retry: false,
            pkt: pk,
            arp: None,
            airtime,
        }
    }
    fn backoff_slots(m: &Dcf) -> Vec<u64> {
        m.log
            .as_ref()
            .unwrap()
            .iter()
            .filter_map(|(_, w)| w.strip_prefix("backoff ").map(|s| s.parse().unwrap()))
            .collect()
    }

    /// The quiet paths the simulator takes instead of a handler run must leave
    /// the MAC exactly as the handlers do: same NAV, same NAV arming (time and
    /// token), same EIFS flag, nothing else to do; with no backoff, and with a
    /// backoff that stays paused. They refuse whenever the handler could do
    /// more (a backoff would resume or pause, the frame is ours or broadcast).
    #[test]
    fn quiet_receptions_equal_the_handlers() {
        for (eifs_mode, backoff) in [
            (EifsMode::Ns2, false),
            (EifsMode::Standard, false),
            (EifsMode::Ns2, true),
        ] {
            let p = MacParams {
                eifs_mode,
                ..MacParams::default()
            };
            let other = frame(FrameKind::Cts, 5, Some(7), us(900), &p);
            let ack = frame(FrameKind::Ack, 5, Some(7), us(0), &p);
            let (mut quiet, mut full) = (Bench::new(p, 1), Bench::new(p, 1));
            if backoff {
                // A backoff, paused by a busy medium.
                for b in [&mut quiet, &mut full] {
                    b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
                    b.now = t_us(5);
                    b.with(|m, now, out| m.carrier(now, true, out));
                    assert!(b.m.bo_busy && b.m.bo_paused);
                    b.timers.clear();
                }
            }
            // Errored frame, overheard unicast (shorter, then longer NAV, then an
            // ACK's zero NAV after the NAV expired), carrier changes.
            for (t, f) in [
                (10, None),
                (200, Some(&other)),
                (2000, Some(&other)),
                (2100, None),
                (3000, Some(&ack)),
            ] {
                quiet.now = t_us(t);
                full.now = t_us(t);
                let now = quiet.now;
                assert!(quiet.m.carrier_quiet(now, true));
                full.with(|m, now, out| m.carrier(now, true, out));
                let nav = quiet
                    .m
                    .rx_quiet(now, f.map(FrameHead::of))
                    .expect("no backoff, or a paused one: quiet");
                full.with(|m, now, out| match f {
                    Some(f) => m.rx_ok(now, f, out),
                    None => m.rx_error(now, out),
                });
                let nav_covers = quiet.m.nav_until > now;
                assert_eq!(
                    quiet.m.carrier_quiet(now, false),
                    !backoff || nav_covers,
                    "{eifs_mode:?} at {t} us"
                );
                full.with(|m, now, out| m.carrier(now, false, out));
                if backoff && !nav_covers {
                    assert_eq!(
                        full.backoff_timers().len(),
                        1,
                        "the idle medium resumes the backoff"
                    );
                    break;
                }
                let full_nav: Vec<_> = full
                    .timers
                    .drain(..)
                    .map(|(at, which, tok)| {
                        assert_eq!(which, MacTimer::Nav);
                        (at, tok)
                    })
                    .collect();
                assert_eq!(
                    nav.into_iter().collect::<Vec<_>>(),
                    full_nav,
                    "{eifs_mode:?} at {t} us"
                );
                assert!(full.events.is_empty() && full.sent.is_empty());
                assert_eq!(
                    (quiet.m.nav_until, quiet.m.use_eifs, quiet.m.phy_busy),
                    (full.m.nav_until, full.m.use_eifs, full.m.phy_busy)
                );
                assert_eq!(
                    (quiet.m.bo_busy, quiet.m.bo_paused, quiet.m.bo.rtime),
                    (full.m.bo_busy, full.m.bo_paused, full.m.bo.rtime)
                );
            }
            let mut b = Bench::new(p, 1);
            assert_eq!(
                b.m.rx_quiet(
                    b.now,
                    Some(FrameHead::of(&frame(
                        FrameKind::Rts,
                        5,
                        Some(0),
                        us(900),
                        &p
                    )))
                ),
                None,
                "a frame for us"
            );
            assert_eq!(
                b.m.rx_quiet(
                    b.now,
                    Some(FrameHead::of(&frame(FrameKind::Data, 5, None, us(0), &p)))
                ),
                None,
                "a broadcast"
            );
            b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
            assert!(b.m.bo_busy && !b.m.bo_paused);
            if eifs_mode == EifsMode::Ns2 {
                assert_eq!(
                    b.m.rx_quiet(b.now, None),
                    None,
                    "the NAV would pause the running backoff"
                );
            }
            assert!(
                !b.m.carrier_quiet(b.now, true),
                "the busy carrier would pause the running backoff"
            );
        }
    }

    /// A NAV expiry is quiet exactly when its handler would change nothing
    /// but the timer: a backoff paused by the NAV stays paused while the radio
    /// is still busy (quiet, same state as the handler), and resumes on an
    /// idle medium (not quiet: the handler runs and arms the backoff); with
    /// immediate access the handler always runs; a stale token is never quiet.
    #[test]
    fn quiet_nav_expiries_equal_the_handler() {
        for (busy_at_expiry, immediate_access) in [(true, false), (false, false), (true, true)] {
            let p = MacParams {
                immediate_access,
                ..MacParams::default()
            };
            let other = frame(FrameKind::Cts, 5, Some(7), us(900), &p);
            let (mut quiet, mut full) = (Bench::new(p, 1), Bench::new(p, 1));
            let mut nav = None;
            for b in [&mut quiet, &mut full] {
                // A backoff, paused by a busy medium, then a NAV from an overheard CTS.
                b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
                b.now = t_us(5);
                b.with(|m, now, out| m.carrier(now, true, out));
                b.now = t_us(100);
                b.with(|m, now, out| m.rx_ok(now, &other, out));
                b.with(|m, now, out| m.carrier(now, false, out));
                assert!(
                    b.m.bo_busy && b.m.bo_paused,
                    "the NAV keeps the backoff paused"
                );
                let (at, which, tok) = b.timers.pop().expect("the NAV's arming");
                assert_eq!(which, MacTimer::Nav);
                nav = Some((at, tok));
                b.timers.clear();
                if busy_at_expiry {
                    // The next frame of the exchange is on the air when the NAV ends.
                    b.now = SimTime(at.0 - 1_000);
                    b.with(|m, now, out| m.carrier(now, true, out));
                }
                b.now = at;
            }
            let (at, tok) = nav.expect("armed");
            assert!(
                !quiet
                    .m
                    .nav_expiry_quiet(at, TimerToken(tok.0.wrapping_add(1))),
                "a stale token"
            );
            let was_quiet = quiet.m.nav_expiry_quiet(at, tok);
            assert_eq!(was_quiet, busy_at_expiry && !immediate_access);
            full.with(|m, now, out| m.timer(now, MacTimer::Nav, tok, out));
            if was_quiet {
                assert!(
                    full.timers.is_empty() && full.events.is_empty(),
                    "the handler did nothing either"
                );
                assert_eq!(
                    (quiet.m.bo_busy, quiet.m.bo_paused, quiet.m.bo.rtime),
                    (full.m.bo_busy, full.m.bo_paused, full.m.bo.rtime)
                );
                assert!(
                    !quiet.m.nav_timer.is_armed() && !full.m.nav_timer.is_armed(),
                    "the timer fired"
                );
            } else if !busy_at_expiry {
                assert_eq!(
                    full.backoff_timers().len(),
                    1,
                    "the idle medium resumes the backoff"
                );
                assert!(quiet.m.nav_timer.is_live(tok), "not quiet: nothing changed");
            }
        }
    }

    #[test]
    fn backoff_draws_zero_to_cw_minus_one() {
        // ns-2 BackoffTimer::start: Random::random() % cw → 0..=30 for cw = 31.
        let mut seen = [false; 32];
        for seed in 0..3000 {
            let mut b = Bench::new(MacParams::default(), seed);
            b.m.enable_log();
            b.at(t_us(1000));
            b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
            seen[backoff_slots(&b.m)[0] as usize] = true;
        }
        assert!(seen[0] && seen[30], "both ends of 0..=30 drawn");
        assert!(!seen[31], "31 is never drawn");
    }

    #[test]
    fn idle_medium_still_defers_difs_plus_backoff_unless_immediate_access() {
        let mut b = Bench::new(MacParams::default(), 1);
        b.m.enable_log();
        b.at(t_us(1000));
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        assert!(
            b.sent.is_empty(),
            "ns-2 bugFix_timer_: no transmission at once"
        );
        let k = backoff_slots(&b.m)[0];
        assert_eq!(b.backoff_timers(), vec![t_us(1000 + 50 + 20 * k)]);
        b.at(t_us(1000 + 50 + 20 * k));
        assert_eq!(b.sent[0].0, t_us(1000 + 50 + 20 * k));
        assert_eq!(b.sent_kinds(), vec![FrameKind::Rts]);

        let mut b = Bench::new(
            MacParams {
                immediate_access: true,
                ..MacParams::default()
            },
            1,
        );
        b.at(t_us(1000));
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        assert_eq!(b.sent.len(), 1, "§9.2.5.1: idle for DIFS → RTS at once");
    }

    #[test]
    fn no_cts_while_the_nav_is_set() {
        let p = MacParams::default();
        let mut b = Bench::new(p, 1);
        b.m.enable_log();
        // An RTS between two others reserves the medium for 5 ms.
        b.at(t_us(1000));
        let other = frame(FrameKind::Rts, 5, Some(6), us(5000), &p);
        b.with(|m, now, out| m.rx_ok(now, &other, out));
        b.at(t_us(2000));
        let rts = frame(FrameKind::Rts, 2, Some(0), us(3000), &p);
        b.with(|m, now, out| m.rx_ok(now, &rts, out));
        b.at(t_us(2100));
        assert!(
            b.sent.is_empty(),
            "ns-2 check_pktCTRL drops the CTS when the medium is not idle"
        );
        assert!(b
            .m
            .log
            .as_ref()
            .unwrap()
            .iter()
            .any(|(_, w)| w == "drop CTS busy"));
        // Once the NAV is over, an RTS is answered SIFS later.
        b.at(t_us(7000));
        b.with(|m, now, out| m.rx_ok(now, &rts, out));
        b.at(t_us(7100));
        assert_eq!(b.sent.len(), 1);
        assert_eq!(
            (b.sent[0].0, b.sent[0].1.kind),
            (t_us(7010), FrameKind::Cts)
        );
        // CTS duration = RTS duration − SIFS − CTS time.
        assert_eq!(b.sent[0].1.nav, us(3000 - 10 - 304));
    }

    /// Our RTS goes out and is answered; returns the bench at the CTS's end.
    fn rts_answered(p: MacParams) -> Bench {
        let mut b = Bench::new(p, 1);
        b.m.enable_log();
        b.at(t_us(1000));
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        b.until_sent(1);
        let (t_rts, _) = b.sent[0].clone();
        b.at(t_rts + p.ctrl_airtime(RTS_BYTES) + p.sifs + p.ctrl_airtime(CTS_BYTES));
        let cts = frame(FrameKind::Cts, 1, Some(0), us(100), &p);
        b.with(|m, now, out| m.rx_ok(now, &cts, out));
        b
    }

    #[test]
    fn data_follows_the_cts_after_sifs_only_if_the_medium_is_idle() {
        let p = MacParams::default();
        let mut b = rts_answered(p);
        let t_cts = b.now;
        b.at(t_cts + p.sifs);
        assert_eq!(b.sent_kinds(), vec![FrameKind::Rts, FrameKind::Data]);
        assert_eq!(b.sent[1].0, t_cts + p.sifs);

        // The medium turns busy during the SIFS: ns-2 check_pktTx sends a new RTS
        // after a backoff with a doubled window instead of the DATA.
        let mut b = rts_answered(p);
        let t_cts = b.now;
        b.at(t_cts + us(5));
        b.with(|m, now, out| m.carrier(now, true, out));
        b.at(t_cts + p.sifs);
        assert_eq!(b.sent_kinds(), vec![FrameKind::Rts]);
        assert_eq!(b.m.cw(), 63);
        b.at(t_cts + us(2000));
        b.with(|m, now, out| m.carrier(now, false, out));
        b.at(t_cts + us(5000));
        assert_eq!(b.sent_kinds(), vec![FrameKind::Rts, FrameKind::Rts]);
    }

    #[test]
    fn data_without_our_cts_is_discarded_unless_switched() {
        let p = MacParams::default();
        let data = frame(FrameKind::Data, 2, Some(0), us(314), &p);
        let mut b = Bench::new(p, 1);
        b.at(t_us(1000));
        b.with(|m, now, out| m.rx_ok(now, &data, out));
        b.at(t_us(2000));
        assert!(
            b.sent.is_empty() && b.events.is_empty(),
            "ns-2 recvDATA: DROP_MAC_BUSY, no ACK, nothing delivered"
        );

        let mut b = Bench::new(
            MacParams {
                ack_data_without_cts: true,
                ..p
            },
            1,
        );
        b.at(t_us(1000));
        b.with(|m, now, out| m.rx_ok(now, &data, out));
        b.at(t_us(2000));
        assert_eq!(b.sent_kinds(), vec![FrameKind::Ack]);
        assert_eq!(b.sent[0].0, t_us(1010));
        assert!(matches!(b.events[0], MacAction::Deliver(..)));
    }

    #[test]
    fn a_data_frame_received_twice_is_acknowledged_again_and_discarded_as_dup() {
        // ns-2 recvDATA: the ACK goes out first, then the per-sender sequence
        // cache finds the duplicate and `discard(p, DROP_MAC_DUPLICATE)`.
        let p = MacParams {
            ack_data_without_cts: true,
            ..MacParams::default()
        };
        let data = frame(FrameKind::Data, 2, Some(0), us(314), &p);
        let mut b = Bench::new(p, 1);
        b.at(t_us(1000));
        b.with(|m, now, out| m.rx_ok(now, &data, out));
        b.at(t_us(5000));
        b.with(|m, now, out| m.rx_ok(now, &data, out));
        b.at(t_us(9000));
        assert_eq!(b.sent_kinds(), vec![FrameKind::Ack, FrameKind::Ack]);
        let delivered = b
            .events
            .iter()
            .filter(|e| matches!(e, MacAction::Deliver(..)))
            .count();
        assert_eq!(delivered, 1);
        assert_eq!(b.m.duplicates, 1);
        assert_eq!(b.discarded.len(), 1);
        let (f, code) = &b.discarded[0];
        assert_eq!(
            (*code, f.src, f.seq, f.kind),
            (DROP_DUPLICATE, data.src, data.seq, FrameKind::Data)
        );
    }

    #[test]
    fn ns2_eifs_is_a_nav_followed_by_difs() {
        for (mode, wait) in [(EifsMode::Ns2, 364 + 50), (EifsMode::Standard, 364)] {
            let mut b = Bench::new(
                MacParams {
                    eifs_mode: mode,
                    ..MacParams::default()
                },
                1,
            );
            b.m.enable_log();
            b.at(t_us(1000));
            b.with(|m, now, out| m.carrier(now, true, out));
            b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
            b.at(t_us(2000));
            b.with(|m, now, out| {
                m.rx_error(now, out);
                m.carrier(now, false, out);
            });
            let k = backoff_slots(&b.m)[0];
            b.at(t_us(2000 + wait + 20 * k));
            assert_eq!(b.sent.len(), 1, "{mode:?}");
            assert_eq!(b.sent[0].0, t_us(2000 + wait + 20 * k), "{mode:?}");
        }
    }

    #[test]
    fn a_frame_ending_during_our_transmission_leaves_no_eifs() {
        let p = MacParams::default();
        let mut b = Bench::new(p, 1);
        b.at(t_us(1000));
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        b.until_sent(1); // the RTS is on the air
        let t_rts = b.sent[0].0;
        b.at(t_rts + us(100));
        b.with(|m, now, out| m.rx_error(now, out));
        assert_eq!(
            b.m.nav_until,
            SimTime::ZERO,
            "ns-2 recv_timer: silent discard while tx_active"
        );
        b.with(|m, now, out| m.rx_captured(now, us(500), out));
        assert_eq!(
            b.m.nav_until,
            t_rts + us(100 + 364 + 500),
            "a captured frame: NAV to its end + EIFS"
        );
    }

    #[test]
    fn frame_done_counts_rts_and_data_retransmissions() {
        // Two RTS timeouts, a CTS (which resets the station's short count), one
        // ACK timeout, a fresh RTS/CTS, then the ACK: 3 retransmissions.
        let p = MacParams::default();
        let mut b = Bench::new(p, 1);
        b.at(t_us(1000));
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        let step = |b: &mut Bench, want: usize| {
            while b.sent.len() < want {
                let t = b.now + us(100);
                b.at(t);
            }
        };
        step(&mut b, 3); // RTS, RTS, RTS
        assert_eq!(b.sent_kinds(), vec![FrameKind::Rts; 3]);
        let cts = frame(FrameKind::Cts, 1, Some(0), us(100), &p);
        let t3 = b.sent[2].0 + p.ctrl_airtime(RTS_BYTES) + p.sifs + p.ctrl_airtime(CTS_BYTES);
        b.at(t3);
        b.with(|m, now, out| m.rx_ok(now, &cts, out));
        step(&mut b, 5); // DATA (lost), RTS
        assert_eq!(b.sent[3].1.kind, FrameKind::Data);
        assert_eq!(b.sent[4].1.kind, FrameKind::Rts);
        let t5 = b.sent[4].0 + p.ctrl_airtime(RTS_BYTES) + p.sifs + p.ctrl_airtime(CTS_BYTES);
        b.at(t5);
        b.with(|m, now, out| m.rx_ok(now, &cts, out));
        b.at(t5 + p.sifs);
        assert_eq!(b.sent[5].1.kind, FrameKind::Data);
        assert!(b.sent[5].1.retry);
        b.at(b.sent[5].0 + b.sent[5].1.airtime + p.sifs + p.ctrl_airtime(ACK_BYTES));
        let ack = frame(FrameKind::Ack, 1, Some(0), SimDuration::ZERO, &p);
        b.with(|m, now, out| m.rx_ok(now, &ack, out));
        assert!(
            b.events.iter().any(|e| matches!(
                e,
                MacAction::FrameDone {
                    retries: 3,
                    ok: true
                }
            )),
            "{:?}",
            b.events
        );
        assert!(b.events.iter().any(|e| matches!(e, MacAction::Ready)));
    }

    #[test]
    fn a_give_up_discards_the_rts_then_the_data_frame_around_the_callback() {
        // ns-2 RetransmitRTS at the short retry limit (7 RTS without a CTS):
        // discard(pktRTS_), xmit_failure_(copy), discard(pktTx_).
        let p = MacParams::default();
        let mut b = Bench::new(p, 1);
        b.at(t_us(1000));
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        b.at(t_us(2_000_000));
        assert_eq!(
            b.sent_kinds(),
            vec![FrameKind::Rts; p.short_retry_limit as usize]
        );
        let mut kinds = b.discarded.iter().map(|(f, _)| f.kind);
        let order: Vec<&str> = b
            .events
            .iter()
            .filter_map(|e| match e {
                MacAction::Discard => match kinds.next() {
                    Some(FrameKind::Rts) => Some("discard RTS"),
                    Some(FrameKind::Data) => Some("discard DATA"),
                    k => panic!("discarded {k:?}"),
                },
                MacAction::FrameDone { ok: false, .. } => Some("done"),
                MacAction::TxFailed(..) => Some("to routing"),
                _ => None,
            })
            .collect();
        assert_eq!(order, ["discard RTS", "done", "to routing", "discard DATA"]);
        assert!(b.discarded.iter().all(|&(_, code)| code == DROP_RETRY));
        let discarded: Vec<&Frame> = b.discarded.iter().map(|(f, _)| f).collect();
        // The RTS as it was sent; the data frame with its packet, receiver and ACK duration.
        let rts = &b.sent.last().unwrap().1;
        assert_eq!(
            (discarded[0].dst, discarded[0].nav, discarded[0].src),
            (rts.dst, rts.nav, rts.src)
        );
        let data = discarded[1];
        assert_eq!(
            (data.dst, data.pkt.as_ref().map(|p| p.uid)),
            (Some(NodeId(1)), Some(1))
        );
        assert_eq!(data.nav, duration_field(p.ctrl_airtime(ACK_BYTES) + p.sifs));
    }

    #[test]
    fn switch_off_returns_the_held_frame_and_silences_its_timers() {
        let mut b = Bench::new(MacParams::default(), 1);
        b.at(t_us(1000));
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        b.until_sent(1);
        assert_eq!(b.sent_kinds(), vec![FrameKind::Rts]);
        assert_eq!(b.m.switch_off().map(|p| p.uid), Some(1));
        assert!(b.m.is_free());
        b.at(t_us(10_000));
        assert_eq!(b.sent.len(), 1, "the forgotten exchange's timers are stale");
        b.m.switch_on(b.now);
        b.with(|m, now, out| m.enqueue(now, pkt(), Some(NodeId(1)), out));
        b.until_sent(2);
        assert_eq!(b.sent_kinds(), vec![FrameKind::Rts, FrameKind::Rts]);
    }
}
