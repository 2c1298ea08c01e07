//! The Flexible Radio Network's slotted MAC (paper 003, Sugano & Murata, §II;
//! docs/frn.md): fixed-length slots on a run-wide grid, carrier sense at the
//! start of a slot, relay in the slot after reception, acknowledgement by echo
//! (the previous node overhears the relay of its own packet) or, at the
//! destination, by a link-level ACK; no echo → resend after a random 3–5 slots;
//! a lifetime in slots set at the source, counted down while the packet waits;
//! and §III-A's per-neighbour counter of failed transmissions that declares a
//! link failed at a threshold and hands the neighbour's packets back to routing.
//!
//! The MAC and the FRN routing (`routing::frn`) are one protocol split over two
//! layers. The FRN header travels in the packet (`Packet::frn`, one per copy,
//! its bytes `header_bytes` in the air time); per-neighbour link state, which
//! the MAC writes and routing reads, lives in one run-wide [`FrnShared`] behind
//! an `Rc<RefCell>`. No borrow of it is held across a call into another layer.
//!
//! Style as the DCF: handlers take `now` and push [`MacAction`]s.

use super::dcf::{MacAction, MacTimer};
use super::frame::{Frame, FrameKind, MacParams, Outbox, ACK_BYTES};
use crate::ids::NodeId;
use crate::sim::{SimDuration, SimRng, SimTime, Timer, TimerToken};
pub use crate::wire::frn::FrnHeader;
use crate::wire::{Packet, TransportHeader};
use rand::Rng;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// FRN MAC parameters (`[mac.frn]`; defaults and sources in docs/frn.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrnParams {
    /// Slot length. Default 10 ms: a 1040-byte TCP segment with MAC and FRN
    /// headers takes 8.9 ms at ns-2's 1 Mb/s, plus the carrier-sense window.
    pub slot: SimDuration,
    /// Carrier-sense window at the start of a slot: a sender waits a random
    /// number of mini-slots (0..cs_minislots) sensing before it transmits.
    pub cs_minislots: u32,
    /// One mini-slot (default 20 µs, the 802.11 DSSS slot: time to sense carrier).
    pub minislot: SimDuration,
    /// Resend interval of data packets after a missed echo, slots, inclusive (§II: 3–5).
    pub resend_slots: (u32, u32),
    /// Resend interval of TCP ACK segments (§III-C preferential resend; Fig. 9: 3–4
    /// vs 5–6 for data). Default = `resend_slots` (no preference).
    pub ack_resend_slots: (u32, u32),
    /// Packet lifetime set at the source, slots (§II; user-defined in FRN).
    pub lifetime_slots: u32,
    /// Consecutive transmissions without echo/ACK that declare the link to a
    /// neighbour failed (§III-A; 0 = no detection, the original FRN).
    pub link_failure_threshold: u32,
    /// Packets the MAC buffers (relays, own packets, resends).
    pub buffer_pkts: u32,
    /// FRN header bytes on top of the MAC data header (lifetime, checkpoint, flags).
    pub header_bytes: u32,
    /// Relays and link ACKs due this slot (the slot after reception, §II) go
    /// first: a node picks them before its own packets and resends, and they
    /// sense in the first `cs_minislots` mini-slots of the slot while other
    /// transmissions sense in the next `cs_minislots`, so neighbours hear the
    /// relay (the echo) and defer. false: one window, earliest due first.
    pub relay_first: bool,
    /// A transmission without echo/ACK counts against the link (§III-A) when
    /// the packet is resent, so an echo heard late (after the echo slot, before
    /// the resend) is no failure. false: counted as soon as the echo slot passes.
    pub miss_at_resend: bool,
}

impl Default for FrnParams {
    fn default() -> Self {
        FrnParams {
            slot: SimDuration::from_micros(10_000),
            cs_minislots: 8,
            minislot: SimDuration::from_micros(20),
            resend_slots: (3, 5),
            ack_resend_slots: (3, 5),
            lifetime_slots: 1000,
            link_failure_threshold: 3,
            buffer_pkts: 50,
            header_bytes: 8,
            relay_first: true,
            miss_at_resend: true,
        }
    }
}

