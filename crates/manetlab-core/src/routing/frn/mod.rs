//! FRN's table-driven multi-route routing (paper 003, Sugano & Murata, §II and
//! §III-A; docs/frn.md), the network-layer half of FRN (`mac/frn` is the other).
//!
//! * Every node broadcasts a configuration packet periodically (and shortly
//!   after its table changes) with its hop distance to every destination and
//!   its forward next hops. From its neighbours' packets a node knows, per
//!   destination, every neighbour's distance, and classifies neighbours as
//!   *forward* (one hop closer: shortest routes), *sideward* (as close as we
//!   are: one hop longer) and *backward* (one farther: a detour), Fig. 2.
//! * Forwarding tries forward, then sideward, then backward routes, skipping
//!   neighbours whose link the MAC declared failed (§III-A) and the neighbour
//!   the packet came from (no ping-pong). A backward route through m names a
//!   checkpoint in the header — a forward hop of m other than us — which m
//!   must send the packet to first, so m does not bounce it back (§II).
//! * With no usable route a node returns the packet to the node it came from
//!   with an ERDN (§III-A, Fig. 4); that node avoids us for that destination for
//!   `erdn_hold` and tries its own alternatives, or passes the ERDN on. At the
//!   source the packet waits (lifetime permitting) and TCP is told
//!   (`TransportNotice::RouteFailed`, ELFN/ERDN; `RouteReestablished` = ERSN
//!   when a route is usable again).
//! * Probes go every `probe_interval` to neighbours whose link failed; the
//!   MAC restores the link on the probe's ACK or on traffic from the neighbour.

use crate::ids::NodeId;
use crate::mac::frn::FrnHandle;
use crate::routing::RoutingCounters;
use crate::routing::{RouteView, Routing, RoutingAction, RoutingCtx, RoutingMessage};
use crate::sim::{SimDuration, SimRng, SimTime, Timer, TimerToken};
pub use crate::wire::frn::{FrnHeader, FrnMessage};
use crate::wire::DropReason;
use crate::wire::TransportNotice;
use crate::wire::{IpHeader, IpProto, Packet, TransportHeader, DEFAULT_TTL, IP_BROADCAST};
use rand::Rng;
use std::collections::{BTreeMap, BTreeSet};

#[cfg(test)]
mod tests;

/// At most this many forward next hops per destination in a configuration packet.
pub const MAX_ADVERTISED_HOPS: usize = 3;

/// FRN routing parameters (`[routing.frn]`; docs/frn.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Configuration packet period (the table update cycle of §I/§II).
    pub config_interval: SimDuration,
    /// Delay before a triggered configuration packet after a table change.
    pub trigger_delay: SimDuration,
    /// A neighbour unheard for this many periods leaves the table.
    pub allowed_config_loss: u32,
    /// Probe period towards neighbours whose link failed (§III-A "suitable intervals").
    pub probe_interval: SimDuration,
    /// How long a node avoids a neighbour for a destination after its ERDN.
    pub erdn_hold: SimDuration,
    /// Use sideward and backward routes (false: forward routes only).
    pub multi_route: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            config_interval: SimDuration::from_secs_f64(15.0),
            trigger_delay: SimDuration::from_millis(50),
            allowed_config_loss: 3,
            probe_interval: SimDuration::from_millis(500),
            erdn_hold: SimDuration::from_secs_f64(5.0),
            multi_route: true,
        }
    }
}

/// Route classes (Fig. 2), in the order forwarding tries them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RouteClass {
    Forward,
    Sideward,
    Backward,
}

/// What a neighbour last advertised.
#[derive(Clone, Debug, Default)]
struct Neighbour {
    heard: SimTime,
    /// destination → (hops, its forward next hops).
    table: BTreeMap<NodeId, (u8, Vec<NodeId>)>,
}

const TIMER_CONFIG: u64 = 0;
const TIMER_PROBE: u64 = 1;
const TIMER_TRIGGER: u64 = 2;

