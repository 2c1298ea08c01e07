//! IEEE 802.11 Distributed Coordination Function (IEEE 802.11-1999 §9.2).
//!
//! Implements: physical and virtual carrier sense (NAV from the Duration field,
//! §9.2.5.4), DIFS/SIFS/EIFS (§9.2.3), binary exponential backoff frozen while
//! the medium is busy and resumed after DIFS (or EIFS after an errored frame)
//! (§9.2.4–9.2.5.2), RTS/CTS above the RTS threshold (§9.2.5.6), ACKs and
//! retransmission with short/long retry limits (§9.2.5.3, §9.2.9), duplicate
//! detection by sequence number (§9.2.9), broadcast without RTS/ACK (§9.2.7), a
//! post-transmission backoff after every frame (§9.2.5.2), link-layer failure
//! feedback when a unicast frame exhausts its retries, and the link-layer
//! adaptive pacing of Fu et al. (paper 001, Alg. 2) when `pacing` is on.
//!
//! Deviations from ns-2's `Mac802_11` (docs/wireless.md):
//! * a frame that finds the medium idle for DIFS is sent at once (the standard);
//!   ns-2 defers DIFS plus a random backoff on a timer that does not freeze;
//! * EIFS replaces DIFS after an errored frame (the standard); ns-2 sets the
//!   NAV to EIFS and then waits DIFS as well;
//! * the response timeout is SIFS + response air time + one slot.
//!
//! Style: handlers take `now` and push [`MacAction`]s; the simulator carries them
//! out (radio, channel, timers, network layer), so the DCF is testable alone.

use super::frame::{Frame, FrameKind, MacParams, ACK_BYTES, CTS_BYTES};
use crate::ids::NodeId;
use crate::packet::Packet;
use crate::sim::{SimDuration, SimRng, SimTime, Timer, TimerToken};
use rand::Rng;
use std::collections::HashMap;

/// The DCF's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacTimer {
    Backoff,
    /// SIFS before a CTS, ACK, or the DATA that follows a CTS.
    Response,
    /// CTS or ACK did not arrive.
    Timeout,
    /// The NAV expires.
    Nav,
}

#[derive(Debug)]
pub enum MacAction {
    /// Put this frame on the air now (the simulator ends it after `frame.airtime`).
    Transmit(Frame),
    SetTimer(MacTimer, SimTime, TimerToken),
    /// A data frame for this node (or broadcast) arrived intact from `from`.
    Deliver(Packet, NodeId),
    /// Link-layer feedback: `pkt` could not reach `next_hop` within the retry limit.
    TxFailed(Packet, NodeId),
    /// Promiscuous mode: a data frame from `.1` to `.2` (another node) arrived intact.
    Overheard(Packet, NodeId, NodeId),
    /// A unicast frame finished (acknowledged or dropped) after `retries` retransmissions.
    FrameDone { retries: u32, ok: bool },
    /// The MAC can take the next packet from the interface queue.
    Ready,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Nothing to send.
    Idle,
    /// A frame waits for the backoff (or the medium).
    Contend,
    /// Our RTS, DATA or broadcast is on the air.
    Transmitting,
    WaitCts,
    WaitAck,
}

/// What our radio is sending now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sending {
    Response,
    Rts,
    UnicastData,
    Broadcast,
}

struct Outgoing {
    pkt: Packet,
    dst: Option<NodeId>,
    seq: u16,
    use_rts: bool,
    short_retries: u32,
    long_retries: u32,
}

pub struct Dcf {
    pub p: MacParams,
    me: NodeId,
    rng: SimRng,
    /// Link-layer adaptive pacing (paper 001, Alg. 2), switched by LRED.
    pub pacing: bool,
    cw: u32,
    next_seq: u16,
    cur: Option<Outgoing>,
    state: State,
    sending: Option<Sending>,
    // Carrier sense.
    phy_busy: bool,
    tx_active: bool,
    nav_until: SimTime,
    was_idle: bool,
    idle_since: SimTime,
    use_eifs: bool,
    // Backoff: remaining slots, and when the countdown (re)started if it is running.
    bo_slots: Option<u32>,
    bo_start: Option<SimTime>,
    bo_timer: Timer,
    resp_timer: Timer,
    pending_resp: Option<(Frame, Sending)>,
    to_timer: Timer,
    nav_timer: Timer,
    last_seq: HashMap<NodeId, u16>,
    /// Optional event log for tests and MAC traces: (time, what).
    pub log: Option<Vec<(SimTime, String)>>,
    pub duplicates: u64,
    /// Pass up data frames addressed to other nodes (`MacAction::Overheard`),
    /// for routing protocols that snoop (DSR's tap, ns-2 `Mac::installTap`).
    pub promiscuous: bool,
}