/// A node's view of the link to one neighbour (§III-A).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkState {
    /// Consecutive transmissions with neither echo nor ACK.
    pub fails: u32,
    pub failed: bool,
}

/// What the FRN MAC and routing of all nodes share (one per run).
#[derive(Debug, Default)]
pub struct FrnShared {
    /// `links[n][m]`: node n's state of its link to m (absent = never failed).
    pub links: Vec<BTreeMap<NodeId, LinkState>>,
    pub params: FrnParams,
}

pub type FrnHandle = Rc<RefCell<FrnShared>>;

impl FrnShared {
    pub fn new(nodes: usize, params: FrnParams) -> FrnHandle {
        Rc::new(RefCell::new(FrnShared {
            links: vec![BTreeMap::new(); nodes],
            params,
        }))
    }
    pub fn slot_of(&self, t: SimTime) -> u64 {
        t.as_nanos() / self.params.slot.as_nanos()
    }
    pub fn link_failed(&self, n: NodeId, m: NodeId) -> bool {
        self.links[n.index()].get(&m).is_some_and(|l| l.failed)
    }
    /// Whether `pkt`'s lifetime has run out by slot `slot`.
    pub fn expired(&self, pkt: &Packet, slot: u64) -> bool {
        pkt.frn.as_ref().is_some_and(|h| h.expires_slot <= slot)
    }
}

/// A TCP segment without payload: resent on the ACK interval (§III-C).
pub fn is_tcp_ack(p: &Packet) -> bool {
    matches!(p.transport, TransportHeader::Tcp(_)) && p.payload_bytes == 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for its slot (`due`).
    Ready,
    /// Sent in slot `sent`; echo or ACK expected in slot `sent + 1`.
    AwaitEcho { sent: u64 },
}

#[derive(Debug)]
struct Item {
    pkt: Packet,
    /// `None` = broadcast (no echo).
    next_hop: Option<NodeId>,
    due: u64,
    state: State,
    /// The MAC sequence number of its last transmission (matched by link ACKs).
    seq: u16,
    retries: u32,
    /// Its last transmission had no echo/ACK; counted against the link when it is resent.
    pending_miss: bool,
}

/// Phase of the one slot timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Next firing is a slot boundary.
    Boundary,
    /// Next firing is the chosen carrier-sense instant inside slot `.0`.
    Contend(u64),
}

/// What to send in a slot.
#[derive(Clone, Copy, Debug)]
enum Pick {
    Ack(NodeId, u16),
    Item(usize),
}

pub struct FrnMac {
    me: NodeId,
    p: FrnParams,
    mac: MacParams,
    shared: FrnHandle,
    rng: SimRng,
    buf: Vec<Item>,
    /// Link ACKs to send (to, acknowledged seq), oldest first.
    acks: VecDeque<(NodeId, u16)>,
    /// Packets received for relay or delivery recently: uid → (neighbour it came
    /// from, its sequence number there). The same triple again is a resend
    /// whose echo was lost: answered with an ACK, not relayed again.
    seen: BTreeMap<u64, (NodeId, u16)>,
    seen_order: VecDeque<u64>,
    timer: Timer,
    phase: Phase,
    busy: bool,
    tx_active: bool,
    next_seq: u16,
    /// Slot of our last unicast transmission: we listen for its echo in the next.
    listen_slot: Option<u64>,
    /// Whether the last `FrameDone` was about an application packet.
    pub last_done_app: bool,
    pub log: Option<Vec<(SimTime, String)>>,
    pub duplicates: u64,
    /// Frames sent and echoes/ACKs received (tests, docs).
    pub frames_sent: u64,
    pub echoes: u64,
    pub link_acks: u64,
    /// Links this node declared failed (§III-A threshold reached).
    pub links_failed: u64,
    /// The frame and packets its actions hand over ([`MacAction`]).
    outbox: Outbox,
}

