//! AODV under RFC 3561's rules (`rules = "rfc3561"`, the `standard` profile):
//! discovery with per-destination timers at the exact deadlines and binary
//! backoff (§6.3–6.4), routes refreshed on every hop of a path (§6.2), §6.11
//! RERRs and §6.12 local repair, each item citing its section. The shared
//! protocol is in `mod.rs`, ns-2.35's counterparts in `rules_ns2.rs`;
//! [`RuleSet`] is the seam between them.

use super::{
    seq_newer, Aodv, Discovery, DiscoveryKind, Packet, Params, Rerr, Route, RouteInfo, RouteState,
    RoutingAction, RoutingCtx, Rrep, Rreq, RuleSet, KEY_DISCOVERY,
};
use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime, Timer, TimerToken};
use crate::wire::{DropReason, TransportNotice};

/// RFC 3561's rules.
pub(super) struct RfcRules;

impl RuleSet for RfcRules {
    fn initial_seq() -> u32 {
        0
    }

    fn seq_step() -> u32 {
        // §6.1: increment the own number before originating a request.
        1
    }

    fn start(_a: &mut Aodv, _ctx: &mut RoutingCtx) {
        // No periodic purge: every discovery has its own timer.
    }

    fn originated(_a: &Aodv, _pkt: &mut Packet) {}

    fn forward_data(
        a: &mut Aodv,
        ctx: &mut RoutingCtx,
        pkt: Packet,
        delay: SimDuration,
    ) -> Option<Packet> {
        // §6.2: the routes to the destination, the next hop and the source
        // are refreshed, never shortened.
        let now = ctx.now;
        let until = now + a.p.active_route_timeout;
        let Some(r) = a.table.active(now, pkt.ip.dst) else {
            return Some(pkt);
        };
        r.expires = r.expires.max(until);
        let next_hop = r.next_hop;
        a.table.refresh(now, next_hop, until);
        if pkt.ip.src != a.me {
            a.table.refresh(now, pkt.ip.src, until);
        }
        Aodv::send_data(ctx, pkt, next_hop, delay);
        None
    }

    fn no_route(a: &mut Aodv, ctx: &mut RoutingCtx, pkt: Packet) {
        let dst = pkt.ip.dst;
        if a.repairing(dst) {
            a.buffer_packet(ctx, pkt);
        } else if pkt.ip.src == a.me {
            a.buffer_packet(ctx, pkt);
            a.request_route(ctx, dst);
        } else {
            a.no_route_error(ctx, pkt);
        }
    }

    fn neighbour_route(a: &mut Aodv, ctx: &mut RoutingCtx, nb: NodeId) {
        // §6.5/§6.7: a route to the previous hop, without a sequence number.
        let info = RouteInfo {
            dst: nb,
            seq: None,
            hops: 1,
            next_hop: nb,
            expires: ctx.now + a.p.active_route_timeout,
        };
        if a.table.update(ctx.now, info) {
            a.route_ready(ctx, nb, SimDuration::ZERO);
        }
    }

    fn reverse_route(
        a: &mut Aodv,
        ctx: &mut RoutingCtx,
        rq: &Rreq,
        hops: u8,
        from: NodeId,
    ) -> Option<NodeId> {
        // §6.5: the reverse route towards the originator.
        let now = ctx.now;
        let rev_until = now + a.p.reverse_route_life;
        let rev = RouteInfo {
            dst: rq.originator,
            seq: Some(rq.originator_seq),
            hops,
            next_hop: from,
            expires: rev_until,
        };
        if a.table.update(now, rev) {
            a.route_ready(ctx, rq.originator, SimDuration::ZERO);
        } else {
            a.table.refresh(now, rq.originator, rev_until);
        }
        a.table.active(now, rq.originator).map(|r| r.next_hop)
    }

    fn reply_seq(a: &mut Aodv, rq: &Rreq) {
        // §6.6.1: the destination takes the requested number if it is newer.
        if !rq.unknown_seq && seq_newer(rq.dst_seq, a.seq) {
            a.seq = rq.dst_seq;
        }
    }

    fn reply_route(a: &mut Aodv, now: SimTime, dst: NodeId, from: NodeId) -> Option<&mut Route> {
        // §6.6.2: an active route, not back through the requester.
        a.table.active(now, dst).filter(|r| r.next_hop != from)
    }