pub struct FrnRouting {
    me: NodeId,
    p: Params,
    shared: FrnHandle,
    rng: SimRng,
    nbrs: BTreeMap<NodeId, Neighbour>,
    /// Our advertised table: destination → (hops, forward next hops).
    table: BTreeMap<NodeId, (u8, Vec<NodeId>)>,
    /// (destination, neighbour) avoided until the time, after an ERDN from it.
    blocked: BTreeMap<(NodeId, NodeId), SimTime>,
    /// Packets at their source with no usable route (waiting, lifetime permitting).
    parked: Vec<Packet>,
    /// Destinations TCP was told are unreachable.
    down: BTreeSet<NodeId>,
    /// Neighbours we returned packets to with an ERDN (told by ERSN when a link returns).
    erdn_to: BTreeSet<NodeId>,
    /// Neighbours whose link was failed at the last probe tick.
    was_failed: BTreeSet<NodeId>,
    config_timer: Timer,
    probe_timer: Timer,
    trigger_timer: Timer,
    counters: RoutingCounters,
    /// Routing decisions by class, ERDNs sent (tests, docs).
    pub by_class: [u64; 3],
    pub erdns: u64,
}

impl FrnRouting {
    pub fn new(me: NodeId, p: Params, shared: FrnHandle, rng: SimRng) -> Self {
        FrnRouting {
            me,
            p,
            shared,
            rng,
            nbrs: BTreeMap::new(),
            table: BTreeMap::new(),
            blocked: BTreeMap::new(),
            parked: Vec::new(),
            down: BTreeSet::new(),
            erdn_to: BTreeSet::new(),
            was_failed: BTreeSet::new(),
            config_timer: Timer::new(),
            probe_timer: Timer::new(),
            trigger_timer: Timer::new(),
            // Every kind in the results, also when none was sent (ERDNs without detection).
            counters: RoutingCounters::with_kinds(&["CONFIG", "PROBE", "ERSN", "ERDN"]),
            by_class: [0; 3],
            erdns: 0,
        }
    }

    fn arm(ctx: &mut RoutingCtx, t: &mut Timer, at: SimTime, key: u64) {
        let token = t.arm(at);
        ctx.actions.push(RoutingAction::SetTimer { at, key, token });
    }

    /// Hops from `m` to `dst` as `m` advertised (0 for `m` itself).
    fn nbr_hops(&self, m: NodeId, dst: NodeId) -> Option<u8> {
        if m == dst {
            return Some(0);
        }
        self.nbrs.get(&m)?.table.get(&dst).map(|e| e.0)
    }

    /// Recompute our table from the neighbours' (distance vector, shortest hops).
    fn recompute(&mut self) -> bool {
        let mut t: BTreeMap<NodeId, (u8, Vec<NodeId>)> = BTreeMap::new();
        let mut dsts: BTreeSet<NodeId> = self.nbrs.keys().copied().collect();
        for n in self.nbrs.values() {
            dsts.extend(n.table.keys().copied());
        }
        dsts.remove(&self.me);
        for d in dsts {
            // Split horizon: a neighbour whose only way to `d` is through us does not count.
            let via_us_only = |m: &NodeId| {
                self.nbrs[m]
                    .table
                    .get(&d)
                    .is_some_and(|e| e.1.len() == 1 && e.1[0] == self.me)
            };
            let best = self
                .nbrs
                .keys()
                .filter(|m| !via_us_only(m))
                .filter_map(|&m| self.nbr_hops(m, d).map(|h| (h, m)))
                .min();
            let Some((h, _)) = best else { continue };
            if h >= 254 {
                continue;
            }
            let hops: Vec<NodeId> = self
                .nbrs
                .keys()
                .copied()
                .filter(|&m| self.nbr_hops(m, d) == Some(h) && !via_us_only(&m))
                .take(MAX_ADVERTISED_HOPS)
                .collect();
            t.insert(d, (h + 1, hops));
        }
        let changed = t != self.table;
        self.table = t;
        changed
    }

    /// The neighbours usable towards `dst`, best first: (class, neighbour, checkpoint).
    pub fn candidates(
        &self,
        dst: NodeId,
        prev: Option<NodeId>,
        now: SimTime,
    ) -> Vec<(RouteClass, NodeId, Option<NodeId>)> {
        self.candidates_avoiding(dst, prev, &[], now)
    }