impl Dcf {
    pub fn new(me: NodeId, p: MacParams, rng: SimRng) -> Self {
        Dcf {
            cw: p.cw_min,
            p,
            me,
            rng,
            pacing: false,
            next_seq: 0,
            cur: None,
            state: State::Idle,
            sending: None,
            phy_busy: false,
            tx_active: false,
            nav_until: SimTime::ZERO,
            was_idle: true,
            idle_since: SimTime::ZERO,
            use_eifs: false,
            bo_slots: None,
            bo_start: None,
            bo_timer: Timer::new(),
            resp_timer: Timer::new(),
            pending_resp: None,
            to_timer: Timer::new(),
            nav_timer: Timer::new(),
            last_seq: HashMap::new(),
            log: None,
            promiscuous: false,
            duplicates: 0,
        }
    }

    fn note(&mut self, now: SimTime, what: impl FnOnce() -> String) {
        if let Some(log) = self.log.as_mut() {
            log.push((now, what()));
        }
    }

    /// The packet the MAC holds (being sent or retried), if any.
    pub fn current_packet(&self) -> Option<&Packet> {
        self.cur.as_ref().map(|c| &c.pkt)
    }

    /// True when the MAC can take a new packet.
    pub fn is_free(&self) -> bool {
        self.cur.is_none()
    }

    pub fn cw(&self) -> u32 {
        self.cw
    }

    fn ifs(&self) -> SimDuration {
        if self.use_eifs { self.p.eifs() } else { self.p.difs() }
    }

    fn medium_idle(&self, now: SimTime) -> bool {
        !self.phy_busy && !self.tx_active && now >= self.nav_until
    }

    /// Re-evaluate carrier sense after any change, freezing or resuming the backoff.
    fn update_medium(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let idle = self.medium_idle(now);
        if idle == self.was_idle {
            return;
        }
        self.was_idle = idle;
        if idle {
            self.idle_since = now;
            self.resume_backoff(now, out);
        } else {
            self.pause_backoff(now);
        }
    }

    fn resume_backoff(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let Some(slots) = self.bo_slots else { return };
        // Count down only after the medium has been idle for DIFS (EIFS).
        let start = now.max(self.idle_since + self.ifs());
        self.bo_start = Some(start);
        let at = start + SimDuration(self.p.slot.0 * slots as u64);
        let tok = self.bo_timer.arm(at);
        out.push(MacAction::SetTimer(MacTimer::Backoff, at, tok));
    }

    fn pause_backoff(&mut self, now: SimTime) {
        if let (Some(slots), Some(start)) = (self.bo_slots, self.bo_start) {
            if now > start {
                let elapsed = ((now - start).0 / self.p.slot.0) as u32;
                self.bo_slots = Some(slots - elapsed.min(slots));
            }
        }
        self.bo_start = None;
        self.bo_timer.cancel();
    }

    fn start_backoff(&mut self, now: SimTime, extra_slots: u32, out: &mut Vec<MacAction>) {
        let slots = self.rng.gen_range(0..=self.cw) + extra_slots;
        self.note(now, || format!("backoff {slots}"));
        self.bo_slots = Some(slots);
        if self.was_idle {
            self.resume_backoff(now, out);
        }
    }

    // ---- power -----------------------------------------------------------------

    /// The node is switched off: forget the exchange in progress, the backoff,
    /// the NAV and every timer (their pending events become stale). Returns the
    /// packet the MAC held, for the caller to drop.
    pub fn switch_off(&mut self) -> Option<Packet> {
        for t in [&mut self.bo_timer, &mut self.resp_timer, &mut self.to_timer, &mut self.nav_timer] {
            t.cancel();
        }
        self.pending_resp = None;
        self.sending = None;
        self.bo_slots = None;
        self.bo_start = None;
        self.state = State::Idle;
        self.cw = self.p.cw_min;
        self.nav_until = SimTime::ZERO;
        self.use_eifs = false;
        self.cur.take().map(|c| c.pkt)
    }

    /// The node is switched on at `now`: it starts with an idle medium and no
    /// backoff (its carrier sense is reported afresh by the radio).
    pub fn switch_on(&mut self, now: SimTime) {
        self.was_idle = self.medium_idle(now);
        self.idle_since = now;
    }

