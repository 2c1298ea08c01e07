//! Destination-Sequenced Distance-Vector routing: Perkins & Bhagwat,
//! "Highly dynamic Destination-Sequenced Distance-Vector routing (DSDV) for
//! mobile computers", SIGCOMM 1994, with ns-2.35's `dsdv/` (CMU Monarch)
//! choices as defaults (docs/routing.md).
//!
//! Implemented (paper sections):
//! * §3 every node advertises its table to its neighbours: periodic *full
//!   dumps* and *incremental* (triggered) updates between them, each entry
//!   carrying the destination, the metric (hops) and the destination's
//!   sequence number ([`packets`]);
//! * §3 sequence numbers: even ones are made only by the destination (ours
//!   grows by 2 with each full dump); a node that sees a link break gives every
//!   route through it the infinite metric and the odd number just above, and
//!   advertises that at once; route selection — a newer number always wins, the
//!   same number with a lower metric wins ([`table`]);
//! * §3 link breaks: from missed updates (a neighbour silent for
//!   `min_update_periods` periodic intervals, ns-2's default) and, as an option,
//!   from the MAC's retry failures (ns-2 `use_mac_`);
//! * §4 damping with the weighted average settling time: a changed finite route
//!   is advertised only after twice its settling time;
//! * ns-2 additions: at most one triggered update per second, a triggered
//!   update that covers more than a third of the table becomes a full dump, a
//!   node advertised as unreachable sends a full dump at once ("the last word on
//!   yourself"), a neighbour advertising an older broken route is answered at
//!   once, and packets without a usable route wait in a small per-destination
//!   queue ([`queue`]), released through the agent's `recv` as in ns-2;
//! * two ns-2.35 bugs, reproduced by default with a switch each
//!   (`release_through_recv`, `stale_advert_bug`, docs/routing.md).
//!
//! Not implemented: the paper's layer-2/layer-3 address pairs and multiple
//! interfaces (base stations), splitting a full dump over several packets
//! ("network protocol data units"; ns-2 does not either). Deviations are listed
//! in docs/routing.md.
//!
//! Randomness (jitter of updates, start times, periodic intervals) comes from
//! the node's `Component::Routing` stream.

use crate::wire::dsdv as packets;
pub mod queue;
pub mod table;

pub use crate::wire::dsdv::{Advert, DsdvMessage, UpdateKind, INFINITY};
pub use queue::PacketQueue;
pub use table::{seq_newer, Applied, Route, RouteTable};

use super::{RouteView, Routing, RoutingAction, RoutingCtx, RoutingMessage};
use crate::ids::NodeId;
use crate::routing::RoutingCounters;
use crate::sim::{SimDuration, SimRng, SimTime, Timer, TimerToken};
use crate::wire::DropReason;
use crate::wire::TransportNotice;
use crate::wire::{IpHeader, IpProto, Packet, TransportHeader, IP_BROADCAST};
use rand::Rng;
use std::collections::BTreeMap;