const SEEN_KEEP: usize = 256;

impl FrnMac {
    pub fn new(me: NodeId, mac: MacParams, shared: FrnHandle, rng: SimRng) -> Self {
        let p = shared.borrow().params;
        FrnMac {
            me,
            p,
            mac,
            shared,
            rng,
            buf: Vec::new(),
            acks: VecDeque::new(),
            seen: BTreeMap::new(),
            seen_order: VecDeque::new(),
            timer: Timer::new(),
            phase: Phase::Boundary,
            busy: false,
            tx_active: false,
            next_seq: 0,
            listen_slot: None,
            last_done_app: false,
            log: None,
            duplicates: 0,
            frames_sent: 0,
            outbox: Outbox::default(),
            echoes: 0,
            link_acks: 0,
            links_failed: 0,
        }
    }

    fn note(&mut self, now: SimTime, f: impl FnOnce() -> String) {
        if let Some(l) = self.log.as_mut() {
            l.push((now, f()));
        }
    }

    fn slot_of(&self, t: SimTime) -> u64 {
        t.as_nanos() / self.p.slot.as_nanos()
    }
    fn boundary(&self, k: u64) -> SimTime {
        SimTime(k * self.p.slot.as_nanos())
    }

    pub fn for_each_packet(&self, f: &mut dyn FnMut(&Packet)) {
        for i in &self.buf {
            f(&i.pkt);
        }
    }
    pub fn is_free(&self) -> bool {
        (self.buf.len() as u32) < self.p.buffer_pkts
    }
    pub fn slot(&self) -> SimDuration {
        self.p.slot
    }
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// A packet from the interface queue: sent from the next slot on.
    pub fn enqueue(
        &mut self,
        now: SimTime,
        pkt: Packet,
        next_hop: Option<NodeId>,
        out: &mut Vec<MacAction>,
    ) {
        let due = self.slot_of(now) + 1;
        self.note(now, || {
            format!("enqueue uid {} to {:?} due slot {due}", pkt.uid, next_hop)
        });
        self.buf.push(Item {
            pkt,
            next_hop,
            due,
            state: State::Ready,
            seq: 0,
            retries: 0,
            pending_miss: false,
        });
        self.ensure_ticking(now, out);
        if self.is_free() {
            out.push(MacAction::Ready);
        }
    }

    /// Arm the boundary timer for the next slot if nothing is armed.
    fn ensure_ticking(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if !self.timer.is_armed() {
            let at = self.boundary(self.slot_of(now) + 1);
            self.phase = Phase::Boundary;
            let tok = self.timer.arm(at);
            out.push(MacAction::SetTimer(MacTimer::Slot, at, tok));
        }
    }

    /// Whether a slot-timer event carrying `tok` is the live arming (profiling).
    pub fn timer_is_live(&self, tok: TimerToken) -> bool {
        self.timer.is_live(tok)
    }

    pub fn timer(&mut self, now: SimTime, tok: TimerToken, out: &mut Vec<MacAction>) {
        if !self.timer.fire(tok) {
            return;
        }
        match self.phase {
            Phase::Boundary => self.slot_start(now, out),
            Phase::Contend(k) => self.contend(now, k, out),
        }
    }

    fn slot_start(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let k = self.slot_of(now);
        self.expire(now, k, out);
        self.echo_timeouts(now, k, out);
        if let Some(pick) = self.pick(k) {
            let n = self.p.cs_minislots.max(1);
            // Relays and ACKs sense in the first window, everything else in the second.
            let late = self.p.relay_first && !self.is_fresh(pick, k);
            let wait = self.rng.gen_range(0..n) + if late { n } else { 0 };
            let at = now + SimDuration(self.p.minislot.as_nanos() * wait as u64);
            self.phase = Phase::Contend(k);
            let tok = self.timer.arm(at);
            out.push(MacAction::SetTimer(MacTimer::Slot, at, tok));
        } else if !self.buf.is_empty() || !self.acks.is_empty() {
            self.ensure_ticking(now, out);
        }
    }