    // ---- from the radio -------------------------------------------------------

    /// Physical carrier sense changed.
    pub fn carrier(&mut self, now: SimTime, busy: bool, out: &mut Vec<MacAction>) {
        self.phy_busy = busy;
        self.update_medium(now, out);
    }

    /// Our transmission ended.
    pub fn tx_end(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        self.tx_active = false;
        self.update_medium(now, out);
        match self.sending.take() {
            Some(Sending::Rts) => {
                self.state = State::WaitCts;
                let at = now + self.p.response_timeout(CTS_BYTES);
                let tok = self.to_timer.arm(at);
                out.push(MacAction::SetTimer(MacTimer::Timeout, at, tok));
            }
            Some(Sending::UnicastData) => {
                self.state = State::WaitAck;
                let at = now + self.p.response_timeout(ACK_BYTES);
                let tok = self.to_timer.arm(at);
                out.push(MacAction::SetTimer(MacTimer::Timeout, at, tok));
            }
            Some(Sending::Broadcast) => self.complete(now, true, out),
            Some(Sending::Response) | None => {}
        }
    }

    /// A frame ended in error (collision, too weak, or overlapped our transmission).
    pub fn rx_error(&mut self, now: SimTime) {
        self.note(now, || "rx error".into());
        self.use_eifs = true;
    }

    /// A frame arrived intact.
    pub fn rx_ok(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        // A correct reception ends any EIFS (§9.2.3.4).
        self.use_eifs = false;
        self.note(now, || format!("rx {} from {}", f.kind.name(), f.src));
        match f.dst {
            Some(d) if d == self.me => self.rx_for_me(now, f, out),
            None => {
                if let (FrameKind::Data, Some(pkt)) = (f.kind, &f.pkt) {
                    out.push(MacAction::Deliver(pkt.clone(), f.src));
                }
            }
            Some(d) => {
                if self.promiscuous {
                    if let (FrameKind::Data, Some(pkt)) = (f.kind, &f.pkt) {
                        out.push(MacAction::Overheard(pkt.clone(), f.src, d));
                    }
                }
                self.set_nav(now, now + f.nav, out)
            }
        }
    }

    fn rx_for_me(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        match f.kind {
            FrameKind::Rts => {
                // Answer only if our NAV is clear and we are not in an exchange (§9.2.5.7).
                let busy_exchange = matches!(self.state, State::WaitCts | State::WaitAck | State::Transmitting);
                if now >= self.nav_until && !busy_exchange {
                    let cts_time = self.p.ctrl_airtime(CTS_BYTES);
                    let nav = SimDuration(f.nav.0.saturating_sub((self.p.sifs + cts_time).0));
                    let cts = Frame { kind: FrameKind::Cts, src: self.me, dst: Some(f.src), nav, seq: 0, retry: false, pkt: None, airtime: cts_time };
                    self.respond(now, cts, Sending::Response, out);
                }
            }
            FrameKind::Cts => {
                let ours = self.state == State::WaitCts && self.cur.as_ref().and_then(|c| c.dst) == Some(f.src);
                if ours {
                    self.to_timer.cancel();
                    let c = self.cur.as_mut().expect("WaitCts has a frame");
                    c.short_retries = 0; // §9.2.5.3: a CTS resets the short retry count
                    let airtime = self.p.data_airtime(c.pkt.size_bytes());
                    let nav = SimDuration(f.nav.0.saturating_sub((self.p.sifs + airtime).0));
                    let data = Frame { kind: FrameKind::Data, src: self.me, dst: c.dst, nav, seq: c.seq, retry: c.long_retries > 0, pkt: Some(c.pkt.clone()), airtime };
                    self.state = State::Transmitting;
                    self.respond(now, data, Sending::UnicastData, out);
                }
            }
            FrameKind::Data => {
                let ack_time = self.p.ctrl_airtime(ACK_BYTES);
                let ack = Frame { kind: FrameKind::Ack, src: self.me, dst: Some(f.src), nav: SimDuration::ZERO, seq: 0, retry: false, pkt: None, airtime: ack_time };
                self.respond(now, ack, Sending::Response, out);
                let dup = f.retry && self.last_seq.get(&f.src) == Some(&f.seq);
                self.last_seq.insert(f.src, f.seq);
                if dup {
                    self.duplicates += 1;
                } else if let Some(pkt) = &f.pkt {
                    out.push(MacAction::Deliver(pkt.clone(), f.src));
                }
            }
            FrameKind::Ack => {
                if self.state == State::WaitAck {
                    self.to_timer.cancel();
                    self.complete(now, true, out);
                }
            }
        }
    }