crate::params! {
    /// Every DSDV timer and constant. `Default` is ns-2.35's value; each field's
    /// doc gives the paper's where it has one.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Params {
    /// Mean spacing of full dumps: each next one is drawn in
    /// [0.75, 1]·this. ns-2 `perup_` 15 s (its Tcl calls it "as given in the
    /// paper"); the paper leaves it to the implementation.
    pub periodic_update_interval: SimDuration = SimDuration::from_secs_f64(15.0),
        { key: "periodic_update_interval_s", unit: S, allowed: Time { positive: true }, source: "ns-2 dsdv.cc perup_; Perkins & Bhagwat 1994 §3", ns2: "Agent/DSDV perup_" },
    /// A neighbour not heard for this many periodic intervals is lost (ns-2
    /// `min_update_periods_` 3). The paper: "no broadcasts received for a while".
    pub min_update_periods: u32 = 3,
        { key: "min_update_periods", unit: NONE, allowed: Int { lo: 1, hi: 1000 }, source: "ns-2 dsdv.cc min_update_periods_", ns2: "Agent/DSDV min_update_periods_" },
    /// Settling time a new route starts with (ns-2 `wst0_` 6 s, "as specified
    /// by Pravin").
    pub initial_settling_time: SimDuration = SimDuration::from_secs_f64(6.0),
        { key: "initial_settling_time_s", unit: S, allowed: Time { positive: false }, source: "ns-2 dsdv.cc wst0_", ns2: "Agent/DSDV wst0_" },
    /// Weight of the old value in the running settling-time average (ns-2
    /// `alpha_` 0.875 = 7/8; the paper: a weighted average, weight unstated).
    pub settling_alpha: f64 = 0.875,
        { key: "settling_alpha", unit: NONE, allowed: Real { lo: 0.0, hi: 1.0 }, source: "ns-2 dsdv.cc alpha_", ns2: "Agent/DSDV alpha_" },
    /// Least spacing of triggered updates (ns-2 `DSDV_MIN_TUP_PERIOD` 1 s).
    pub min_triggered_update_interval: SimDuration = SimDuration::from_secs_f64(1.0),
        { key: "min_triggered_update_interval_s", unit: S, allowed: Time { positive: false }, source: "ns-2 dsdv.cc DSDV_MIN_TUP_PERIOD" },
    /// Every update waits U(0, this) before it is sent (ns-2
    /// `DSDV_BROADCAST_JITTER` 10 ms).
    pub broadcast_jitter: SimDuration = SimDuration::from_millis(10),
        { key: "broadcast_jitter_ms", unit: MS, allowed: Time { positive: false }, source: "ns-2 dsdv.cc DSDV_BROADCAST_JITTER" },
    /// The first full dump goes out at U(0, this) (ns-2
    /// `DSDV_STARTUP_JITTER` 2 s).
    pub startup_jitter: SimDuration = SimDuration::from_secs_f64(2.0),
        { key: "startup_jitter_s", unit: S, allowed: Time { positive: false }, source: "ns-2 dsdv.cc DSDV_STARTUP_JITTER" },
    /// Treat the MAC's retry failure as a link break (ns-2 `use_mac_`, 0 by
    /// default: "performance suffers with this on"). Off: the packet is
    /// dropped and only missed updates break links.
    pub link_layer_detection: bool = false,
        { key: "link_layer_detection", unit: NONE, allowed: Any, source: "ns-2 dsdv.cc use_mac_", ns2: "Agent/DSDV use_mac_" },
    /// A newer sequence number triggers an update (ns-2
    /// `TRIGGER_UPDATE_ON_FRESH_SEQNUM`, undefined: off; Broch et al.'s
    /// "DSDV-SQ" turns it on). Off: only metric changes trigger.
    pub trigger_on_new_seq: bool = false,
        { key: "trigger_on_new_seq", unit: NONE, allowed: Any, source: "ns-2 dsdv.cc TRIGGER_UPDATE_ON_FRESH_SEQNUM; Broch et al. 1998 DSDV-SQ" },
    /// Packets queued per destination without a route (ns-2
    /// `MAX_QUEUE_LENGTH` 5); the oldest is dropped when full.
    pub queue_pkts: u32 = 5,
        { key: "queue_pkts", unit: PKTS, allowed: Int { lo: 1, hi: u32::MAX as u64 }, source: "ns-2 dsdv.cc MAX_QUEUE_LENGTH" },
    /// Count the IP header of an originated TCP segment twice, as ns-2.35's
    /// agent does (it adds `IP_HDR_LEN` to every packet it originates although
    /// ns-2's TCP already counts IP in its 40-byte header): a 1000-byte segment
    /// is 1060 B on the air, an ACK 60 B. Off: 1040/40 B, as with AODV (whose
    /// ns-2 agent skips TCP) and as on a real network.
    pub tcp_ip_header_twice: bool = true,
        { key: "tcp_ip_header_twice", unit: NONE, allowed: Any, source: "ns-2.35 dsdv.cc forwardPacket (IP_HDR_LEN)" },
    /// Waiting packets go back through the agent's `recv` when a route
    /// releases them, as ns-2.35 does (`processUpdate`, dsdv.cc:797; likewise
    /// a packet handed back by the MAC with `use_mac_`, dsdv.cc:386): an
    /// originated packet gets the IP header counted once more (+20 B on the
    /// air, `cmh->size() += IP_HDR_LEN`), a forwarded one loses one more TTL.
    /// Off: they are sent as they were queued.
    pub release_through_recv: bool = true,
        { key: "release_through_recv", unit: NONE, allowed: Any, source: "ns-2.35 dsdv.cc:797 processUpdate" },
    /// ns-2.35's stale-advertisement bug (`processUpdate`, dsdv.cc:788–801):
    /// a finite route with an *older* sequence number, ignored as a route,
    /// still flushes the destination's waiting packets through `recv` while
    /// the entry is still broken, so each is queued again at once: a forwarded
    /// packet cycles until its TTL runs out (`rtr.TTL`), an originated one —
    /// whose TTL `recv` resets — forever (ns-2 never returns: the DSDV hang;
    /// here it is dropped as `rtr.LOOP`). Then the ignored route is written
    /// into the table, making the older route usable. Off: a stale
    /// advertisement changes nothing (§3).
    pub stale_advert_bug: bool = true,
        { key: "stale_advert_bug", unit: NONE, allowed: Any, source: "ns-2.35 dsdv.cc:788–801 processUpdate" },
    }
    profile(f) = Params::for_fidelity(f);
}