    /// Lifetime (§II): a packet whose lifetime reached 0 leaves the buffer; the
    /// routing layer drops it with its reason (`tx_failed` sees it expired).
    fn expire(&mut self, now: SimTime, k: u64, out: &mut Vec<MacAction>) {
        let sh = self.shared.borrow();
        let mut i = 0;
        let mut gone = Vec::new();
        while i < self.buf.len() {
            if sh.expired(&self.buf[i].pkt, k) {
                gone.push(self.buf.remove(i));
            } else {
                i += 1;
            }
        }
        drop(sh);
        for it in gone {
            self.note(now, || format!("lifetime over uid {}", it.pkt.uid));
            let nh = it.next_hop.unwrap_or(self.me);
            self.outbox.push_parcel(Rc::new(it.pkt));
            out.push(MacAction::TxFailed(nh));
        }
    }

    /// Unicasts sent in slot k−2 heard no echo/ACK in slot k−1: schedule a
    /// resend after the random interval, and count a failure for the
    /// neighbour — now, or (`miss_at_resend`) when the resend comes due with
    /// still no echo. At the threshold the link is declared failed and every
    /// packet for that neighbour goes back to routing.
    fn echo_timeouts(&mut self, now: SimTime, k: u64, out: &mut Vec<MacAction>) {
        let mut failed_nbrs = Vec::new();
        let mut i = 0;
        while i < self.buf.len() {
            let it = &self.buf[i];
            let nh = it.next_hop;
            if it.pending_miss && it.state == State::Ready && it.due <= k {
                // The resend is due and no late echo came: now it is a failure.
                self.buf[i].pending_miss = false;
                let nh = nh.expect("only unicasts await an echo");
                let uid = self.buf[i].pkt.uid;
                self.count_miss(now, nh, uid, &mut failed_nbrs);
                i += 1;
                continue;
            }
            let State::AwaitEcho { sent } = it.state else {
                i += 1;
                continue;
            };
            if sent + 2 > k {
                i += 1;
                continue;
            }
            let nh = nh.expect("only unicasts await an echo");
            if it.pkt.is_routing() {
                // A probe is sent once: no resend, no count (the link is already failed).
                let it = self.buf.remove(i);
                self.note(now, || {
                    format!("probe to {nh} unanswered (uid {})", it.pkt.uid)
                });
                continue;
            }
            let (lo, hi) = if is_tcp_ack(&it.pkt) {
                self.p.ack_resend_slots
            } else {
                self.p.resend_slots
            };
            let r = self.rng.gen_range(lo..=hi) as u64;
            let it = &mut self.buf[i];
            it.state = State::Ready;
            it.due = sent + 1 + r;
            it.retries += 1;
            let (uid, due) = (it.pkt.uid, it.due);
            self.note(now, || {
                format!("no echo from {nh} for uid {uid}; resend in slot {due}")
            });
            if self.p.miss_at_resend {
                self.buf[i].pending_miss = true;
            } else {
                self.count_miss(now, nh, uid, &mut failed_nbrs);
            }
            i += 1;
        }
        for nh in failed_nbrs {
            self.links_failed += 1;
            self.note(now, || format!("link to {nh} failed"));
            let mut j = 0;
            while j < self.buf.len() {
                if self.buf[j].next_hop == Some(nh) {
                    let it = self.buf.remove(j);
                    if !it.pkt.is_routing() {
                        self.last_done_app = false;
                        out.push(MacAction::FrameDone {
                            retries: it.retries,
                            ok: false,
                        });
                        self.outbox.push_parcel(Rc::new(it.pkt));
                        out.push(MacAction::TxFailed(nh));
                    }
                } else {
                    j += 1;
                }
            }
            if self.is_free() {
                out.push(MacAction::Ready);
            }
        }
    }