    fn respond(&mut self, now: SimTime, f: Frame, kind: Sending, out: &mut Vec<MacAction>) {
        if self.resp_timer.is_armed() {
            return; // already answering a frame that ended at the same instant
        }
        self.pending_resp = Some((f, kind));
        let at = now + self.p.sifs;
        let tok = self.resp_timer.arm(at);
        out.push(MacAction::SetTimer(MacTimer::Response, at, tok));
    }

    fn set_nav(&mut self, now: SimTime, until: SimTime, out: &mut Vec<MacAction>) {
        if until > self.nav_until {
            self.nav_until = until;
            let tok = self.nav_timer.arm(until);
            out.push(MacAction::SetTimer(MacTimer::Nav, until, tok));
            self.update_medium(now, out);
        }
    }

    // ---- from the interface queue ----------------------------------------------

    /// Take a packet for `next_hop` (`None` = broadcast). Only when [`Dcf::is_free`].
    pub fn enqueue(&mut self, now: SimTime, pkt: Packet, next_hop: Option<NodeId>, out: &mut Vec<MacAction>) {
        assert!(self.cur.is_none(), "MAC given a packet while busy");
        let use_rts = next_hop.is_some() && pkt.size_bytes() > self.p.rts_threshold_bytes;
        let seq = self.next_seq;
        self.next_seq = (self.next_seq + 1) & 0x0fff; // 12-bit sequence number
        self.cur = Some(Outgoing { pkt, dst: next_hop, seq, use_rts, short_retries: 0, long_retries: 0 });
        self.state = State::Contend;
        if self.bo_slots.is_none() {
            // §9.2.5.1: medium idle for DIFS (EIFS) → transmit now; otherwise back off.
            if self.was_idle && !self.resp_timer.is_armed() && now >= self.idle_since + self.ifs() {
                self.attempt(now, out);
            } else {
                self.start_backoff(now, 0, out);
            }
        }
    }

    fn attempt(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let c = self.cur.as_ref().expect("attempt without a frame");
        let data_time = self.p.data_airtime(c.pkt.size_bytes());
        let (frame, sending) = match c.dst {
            None => (
                Frame { kind: FrameKind::Data, src: self.me, dst: None, nav: SimDuration::ZERO, seq: c.seq, retry: false, pkt: Some(c.pkt.clone()), airtime: data_time },
                Sending::Broadcast,
            ),
            Some(dst) if c.use_rts => {
                let cts = self.p.ctrl_airtime(CTS_BYTES);
                let ack = self.p.ctrl_airtime(ACK_BYTES);
                let nav = self.p.sifs + cts + self.p.sifs + data_time + self.p.sifs + ack;
                let airtime = self.p.ctrl_airtime(super::frame::RTS_BYTES);
                (Frame { kind: FrameKind::Rts, src: self.me, dst: Some(dst), nav, seq: 0, retry: false, pkt: None, airtime }, Sending::Rts)
            }
            Some(dst) => {
                let nav = self.p.sifs + self.p.ctrl_airtime(ACK_BYTES);
                let retry = c.short_retries > 0;
                (
                    Frame { kind: FrameKind::Data, src: self.me, dst: Some(dst), nav, seq: c.seq, retry, pkt: Some(c.pkt.clone()), airtime: data_time },
                    Sending::UnicastData,
                )
            }
        };
        self.state = State::Transmitting;
        self.transmit(now, frame, sending, out);
    }

    fn transmit(&mut self, now: SimTime, f: Frame, sending: Sending, out: &mut Vec<MacAction>) {
        self.note(now, || format!("tx {}", f.kind.name()));
        self.sending = Some(sending);
        self.tx_active = true;
        self.update_medium(now, out);
        out.push(MacAction::Transmit(f));
    }

    // ---- timers ----------------------------------------------------------------

    pub fn timer(&mut self, now: SimTime, which: MacTimer, tok: TimerToken, out: &mut Vec<MacAction>) {
        match which {
            MacTimer::Backoff => {
                if self.bo_timer.fire(tok) {
                    self.bo_slots = None;
                    self.bo_start = None;
                    if self.state == State::Contend {
                        self.attempt(now, out);
                    }
                }
            }
            MacTimer::Response => {
                if self.resp_timer.fire(tok) {
                    let (f, kind) = self.pending_resp.take().expect("armed response has a frame");
                    self.transmit(now, f, kind, out);
                }
            }
            MacTimer::Timeout => {
                if self.to_timer.fire(tok) {
                    self.on_timeout(now, out);
                }
            }
            MacTimer::Nav => {
                if self.nav_timer.fire(tok) {
                    self.update_medium(now, out);
                }
            }
        }
    }