impl Params {
    /// The defaults of a fidelity profile (docs/scenarios.md#fidelity): ns-2's,
    /// or ns-2's without the ns-2.35 artefacts that have a switch.
    pub fn for_fidelity(f: crate::param::Fidelity) -> Self {
        match f {
            crate::param::Fidelity::Ns2 => Params::default(),
            crate::param::Fidelity::Standard => Params {
                release_through_recv: false,
                stale_advert_bug: false,
                tcp_ip_header_twice: false,
                ..Params::default()
            },
        }
    }

    /// How long a neighbour may stay silent: min_update_periods × the periodic
    /// interval (ns-2 schedules the timeout at `min_update_periods_ * perup_`).
    pub fn neighbour_timeout(&self) -> SimDuration {
        SimDuration(self.periodic_update_interval.0 * self.min_update_periods as u64)
    }
}

// Timer keys: kind in the high 32 bits, a node id in the low ones.
const KEY_PERIODIC: u64 = 0;
const KEY_TRIGGER: u64 = 1 << 32;
const KEY_NEIGHBOUR: u64 = 2 << 32;

/// One node's DSDV instance.
pub struct Dsdv {
    me: NodeId,
    p: Params,
    rng: SimRng,
    /// Own sequence number: even, +2 per full dump (§3). As in ns-2
    /// (`startUp`), the own entry starts with 0 and the first full dump
    /// advertises 4.
    seq: u32,
    table: RouteTable,
    queue: PacketQueue,
    periodic_timer: Timer,
    trigger_timer: Timer,
    /// When the last update (full or triggered) went out (ns-2 `lasttup_`).
    last_update: Option<SimTime>,
    /// Per neighbour: the missed-updates timeout.
    neighbours: BTreeMap<NodeId, Timer>,
    counters: RoutingCounters,
}