    /// One more transmission to `nh` without echo/ACK (§III-A's counter).
    fn count_miss(&mut self, now: SimTime, nh: NodeId, uid: u64, failed_nbrs: &mut Vec<NodeId>) {
        let fails = {
            let mut sh = self.shared.borrow_mut();
            let l = sh.links[self.me.index()].entry(nh).or_default();
            l.fails += 1;
            if self.p.link_failure_threshold > 0
                && l.fails >= self.p.link_failure_threshold
                && !l.failed
            {
                l.failed = true;
                failed_nbrs.push(nh);
            }
            l.fails
        };
        self.note(now, || format!("miss {fails} to {nh} (uid {uid})"));
    }

    /// A link ACK, or a packet received last slot to relay now (§II).
    fn is_fresh(&self, pick: Pick, k: u64) -> bool {
        match pick {
            Pick::Ack(..) => true,
            Pick::Item(i) => {
                let it = &self.buf[i];
                it.seq == 0 && it.due == k && it.next_hop.is_some() && it.pkt.ip.src != self.me
            }
        }
    }

    /// What to send in slot k: a link ACK first (due the slot after reception),
    /// then (`relay_first`) a packet received last slot, then the earliest-due
    /// packet. Nothing in the slot after our own unicast: we listen for its
    /// echo (one half-duplex radio).
    fn pick(&self, k: u64) -> Option<Pick> {
        if self.listen_slot == Some(k) {
            return None;
        }
        if let Some(&(to, seq)) = self.acks.front() {
            return Some(Pick::Ack(to, seq));
        }
        let ready = || {
            self.buf
                .iter()
                .enumerate()
                .filter(|(_, it)| it.state == State::Ready && it.due <= k)
        };
        if self.p.relay_first {
            if let Some((i, _)) = ready().find(|&(i, _)| self.is_fresh(Pick::Item(i), k)) {
                return Some(Pick::Item(i));
            }
        }
        ready()
            .min_by_key(|(i, it)| (it.due, *i))
            .map(|(i, _)| Pick::Item(i))
    }

    fn contend(&mut self, now: SimTime, k: u64, out: &mut Vec<MacAction>) {
        if self.busy || self.tx_active {
            // Carrier sensed: give the slot up; try again next slot.
            self.note(now, || format!("slot {k}: carrier busy, defer"));
        } else if let Some(pick) = self.pick(k) {
            match pick {
                Pick::Ack(to, seq) => {
                    self.acks.pop_front();
                    let airtime = self.mac.ctrl_airtime(ACK_BYTES);
                    let f = Frame {
                        kind: FrameKind::Ack,
                        src: self.me,
                        dst: Some(to),
                        nav: SimDuration::ZERO,
                        seq,
                        retry: false,
                        pkt: None,
                        arp: None,
                        airtime,
                    };
                    self.note(now, || format!("slot {k}: ACK seq {seq} to {to}"));
                    self.send(f, out);
                }
                Pick::Item(i) => {
                    // One sequence number per packet at this hop, kept over its
                    // resends (as 802.11's), so the receiver tells a resend whose
                    // echo was lost from the same packet coming round a loop.
                    // 0 marks a packet never sent (no echo to match).
                    if self.buf[i].seq == 0 {
                        self.next_seq = self.next_seq.checked_add(1).unwrap_or(1);
                        self.buf[i].seq = self.next_seq;
                    }
                    let seq = self.buf[i].seq;
                    let bytes = self.buf[i].pkt.size_bytes()
                        + self.mac.data_header_bytes
                        + self.p.header_bytes;
                    let airtime =
                        self.mac.plcp + SimDuration::transmission(bytes, self.mac.data_rate_bps);
                    let it = &mut self.buf[i];
                    let f = Frame {
                        kind: FrameKind::Data,
                        src: self.me,
                        dst: it.next_hop,
                        nav: SimDuration::ZERO,
                        seq,
                        retry: it.retries > 0,
                        pkt: Some(std::rc::Rc::new(it.pkt.clone())),
                        arp: None,
                        airtime,
                    };
                    let (uid, it_to) = (it.pkt.uid, it.next_hop);
                    if it.next_hop.is_some() {
                        it.state = State::AwaitEcho { sent: k };
                        self.listen_slot = Some(k + 1);
                    } else {
                        // Broadcasts (configuration packets) are sent once.
                        self.buf.remove(i);
                        if self.is_free() {
                            out.push(MacAction::Ready);
                        }
                    }
                    let to = it_to;
                    self.note(now, || {
                        format!("slot {k}: send uid {uid} seq {seq} to {to:?}")
                    });
                    self.send(f, out);
                }
            }
        }
        self.phase = Phase::Boundary;
        if !self.buf.is_empty() || !self.acks.is_empty() {
            let at = self.boundary(k + 1);
            let tok = self.timer.arm(at);
            out.push(MacAction::SetTimer(MacTimer::Slot, at, tok));
        }
    }