    fn on_timeout(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let p = self.p;
        let c = self.cur.as_mut().expect("timeout without a frame");
        // §9.2.5.3: RTS and short frames count against the short limit, data sent
        // after RTS/CTS against the long limit.
        let exhausted = match self.state {
            State::WaitCts => {
                c.short_retries += 1;
                c.short_retries >= p.short_retry_limit
            }
            State::WaitAck if c.use_rts => {
                c.long_retries += 1;
                c.long_retries >= p.long_retry_limit
            }
            State::WaitAck => {
                c.short_retries += 1;
                c.short_retries >= p.short_retry_limit
            }
            s => unreachable!("timeout in state {s:?}"),
        };
        self.note(now, || if exhausted { "retry limit".into() } else { "timeout".into() });
        if exhausted {
            let c = self.cur.as_ref().unwrap();
            let (pkt, dst) = (c.pkt.clone(), c.dst.expect("only unicast frames time out"));
            out.push(MacAction::TxFailed(pkt, dst));
            self.complete(now, false, out);
        } else {
            self.cw = (2 * (self.cw + 1) - 1).min(self.p.cw_max);
            self.state = State::Contend;
            self.start_backoff(now, 0, out);
        }
    }

    /// The current frame is done (acknowledged, broadcast, or dropped).
    fn complete(&mut self, now: SimTime, ok: bool, out: &mut Vec<MacAction>) {
        let c = self.cur.take().expect("complete without a frame");
        let mut extra = 0;
        if c.dst.is_some() {
            out.push(MacAction::FrameDone { retries: c.short_retries + c.long_retries, ok });
            // Paper 001 Alg. 2: after a successful exchange, pace by one data-frame time.
            if ok && self.pacing {
                let t = self.p.data_airtime(c.pkt.size_bytes());
                extra = t.0.div_ceil(self.p.slot.0) as u32;
            }
        }
        self.state = State::Idle;
        self.cw = self.p.cw_min;
        self.start_backoff(now, extra, out);
        out.push(MacAction::Ready);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{IpHeader, IpProto, TransportHeader, UdpHeader};
    use crate::sim::{stream, Component};

    fn pkt() -> Packet {
        Packet {
            uid: 1,
            ip: IpHeader { src: NodeId(0), dst: NodeId(1), ttl: 32, proto: IpProto::Udp },
            transport: TransportHeader::Udp(UdpHeader { src_port: 1, dst_port: 1 }),
            payload_bytes: 100,
            tag: None,
            source_route: None,
        }
    }

    fn timers(out: &[MacAction]) -> Vec<(MacTimer, SimTime, TimerToken)> {
        out.iter().filter_map(|a| if let MacAction::SetTimer(t, at, tok) = a { Some((*t, *at, *tok)) } else { None }).collect()
    }

    #[test]
    fn switch_off_returns_the_held_frame_and_silences_its_timers() {
        let mut m = Dcf::new(NodeId(0), MacParams::default(), stream(1, 0, Component::Mac));
        let mut out = Vec::new();
        let t0 = SimTime::from_secs_f64(1.0);
        m.enqueue(t0, pkt(), Some(NodeId(1)), &mut out);
        assert!(matches!(out[0], MacAction::Transmit(ref f) if f.kind == FrameKind::Rts), "idle medium: RTS at once");
        out.clear();
        m.tx_end(t0 + SimDuration::from_micros(352), &mut out);
        let (kind, at, tok) = timers(&out)[0];
        assert_eq!(kind, MacTimer::Timeout);
        assert_eq!(m.switch_off().map(|p| p.uid), Some(1));
        assert!(m.is_free());
        out.clear();
        m.timer(at, kind, tok, &mut out);
        assert!(out.is_empty(), "the CTS timeout of the forgotten exchange is stale: {out:?}");
        // Back on: a new frame on an idle medium goes out after DIFS without backoff.
        let t1 = at + SimDuration::from_millis(10);
        m.switch_on(t1);
        m.enqueue(t1 + m.p.difs(), pkt(), Some(NodeId(1)), &mut out);
        assert!(matches!(out[0], MacAction::Transmit(_)));
    }
}