impl Dsdv {
    /// DSDV for node `me`, drawing jitter from `rng` (stream `Component::Routing`).
    pub fn new(me: NodeId, p: Params, rng: SimRng) -> Self {
        let counters = RoutingCounters::with_kinds(&packets::KINDS);
        Dsdv {
            me,
            p,
            rng,
            seq: 0,
            table: RouteTable::new(),
            queue: PacketQueue::new(p.queue_pkts),
            periodic_timer: Timer::new(),
            trigger_timer: Timer::new(),
            last_update: None,
            neighbours: BTreeMap::new(),
            counters,
        }
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    pub fn table(&self) -> &RouteTable {
        &self.table
    }

    /// This node's own sequence number.
    pub fn seq(&self) -> u32 {
        self.seq
    }

    /// Packets waiting for a route.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    // ---- updates ---------------------------------------------------------------

    fn set_timer(ctx: &mut RoutingCtx, timer: &mut Timer, at: SimTime, key: u64) {
        let token = timer.arm(at);
        ctx.actions.push(RoutingAction::SetTimer { at, key, token });
    }

    fn jitter(&mut self, max: SimDuration) -> SimDuration {
        if max.0 == 0 {
            SimDuration::ZERO
        } else {
            SimDuration(self.rng.gen_range(0..max.0))
        }
    }

    /// Next full dump in [0.75, 1]·periodic_update_interval (ns-2:
    /// `perup_ * (0.75 + jitter(0.25))`).
    fn arm_periodic(&mut self, ctx: &mut RoutingCtx) {
        let f = 0.75 + self.rng.gen_range(0.0..0.25);
        let at =
            ctx.now + SimDuration::from_secs_f64(self.p.periodic_update_interval.as_secs_f64() * f);
        Self::set_timer(ctx, &mut self.periodic_timer, at, KEY_PERIODIC);
    }

    /// Build and broadcast an update (full dump if `full`, or if a triggered
    /// one covers much of the table). Returns whether a packet went out and
    /// whether it was a full dump.
    fn send_update(&mut self, ctx: &mut RoutingCtx, full: bool) -> (bool, bool) {
        let now = ctx.now;
        let full = full || self.table.promote_to_full(now);
        if full {
            // §3: the destination's own number, even, new with each full dump.
            self.seq = self.seq.wrapping_add(2);
            self.table.set_own(now, self.me, self.seq);
        }
        let entries = self.table.collect(now, self.me, full);
        if entries.is_empty() {
            return (false, full);
        }
        let kind = if full {
            UpdateKind::FullDump
        } else {
            UpdateKind::Incremental
        };
        let msg = DsdvMessage { kind, entries };
        let pkt = Packet::control(
            ctx.new_uid(),
            IpHeader::new(self.me, IP_BROADCAST, 1, IpProto::Manet),
            RoutingMessage::Dsdv(msg),
        );
        self.counters.on_send(
            if full { "FULL_DUMP" } else { "INCREMENTAL" },
            pkt.size_bytes(),
            false,
        );
        let delay = self.jitter(self.p.broadcast_jitter);
        ctx.actions.push(RoutingAction::Broadcast { pkt, delay });
        (true, full)
    }

    fn periodic(&mut self, ctx: &mut RoutingCtx) {
        self.send_update(ctx, true);
        self.arm_periodic(ctx);
        // A full dump takes the place of any triggered update due now.
        self.last_update = Some(ctx.now);
    }

    /// Arm the triggered-update timer for the earliest request, if any.
    fn arm_trigger(&mut self, ctx: &mut RoutingCtx) {
        match self.table.next_trigger() {
            Some((at, _)) => {
                let at = at.max(ctx.now);
                if self.trigger_timer.expires() != Some(at) {
                    Self::set_timer(ctx, &mut self.trigger_timer, at, KEY_TRIGGER);
                }
            }
            None => self.trigger_timer.cancel(),
        }
    }

    /// A triggered-update request is due (ns-2 `DSDVTriggerHandler`): send an
    /// incremental update unless one went out less than
    /// `min_triggered_update_interval` ago, in which case every request before
    /// then is folded into one at that time.
    fn trigger_due(&mut self, ctx: &mut RoutingCtx) {
        let now = ctx.now;
        if let Some((at, dst)) = self.table.next_trigger().filter(|&(at, _)| at <= now) {
            let next_possible = self
                .last_update
                .map(|t| t + self.p.min_triggered_update_interval);
            match next_possible {
                Some(np) if now < np => {
                    self.table.cancel_triggers_before(np);
                    self.table
                        .get_mut(dst)
                        .expect("a trigger belongs to an entry")
                        .trigger_at = Some(np);
                }
                _ => {
                    let (sent, full) = self.send_update(ctx, false);
                    if sent {
                        if full {
                            // A full dump went out early: the next one is a period away.
                            self.arm_periodic(ctx);
                        }
                        self.last_update = Some(now);
                    }
                    let r = self
                        .table
                        .get_mut(dst)
                        .expect("a trigger belongs to an entry");
                    if r.trigger_at == Some(at) {
                        r.trigger_at = None;
                    }
                }
            }
        }
        self.arm_trigger(ctx);
    }

    // ---- routes ----------------------------------------------------------------

    /// Tell the transport layer about a route that went down or came back
    /// (ELFN / ERDN, ERSN): only destinations this node knew before.
    fn notice(ctx: &mut RoutingCtx, dst: NodeId, before: Option<bool>, after: bool) {
        match (before, after) {
            (Some(true), false) => ctx
                .actions
                .push(RoutingAction::Notify(TransportNotice::RouteFailed { dst })),
            (Some(false), true) => {
                ctx.actions
                    .push(RoutingAction::Notify(TransportNotice::RouteReestablished {
                        dst,
                    }))
            }
            _ => {}
        }
    }

    /// Send the packets waiting for `dst`, now that it has a usable route.
    fn release(&mut self, ctx: &mut RoutingCtx, dst: NodeId) {
        let Some(next_hop) = self.table.next_hop(dst) else {
            return;
        };
        for pkt in self.queue.take_for(dst) {
            if let Some(pkt) = self.recv_again(ctx, pkt) {
                ctx.actions.push(RoutingAction::Forward { pkt, next_hop });
            }
        }
    }

    /// What ns-2's `recv` does to a packet that comes back into the agent
    /// (dsdv.cc:1008–1034), with `release_through_recv`: one this node
    /// originated (`num_forwards == 0`) gets `IP_HDR_LEN` added again, a
    /// forwarded one loses a TTL and is dropped at 0. None: dropped.
    fn recv_again(&self, ctx: &mut RoutingCtx, mut pkt: Packet) -> Option<Packet> {
        if !self.p.release_through_recv {
            return Some(pkt);
        }
        if pkt.ip.src == self.me {
            pkt.ip.extra_bytes = pkt
                .ip
                .extra_bytes
                .saturating_add(crate::wire::IP_HEADER_BYTES as u8);
        } else {
            if pkt.ip.hop() == 0 {
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::TtlExpired,
                });
                return None;
            }
        }
        Some(pkt)
    }

    /// ns-2's stale-advertisement bug (`stale_advert_bug`, dsdv.cc:788–801):
    /// `dst`'s waiting packets go through `recv` and straight back into the
    /// queue of the still broken entry, round after round: forwarded packets
    /// leave only when their TTL reaches 0 (lowest TTL first), originated ones
    /// (TTL reset to 32 each round) never — ns-2 hangs there; we drop them as
    /// a loop. Then the ignored route is written into the table.
    fn flush_stale(&mut self, ctx: &mut RoutingCtx, from: NodeId, adv: Advert) {
        let mut pkts: Vec<Packet> = self.queue.take_for(adv.dst).into_iter().collect();
        // Stable: equal TTLs expire in queue order, as the rounds go.
        pkts.sort_by_key(|p| {
            if p.ip.src == self.me {
                u16::MAX
            } else {
                u16::from(p.ip.ttl)
            }
        });
        for pkt in pkts {
            let reason = if pkt.ip.src == self.me {
                DropReason::RouteLoop
            } else {
                DropReason::TtlExpired
            };
            ctx.actions.push(RoutingAction::Drop { pkt, reason });
        }
        self.table.write_stale(ctx.now, from, adv, &self.p);
    }

    /// The link to `nb` is gone: advertise every route through it as broken.
    fn link_broken(&mut self, ctx: &mut RoutingCtx, nb: NodeId) {
        let cut = self.table.break_via(ctx.now, self.me, nb);
        if !cut.is_empty() {
            self.counters.route_breaks += 1;
        }
        for dst in cut {
            Self::notice(ctx, dst, Some(true), false);
        }
        self.arm_trigger(ctx);
    }

    fn recv_update(&mut self, ctx: &mut RoutingCtx, msg: DsdvMessage, from: NodeId) {
        let now = ctx.now;
        let mut own_broken = false;
        for adv in msg.entries {
            let before = self.table.get(adv.dst).map(Route::usable);
            match self.table.apply(now, self.me, from, adv, &self.p) {
                Applied::Own { broken } => own_broken |= broken,
                Applied::Ignored => {}
                Applied::Stale => {
                    if self.p.stale_advert_bug
                        && before == Some(false)
                        && self.queue.has_for(adv.dst)
                    {
                        self.flush_stale(ctx, from, adv);
                        Self::notice(ctx, adv.dst, before, true);
                    }
                }
                _ => {
                    let after = self.table.get(adv.dst).is_some_and(Route::usable);
                    Self::notice(ctx, adv.dst, before, after);
                    if after && self.queue.has_for(adv.dst) {
                        self.release(ctx, adv.dst);
                    }
                }
            }
        }
        if own_broken {
            // Someone says we are unreachable: a full dump now, with a fresh
            // even number, settles it (ns-2's CMU fix to a problem the paper notes).
            Self::set_timer(ctx, &mut self.periodic_timer, now, KEY_PERIODIC);
        }
        // Any update shows the neighbour is there: restart its timeout. One
        // heard for the first time through an update that does not list it
        // gets a route of one hop that is never advertised (ns-2).
        if self.table.get(from).is_none() {
            self.table.insert_placeholder(
                now,
                from,
                from,
                1,
                self.p.initial_settling_time.as_secs_f64(),
            );
            if self.queue.has_for(from) {
                self.release(ctx, from);
            }
        }
        let at = now + self.p.neighbour_timeout();
        let timer = self.neighbours.entry(from).or_default();
        Self::set_timer(ctx, timer, at, KEY_NEIGHBOUR | from.0 as u64);
        self.arm_trigger(ctx);
    }
}