    fn send(&mut self, f: Frame, out: &mut Vec<MacAction>) {
        self.tx_active = true;
        self.frames_sent += 1;
        self.outbox.put_frame(f);
        out.push(MacAction::Transmit);
    }

    /// The frame of the `Transmit` action just reported.
    pub fn take_frame(&mut self) -> Frame {
        self.outbox.take_frame()
    }

    /// The packet of the oldest `Deliver` or `TxFailed` action not yet carried out.
    pub fn take_parcel(&mut self) -> Rc<Packet> {
        self.outbox.take_parcel()
    }

    pub fn tx_end(&mut self) {
        self.tx_active = false;
    }

    pub fn carrier(&mut self, busy: bool) {
        self.busy = busy;
    }

    /// The link to `m` works: reset its counter; a failed link is restored (§III-A).
    fn link_ok(&mut self, now: SimTime, m: NodeId) {
        let mut sh = self.shared.borrow_mut();
        if let Some(l) = sh.links[self.me.index()].get_mut(&m) {
            let was = l.failed;
            *l = LinkState::default();
            drop(sh);
            if was {
                self.note(now, || format!("link to {m} restored"));
            }
        }
    }

    /// The packet the item for `m` carried got through: remove it.
    fn delivered_item(&mut self, now: SimTime, i: usize, how: &str, out: &mut Vec<MacAction>) {
        let it = self.buf.remove(i);
        let m = it.next_hop.expect("unicast");
        // Handed back to the node it came from (ERDN): a later copy from it is new.
        if self.seen.get(&it.pkt.uid).is_some_and(|s| s.0 == m) {
            self.seen.remove(&it.pkt.uid);
        }
        self.note(now, || format!("{how} from {m} for uid {}", it.pkt.uid));
        self.link_ok(now, m);
        if !it.pkt.is_routing() {
            self.last_done_app = it.pkt.tag.is_some();
            out.push(MacAction::FrameDone {
                retries: it.retries,
                ok: true,
            });
        }
        if self.is_free() {
            out.push(MacAction::Ready);
        }
    }

    fn remember(&mut self, uid: u64, from: NodeId, seq: u16) {
        if self.seen.insert(uid, (from, seq)).is_none() {
            self.seen_order.push_back(uid);
            if self.seen_order.len() > SEEN_KEEP {
                let old = self.seen_order.pop_front().expect("non-empty");
                self.seen.remove(&old);
            }
        }
    }