    /// [`FrnRouting::candidates`] without the nodes the packet already passed
    /// (`trail`): a detour never leads back into its own path (no loops).
    fn candidates_avoiding(
        &self,
        dst: NodeId,
        prev: Option<NodeId>,
        trail: &[NodeId],
        now: SimTime,
    ) -> Vec<(RouteClass, NodeId, Option<NodeId>)> {
        let Some(&(mine, _)) = self.table.get(&dst) else {
            return Vec::new();
        };
        let sh = self.shared.borrow();
        let mut out = Vec::new();
        for &m in self.nbrs.keys() {
            if sh.link_failed(self.me, m)
                || self.blocked.get(&(dst, m)).is_some_and(|&t| t > now)
                || trail.contains(&m)
            {
                continue;
            }
            let Some(h) = self.nbr_hops(m, dst) else {
                continue;
            };
            if h + 1 == mine {
                out.push((RouteClass::Forward, m, None));
            } else if !self.p.multi_route || Some(m) == prev {
                continue;
            } else if h == mine {
                out.push((RouteClass::Sideward, m, None));
            } else if h == mine + 1 {
                // Checkpoint: a forward hop of m's that is not us (Fig. 2's G).
                let cp = self.nbrs[&m].table.get(&dst).and_then(|e| {
                    e.1.iter()
                        .copied()
                        .find(|&g| g != self.me && Some(g) != prev)
                });
                if let Some(g) = cp {
                    out.push((RouteClass::Backward, m, Some(g)));
                }
            }
        }
        out.sort_by_key(|c| c.0);
        out
    }

    /// The copy's own header, or a new one at the source (lifetime starts now).
    fn take_header(&self, ctx: &RoutingCtx, pkt: &mut Packet) -> FrnHeader {
        match pkt.frn.take() {
            Some(h) => *h,
            None => {
                let sh = self.shared.borrow();
                FrnHeader {
                    expires_slot: sh.slot_of(ctx.now) + sh.params.lifetime_slots as u64,
                    ..FrnHeader::default()
                }
            }
        }
    }