impl Routing for Dsdv {
    fn name(&self) -> &'static str {
        "dsdv"
    }

    fn start(&mut self, ctx: &mut RoutingCtx) {
        // ns-2 `startUp`: own entry with number 0, `seqno_` then 2.
        self.table.set_own(ctx.now, self.me, self.seq);
        self.seq = self.seq.wrapping_add(2);
        let at = ctx.now + self.jitter(self.p.startup_jitter);
        Self::set_timer(ctx, &mut self.periodic_timer, at, KEY_PERIODIC);
    }

    fn route(&mut self, ctx: &mut RoutingCtx, pkt: Packet) {
        // ns-2: a node that receives a packet it originated has a loop.
        if pkt.ip.src == self.me && pkt.ip.forwards() > 0 {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::RouteLoop,
            });
            return;
        }
        let mut pkt = pkt;
        // Marked once, when the packet first enters (a packet the MAC handed
        // back already carries its extra bytes: see `recv_again`).
        if pkt.ip.src == self.me && pkt.ip.extra_bytes == 0 {
            crate::routing::mark_tcp_ip_twice(&mut pkt, self.p.tcp_ip_header_twice);
        }
        let dst = pkt.ip.dst;
        if let Some(next_hop) = self.table.next_hop(dst) {
            ctx.actions.push(RoutingAction::Forward { pkt, next_hop });
            return;
        }
        // No usable route: wait for one (ns-2 queues originated and forwarded
        // packets alike). A destination never heard of gets a placeholder entry,
        // so that its first route is advertised without damping.
        self.table.insert_placeholder(
            ctx.now,
            dst,
            dst,
            INFINITY,
            self.p.initial_settling_time.as_secs_f64(),
        );
        if let Some(old) = self.queue.push(pkt) {
            ctx.actions.push(RoutingAction::Drop {
                pkt: old,
                reason: DropReason::SendBufferFull,
            });
        }
    }

    fn tx_failed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId) {
        // ns-2 `lost_link`: without `use_mac_` the packet is simply dropped and
        // the link's fate is left to the missed-updates timeout.
        if !self.p.link_layer_detection || self.table.get(next_hop).is_none() {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::MacCallback,
            });
            return;
        }
        if pkt.is_routing() {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::RetryLimit,
            });
            return;
        }
        if let Some(t) = self.neighbours.get_mut(&next_hop) {
            t.cancel();
        }
        self.link_broken(ctx, next_hop);
        // The packet goes back to routing, which queues it until a new route
        // arrives (ns-2 `recv(p)`). Packets still in the interface queue for
        // the lost neighbour stay there and fail in turn, as in ns-2.
        if let Some(pkt) = self.recv_again(ctx, pkt) {
            self.route(ctx, pkt);
        }
    }

    fn recv_control(&mut self, ctx: &mut RoutingCtx, pkt: Packet, from: NodeId) {
        let msg = match pkt.transport {
            TransportHeader::Routing(RoutingMessage::Dsdv(m)) => m,
            _ => {
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::NoRoute,
                });
                return;
            }
        };
        self.counters.ctrl_received_pkts += 1;
        *self
            .counters
            .received_by_type
            .entry(msg.kind())
            .or_default() += 1;
        self.recv_update(ctx, msg, from);
    }

    fn timer(&mut self, ctx: &mut RoutingCtx, key: u64, token: TimerToken) {
        match key & !0xffff_ffff {
            KEY_PERIODIC => {
                if self.periodic_timer.fire(token) {
                    self.periodic(ctx);
                }
            }
            KEY_TRIGGER => {
                if self.trigger_timer.fire(token) {
                    self.trigger_due(ctx);
                }
            }
            KEY_NEIGHBOUR => {
                let nb = NodeId(key as u32);
                if self.neighbours.get_mut(&nb).is_some_and(|t| t.fire(token)) {
                    self.link_broken(ctx, nb);
                }
            }
            _ => unreachable!("unknown DSDV timer key {key:#x}"),
        }
    }

    fn counters(&self) -> Option<&RoutingCounters> {
        Some(&self.counters)
    }

    fn buffered(&self, f: &mut dyn FnMut(&Packet)) {
        self.queue.iter().for_each(f);
    }

    fn route_entry(&self, dst: NodeId) -> Option<RouteView> {
        self.table.get(dst).map(|r| RouteView {
            next_hop: r.next_hop,
            hops: r.usable().then_some(r.metric as u32),
            seq: Some(r.seq),
        })
    }
}

#[cfg(test)]
mod tests;