    /// A frame decoded intact (for us or not: overhearing the next hop's relay is the echo).
    pub fn rx_ok(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        if self.tx_active {
            return;
        }
        let k = self.slot_of(now);
        // Any frame decoded from a neighbour judged failed shows the link works
        // again (§III-A: "traffic received from the neighbour restores it").
        if self.shared.borrow().link_failed(self.me, f.src) {
            self.link_ok(now, f.src);
        }
        match f.kind {
            FrameKind::Ack if f.dst == Some(self.me) => {
                self.link_acks += 1;
                if let Some(i) = self
                    .buf
                    .iter()
                    .position(|it| it.next_hop == Some(f.src) && it.seq == f.seq && it.seq != 0)
                {
                    self.delivered_item(now, i, "ACK", out);
                } else {
                    self.link_ok(now, f.src);
                }
            }
            FrameKind::Data => {
                let Some(pkt) = f.pkt.as_ref() else { return };
                // Echo: the neighbour we sent this packet to relays it (to anyone,
                // or back to us with an ERDN). A late echo still counts. The
                // relayed copy must be the one it had from us (its header's last
                // sender is us): another copy of the same packet passing through
                // that neighbour says nothing about ours.
                let mut echoed = false;
                let from_us = pkt.frn.as_ref().is_none_or(|h| h.prev == Some(self.me));
                if let Some(i) = self.buf.iter().position(|it| {
                    from_us && it.next_hop == Some(f.src) && it.pkt.uid == pkt.uid && it.seq != 0
                }) {
                    self.echoes += 1;
                    echoed = true;
                    self.delivered_item(now, i, "echo", out);
                }
                match f.dst {
                    None => {
                        self.outbox.push_parcel(pkt.clone());
                        out.push(MacAction::Deliver(f.src))
                    }
                    Some(d) if d == self.me => {
                        // Traffic from a neighbour restores a link judged failed (§III-A).
                        self.link_ok(now, f.src);
                        // A duplicate is a resend whose echo we sent but the sender
                        // missed (same sender and sequence number), or a second copy
                        // of a packet we hold and have not yet sent on. A copy we
                        // sent and await the echo of has moved on: one arriving now
                        // came round a loop and is new (treating it as a duplicate
                        // could end both copies, each discarded for the other).
                        // A packet returned to us with an ERDN is its own echo.
                        let dup = !echoed
                            && (self.seen.get(&pkt.uid) == Some(&(f.src, f.seq))
                                || self
                                    .buf
                                    .iter()
                                    .any(|it| it.pkt.uid == pkt.uid && it.seq == 0));
                        let final_hop = pkt.ip.dst == self.me;
                        if dup {
                            // Our relay's echo was lost: acknowledge, do not relay again.
                            self.duplicates += 1;
                            self.acks.push_back((f.src, f.seq));
                            self.note(now, || {
                                format!("duplicate uid {} from {}: ACK", pkt.uid, f.src)
                            });
                        } else {
                            // Our copy, with its own header (as received).
                            let mut mine = Packet::clone(pkt);
                            if final_hop {
                                // The destination relays nothing: it returns a link ACK (§II, Fig. 1c).
                                self.acks.push_back((f.src, f.seq));
                                mine.frn = None;
                            } else if let Some(h) = mine.frn.as_mut() {
                                h.prev = Some(f.src);
                                // A packet returned with an ERDN may wait here (at its
                                // source): acknowledge it at once rather than by echo.
                                if h.erdn {
                                    self.acks.push_back((f.src, f.seq));
                                }
                            }
                            self.remember(pkt.uid, f.src, f.seq);
                            self.note(now, || {
                                format!("rx uid {} from {} in slot {k}", pkt.uid, f.src)
                            });
                            self.outbox.push_parcel(Rc::new(mine));
                            out.push(MacAction::Deliver(f.src));
                        }
                        if !self.acks.is_empty() {
                            self.ensure_ticking(now, out);
                        }
                    }
                    Some(_) => {}
                }
            }
            _ => {}
        }
    }

    /// The node goes off: everything it buffered is lost.
    pub fn switch_off(&mut self) -> Vec<Packet> {
        self.timer.cancel();
        self.acks.clear();
        self.tx_active = false;
        self.listen_slot = None;
        self.buf.drain(..).map(|it| it.pkt).collect()
    }
}

#[cfg(test)]
mod tests;