    fn reply_lifetime(_p: &Params, r: &Route, now: SimTime) -> SimDuration {
        if r.expires > now {
            r.expires.since(now)
        } else {
            SimDuration::ZERO
        }
    }

    fn traces_expired_requests() -> bool {
        // A request whose TTL is used up simply ends (the expanding ring).
        false
    }

    fn forward_route(a: &mut Aodv, now: SimTime, _rp: &Rrep, fwd: RouteInfo) -> bool {
        // §6.7: the forward route, under the §6.2 freshness rules.
        a.table.update(now, fwd)
    }

    fn reply_back_route(
        a: &mut Aodv,
        now: SimTime,
        originator: NodeId,
        from: NodeId,
    ) -> Option<NodeId> {
        let active_route_timeout = a.p.active_route_timeout;
        let back = a.table.active(now, originator)?;
        back.expires = back.expires.max(now + active_route_timeout);
        // §6.7: the reply's sender becomes a precursor of the reverse route.
        back.add_precursor(from);
        Some(back.next_hop)
    }

    fn recv_rerr(a: &mut Aodv, ctx: &mut RoutingCtx, re: &Rerr, from: NodeId) {
        a.rfc_recv_rerr(ctx, re, from);
    }

    fn control_failure_callback() -> bool {
        true
    }

    fn tx_failed_drop() -> DropReason {
        // The MAC's own `RET` drop.
        DropReason::RetryLimit
    }

    fn data_tx_failed(a: &mut Aodv, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId) {
        let now = ctx.now;
        let dst = pkt.ip.dst;
        let travelled = pkt.ip.forwards();
        let repair = match a.table.active(now, dst) {
            // §6.12 (as ns-2): repair when the break is closer to the
            // destination than to the source.
            Some(r) => {
                r.next_hop == next_hop
                    && a.p.local_repair
                    && pkt.ip.src != a.me
                    && travelled > r.hops
                    && r.hops <= a.p.max_repair_ttl
            }
            None => false,
        };
        let cut = a.link_break(ctx, next_hop, repair.then_some(dst));
        if cut {
            a.counters.route_breaks += 1;
        }
        // Packets already queued for the dead neighbour come back to us.
        ctx.actions.push(RoutingAction::ReclaimQueued { next_hop });
        if repair {
            a.start_local_repair(ctx, dst, pkt);
        } else if a.repairing(dst) {
            a.buffer_packet(ctx, pkt);
        } else {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::RetryLimit,
            });
        }
    }

    fn buffers_reclaimed_in_repair() -> bool {
        // Data for a destination under repair waits for the repair.
        true
    }
}

impl Aodv {
    // ---- route discovery (§6.3, §6.4) ------------------------------------------

    /// Start a discovery for `dst` unless one is under way (or held down).
    pub(super) fn request_route(&mut self, ctx: &mut RoutingCtx, dst: NodeId) {
        if self.discoveries.contains_key(&dst) {
            return;
        }
        // §6.4: start from the last known hop count when there is one (ns-2
        // `rt_req_last_ttl = max(.., rt_last_hop_count)`), else TTL_START.
        let ttl = match self.table.get(dst) {
            Some(r) if r.hops > 0 => self.p.next_ttl(r.hops),
            _ => self.p.ttl_start.min(self.p.net_diameter),
        };
        self.counters.discoveries += 1;
        let d = Discovery {
            kind: DiscoveryKind::Source,
            ttl,
            network_wide: 0,
            started: ctx.now,
            timer: Timer::new(),
        };
        self.discoveries.insert(dst, d);
        self.send_rreq(ctx, dst, ttl);
    }

    /// Originate a RREQ for `dst` with IP TTL `ttl` and arm its reply timer.
    pub(super) fn send_rreq(&mut self, ctx: &mut RoutingCtx, dst: NodeId, ttl: u8) {
        self.originate_rreq(ctx, dst, ttl);
        let d = self
            .discoveries
            .get_mut(&dst)
            .expect("a discovery entry exists for a request");
        d.ttl = ttl;
        if ttl >= self.p.net_diameter {
            d.network_wide += 1;
        }
        let at = ctx.now + self.p.rrep_wait(ttl, d.network_wide);
        Self::set_timer(ctx, &mut d.timer, at, KEY_DISCOVERY | dst.0 as u64);
    }