    /// Route a data packet (originated, relayed, returned by ERDN, or given back by the MAC).
    fn forward(&mut self, ctx: &mut RoutingCtx, mut pkt: Packet) {
        let now = ctx.now;
        let mut h = self.take_header(ctx, &mut pkt);
        let slot = self.shared.borrow().slot_of(now);
        if h.expires_slot <= slot {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::LifetimeExpired,
            });
            return;
        }
        let dst = pkt.ip.dst;
        if h.erdn {
            // An ERDN came back from `prev`: avoid it for this destination and
            // take ourselves off the trail (we forwarded it there).
            h.erdn = false;
            if let Some(x) = h.prev {
                self.blocked.insert((dst, x), now + self.p.erdn_hold);
            }
            if h.trail.last() == Some(&self.me) {
                h.trail.pop();
            }
        }
        if h.checkpoint == Some(self.me) {
            h.checkpoint = None;
        }
        // A packet with a checkpoint goes to the checkpoint first (§II).
        if let Some(cp) = h.checkpoint {
            if self.nbrs.contains_key(&cp) && !self.shared.borrow().link_failed(self.me, cp) {
                h.trail.push(self.me);
                pkt.frn = Some(Box::new(h));
                ctx.actions
                    .push(RoutingAction::Forward { pkt, next_hop: cp });
                return;
            }
            h.checkpoint = None;
        }
        let prev = h.prev;
        let cands = self.candidates_avoiding(dst, prev, &h.trail, now);
        if let Some(&(class, m, cp)) = cands.first() {
            self.by_class[class as usize] += 1;
            h.checkpoint = cp;
            h.trail.push(self.me);
            pkt.frn = Some(Box::new(h));
            ctx.actions
                .push(RoutingAction::Forward { pkt, next_hop: m });
            return;
        }
        // No route here: ERDN back towards the source (Fig. 4), or wait at the source.
        if let Some(&up) = h.trail.last() {
            if up != self.me
                && self.nbrs.contains_key(&up)
                && !self.shared.borrow().link_failed(self.me, up)
            {
                self.erdns += 1;
                self.erdn_to.insert(up);
                *self.counters.sent_by_type.entry("ERDN").or_default() += 1;
                h.erdn = true;
                pkt.frn = Some(Box::new(h));
                ctx.actions
                    .push(RoutingAction::Forward { pkt, next_hop: up });
                return;
            }
        }
        pkt.frn = Some(Box::new(h));
        if pkt.ip.src == self.me {
            if self.parked.iter().any(|p| p.uid == pkt.uid) {
                // A second copy came back (copies multiply when an echo is lost
                // and the sender detours): one waits, this one ends here.
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::RouteLoop,
                });
                return;
            }
            if self.down.insert(dst) {
                ctx.actions
                    .push(RoutingAction::Notify(TransportNotice::RouteFailed { dst }));
            }
            self.parked.push(pkt);
        } else {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::NoRoute,
            });
        }
    }

    /// Retry parked packets; drop the expired ones; tell TCP of routes back (ERSN).
    fn release_parked(&mut self, ctx: &mut RoutingCtx) {
        let slot = self.shared.borrow().slot_of(ctx.now);
        for pkt in std::mem::take(&mut self.parked) {
            if self.shared.borrow().expired(&pkt, slot) {
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::LifetimeExpired,
                });
            } else if self.candidates(pkt.ip.dst, None, ctx.now).is_empty() {
                self.parked.push(pkt);
            } else {
                self.forward(ctx, pkt);
            }
        }
        let back: Vec<NodeId> = self
            .down
            .iter()
            .copied()
            .filter(|&d| !self.candidates(d, None, ctx.now).is_empty())
            .collect();
        for dst in back {
            self.down.remove(&dst);
            ctx.actions
                .push(RoutingAction::Notify(TransportNotice::RouteReestablished {
                    dst,
                }));
        }
    }

    fn send_config(&mut self, ctx: &mut RoutingCtx) {
        let entries = self
            .table
            .iter()
            .map(|(&d, (h, hops))| (d, *h, hops.clone()))
            .collect();
        let msg = FrnMessage::Config { entries };
        let uid = ctx.new_uid();
        let pkt = control(uid, self.me, IP_BROADCAST, msg);
        self.counters.ctrl_originated_pkts += 1;
        self.counters.ctrl_originated_bytes += pkt.size_bytes() as u64;
        *self.counters.sent_by_type.entry("CONFIG").or_default() += 1;
        ctx.actions.push(RoutingAction::Broadcast {
            pkt,
            delay: SimDuration::ZERO,
        });
    }

    /// ERSN to every neighbour we returned packets to with an ERDN.
    fn send_ersn(&mut self, ctx: &mut RoutingCtx) {
        for up in std::mem::take(&mut self.erdn_to) {
            let uid = ctx.new_uid();
            *self.counters.sent_by_type.entry("ERSN").or_default() += 1;
            self.counters.ctrl_originated_pkts += 1;
            ctx.actions.push(RoutingAction::Forward {
                pkt: control(uid, self.me, up, FrnMessage::Ersn),
                next_hop: up,
            });
        }
    }

    fn trigger(&mut self, ctx: &mut RoutingCtx) {
        if !self.trigger_timer.is_armed() {
            let jitter = SimDuration(self.rng.gen_range(0..=self.p.trigger_delay.as_nanos()));
            Self::arm(
                ctx,
                &mut self.trigger_timer,
                ctx.now + self.p.trigger_delay + jitter,
                TIMER_TRIGGER,
            );
        }
    }

    /// The route class this node would use now towards `dst` (tests, inspection).
    pub fn best_class(&self, dst: NodeId, now: SimTime) -> Option<(RouteClass, NodeId)> {
        self.candidates(dst, None, now).first().map(|c| (c.0, c.1))
    }
}

fn control(uid: u64, src: NodeId, dst: NodeId, msg: FrnMessage) -> Packet {
    Packet::control(
        uid,
        IpHeader::new(
            src,
            dst,
            if dst == IP_BROADCAST { 1 } else { DEFAULT_TTL },
            IpProto::Manet,
        ),
        RoutingMessage::Frn(msg),
    )
}

impl Routing for FrnRouting {
    fn name(&self) -> &'static str {
        "frn"
    }

    fn start(&mut self, ctx: &mut RoutingCtx) {
        // First configuration packets spread over 1 s so nodes do not collide.
        let first = ctx.now + SimDuration(self.rng.gen_range(0..1_000_000_000));
        Self::arm(ctx, &mut self.config_timer, first, TIMER_CONFIG);
        Self::arm(
            ctx,
            &mut self.probe_timer,
            ctx.now + self.p.probe_interval,
            TIMER_PROBE,
        );
    }

    fn route(&mut self, ctx: &mut RoutingCtx, pkt: Packet) {
        self.forward(ctx, pkt);
    }

    /// The MAC gave the packet back: the link to `next_hop` was declared failed,
    /// or the packet's lifetime ran out while it waited.
    fn tx_failed(&mut self, ctx: &mut RoutingCtx, mut pkt: Packet, next_hop: NodeId) {
        if next_hop != self.me {
            self.counters.route_breaks += 1;
        }
        // Not back to where it came from unless that is all there is (forward() decides).
        if let Some(h) = pkt.frn.as_mut() {
            if h.trail.last() == Some(&self.me) {
                h.trail.pop();
            }
            if h.checkpoint == Some(next_hop) {
                h.checkpoint = None;
            }
        }
        self.forward(ctx, pkt);
    }

    fn recv_control(&mut self, ctx: &mut RoutingCtx, pkt: Packet, from: NodeId) {
        self.counters.ctrl_received_pkts += 1;
        let TransportHeader::Routing(RoutingMessage::Frn(msg)) = pkt.transport else {
            return;
        };
        *self
            .counters
            .received_by_type
            .entry(msg.name())
            .or_default() += 1;
        match msg {
            FrnMessage::Config { entries } => {
                let table = entries
                    .into_iter()
                    .map(|(d, h, hops)| (d, (h, hops)))
                    .collect();
                self.nbrs.insert(
                    from,
                    Neighbour {
                        heard: ctx.now,
                        table,
                    },
                );
                if self.recompute() {
                    self.trigger(ctx);
                }
                if !self.parked.is_empty() || !self.down.is_empty() {
                    self.release_parked(ctx);
                }
            }
            FrnMessage::Probe => {}
            FrnMessage::Ersn => {
                // The neighbour has routes again: stop avoiding it, retry, pass it on.
                self.blocked.retain(|&(_, m), _| m != from);
                self.release_parked(ctx);
                self.send_ersn(ctx);
            }
        }
    }

    fn timer(&mut self, ctx: &mut RoutingCtx, key: u64, token: TimerToken) {
        match key {
            TIMER_CONFIG if self.config_timer.fire(token) => {
                let lost = self.p.config_interval.as_nanos() * self.p.allowed_config_loss as u64;
                let now = ctx.now;
                self.nbrs
                    .retain(|_, n| now.since(n.heard).as_nanos() <= lost);
                self.recompute();
                self.trigger_timer.cancel();
                self.send_config(ctx);
                Self::arm(
                    ctx,
                    &mut self.config_timer,
                    now + self.p.config_interval,
                    TIMER_CONFIG,
                );
            }
            TIMER_TRIGGER if self.trigger_timer.fire(token) => self.send_config(ctx),
            TIMER_PROBE if self.probe_timer.fire(token) => {
                let failed: Vec<NodeId> = {
                    let sh = self.shared.borrow();
                    sh.links[self.me.index()]
                        .iter()
                        .filter(|(_, l)| l.failed)
                        .map(|(&m, _)| m)
                        .collect()
                };
                let restored = self.was_failed.iter().any(|m| !failed.contains(m));
                self.was_failed = failed.iter().copied().collect();
                if restored {
                    self.send_ersn(ctx);
                }
                for m in failed {
                    let uid = ctx.new_uid();
                    *self.counters.sent_by_type.entry("PROBE").or_default() += 1;
                    self.counters.ctrl_originated_pkts += 1;
                    ctx.actions.push(RoutingAction::Forward {
                        pkt: control(uid, self.me, m, FrnMessage::Probe),
                        next_hop: m,
                    });
                }
                self.blocked.retain(|_, t| *t > ctx.now);
                self.release_parked(ctx);
                Self::arm(
                    ctx,
                    &mut self.probe_timer,
                    ctx.now + self.p.probe_interval,
                    TIMER_PROBE,
                );
            }
            _ => {}
        }
    }

    fn counters(&self) -> Option<&RoutingCounters> {
        Some(&self.counters)
    }

    fn route_entry(&self, dst: NodeId) -> Option<RouteView> {
        let (h, hops) = self.table.get(&dst)?;
        Some(RouteView {
            next_hop: *hops.first()?,
            hops: Some(*h as u32),
            seq: None,
        })
    }

    fn buffered(&self, f: &mut dyn FnMut(&Packet)) {
        for p in &self.parked {
            f(p);
        }
    }
}