    /// Broadcast a new RREQ for `dst` with IP TTL `ttl`.
    pub(super) fn discovery_timeout(
        &mut self,
        ctx: &mut RoutingCtx,
        dst: NodeId,
        token: TimerToken,
    ) {
        let Some(d) = self.discoveries.get_mut(&dst) else {
            return;
        };
        if !d.timer.fire(token) {
            return;
        }
        if self.table.active(ctx.now, dst).is_some() {
            self.route_ready(ctx, dst, SimDuration::ZERO);
            return;
        }
        let d = self.discoveries.get_mut(&dst).expect("checked above");
        match d.kind {
            DiscoveryKind::HoldDown => {
                self.discoveries.remove(&dst);
                if self.buffer.has_for(dst) {
                    self.request_route(ctx, dst);
                }
            }
            DiscoveryKind::Repair => {
                // §6.12: the repair failed; the route is down and upstream nodes
                // are told (ns-2 only brings the route down).
                self.discoveries.remove(&dst);
                self.counters.local_repairs_failed += 1;
                self.drop_buffered(ctx, dst, DropReason::NoRoute);
                if let Some(r) = self.table.get(dst) {
                    let seq = r.seq;
                    let had_precursors = !r.precursors.is_empty();
                    self.table.invalidate(dst, seq);
                    if had_precursors {
                        self.send_rerr(ctx, vec![(dst, seq)], false);
                    }
                }
            }
            DiscoveryKind::Source => {
                if d.ttl < self.p.net_diameter || d.network_wide <= self.p.rreq_retries {
                    let ttl = self.p.next_ttl(d.ttl);
                    self.counters.request_retries += 1;
                    self.send_rreq(ctx, dst, ttl);
                } else {
                    // All retries used: give up on the waiting packets and leave
                    // the destination alone for a while (ns-2).
                    d.kind = DiscoveryKind::HoldDown;
                    let at = ctx.now + self.p.max_rreq_timeout;
                    Self::set_timer(ctx, &mut d.timer, at, KEY_DISCOVERY | dst.0 as u64);
                    self.counters.discoveries_failed += 1;
                    self.drop_buffered(ctx, dst, DropReason::NoRoute);
                }
            }
        }
    }

    /// §6.11: a RERR from the next hop of an active route invalidates it; the
    /// destinations whose routes had precursors are passed on.
    pub(super) fn rfc_recv_rerr(&mut self, ctx: &mut RoutingCtx, re: &Rerr, from: NodeId) {
        let now = ctx.now;
        let mut propagate = Vec::new();
        for &(dst, seq) in &re.unreachable {
            let Some(r) = self.table.active(now, dst) else {
                continue;
            };
            if r.next_hop != from {
                continue;
            }
            // §6.11: take the RERR's number, never going backwards (ns-2 instead
            // ignores a RERR whose number is older than the route's).
            let seq = if seq_newer(seq, r.seq) { seq } else { r.seq };
            let precursors = self.table.invalidate(dst, seq);
            // Cross-layer notice for ELFN (ERDN): the route to `dst` broke.
            ctx.actions
                .push(RoutingAction::Notify(TransportNotice::RouteFailed { dst }));
            if !precursors.is_empty() {
                propagate.push((dst, seq));
            }
        }
        self.send_rerr(ctx, propagate, true);
    }

    pub(super) fn start_local_repair(&mut self, ctx: &mut RoutingCtx, dst: NodeId, pkt: Packet) {
        let travelled = pkt.ip.forwards();
        let r = self.table.get_mut(dst).expect("repair an existing route");
        r.state = RouteState::Repairing;
        // §6.12: ask for a number newer than the one of the broken route.
        r.seq = r.seq.wrapping_add(1);
        r.valid_seq = true;
        let ttl = r
            .hops
            .max(travelled / 2)
            .saturating_add(self.p.local_add_ttl)
            .min(self.p.net_diameter);
        self.counters.local_repairs += 1;
        self.buffer_packet(ctx, pkt);
        let d = Discovery {
            kind: DiscoveryKind::Repair,
            ttl,
            network_wide: 0,
            started: ctx.now,
            timer: Timer::new(),
        };
        self.discoveries.insert(dst, d);
        self.send_rreq(ctx, dst, ttl);
    }
}
