//! AODV under ns-2.35's rules (`rules = "ns2"`, the default): the behaviour of
//! ns-2.35's `aodv/aodv.cc` where it differs from RFC 3561, each item citing the
//! `aodv.cc` function it reproduces. The shared protocol is in `mod.rs`, the
//! RFC's counterparts in `rules_rfc.rs`; [`RuleSet`] is the seam between them.

use super::{
    seq_newer, Aodv, Packet, Params, Rerr, Route, RouteInfo, RouteState, RoutingAction, RoutingCtx,
    Rrep, Rreq, RuleSet, KEY_PURGE, KEY_REPAIR,
};
use crate::ids::NodeId;
use crate::sim::{SimDuration, SimTime, TimerToken};
use crate::wire::{DropReason, TransportNotice, IP_BROADCAST};

/// ns-2.35's `aodv.cc` rules.
pub(super) struct Ns2Rules;

impl RuleSet for Ns2Rules {
    fn initial_seq() -> u32 {
        // ns-2 starts at 2 and keeps its own number even.
        2
    }

    fn seq_step() -> u32 {
        // §6.1 increments the number before a request; ns-2 by 2, its own
        // numbers stay even.
        2
    }

    fn start(a: &mut Aodv, ctx: &mut RoutingCtx) {
        // ns-2 runs rt_purge from "start" at 0 s, then every 0.5 s.
        let at = ctx.now;
        Aodv::set_timer(ctx, &mut a.purge_timer, at, KEY_PURGE);
    }

    fn originated(a: &Aodv, pkt: &mut Packet) {
        // ns-2 gives the unicast packets it originates TTL NETWORK_DIAMETER (30,
        // `recv`, aodv.cc:586), not the IP default of 32: a relay drops one on
        // its 30th hop, and traces show ns-2's TTLs.
        if pkt.ip.dst != IP_BROADCAST {
            pkt.ip.ttl = a.p.net_diameter;
        }
    }

    fn forward_data(
        a: &mut Aodv,
        ctx: &mut RoutingCtx,
        pkt: Packet,
        delay: SimDuration,
    ) -> Option<Packet> {
        // ns-2 `forward`: only the destination route is refreshed, to exactly
        // now + ACTIVE_ROUTE_TIMEOUT.
        let until = ctx.now + a.p.active_route_timeout;
        let Some(r) = a.table.up(pkt.ip.dst) else {
            return Some(pkt);
        };
        r.expires = until;
        let next_hop = r.next_hop;
        Aodv::send_data(ctx, pkt, next_hop, delay);
        None
    }

    fn no_route(a: &mut Aodv, ctx: &mut RoutingCtx, pkt: Packet) {
        let dst = pkt.ip.dst;
        if pkt.ip.src == a.me {
            // ns-2 `rt_resolve`: the source buffers and asks (sendRequest
            // decides whether a request is due).
            a.buffer_packet(ctx, pkt);
            a.ns2_send_request(ctx, dst, false);
        } else if a.repairing(dst) {
            a.buffer_packet(ctx, pkt);
        } else {
            a.no_route_error(ctx, pkt);
        }
    }

    fn neighbour_route(_a: &mut Aodv, _ctx: &mut RoutingCtx, _nb: NodeId) {
        // ns-2 learns no route from the previous hop itself.
    }

    fn reverse_route(
        a: &mut Aodv,
        ctx: &mut RoutingCtx,
        rq: &Rreq,
        hops: u8,
        from: NodeId,
    ) -> Option<NodeId> {
        let now = ctx.now;
        // ns-2 `recvRequest` first sets rt_expire = max(rt_expire, now +
        // REV_ROUTE_LIFE) on any entry it has, up, in repair or down,
        // whether or not the request is fresher; a fresher one then brings
        // it up with that same lifetime.
        let mut rev_until = now + a.p.reverse_route_life;
        if let Some(r) = a.table.get_mut(rq.originator) {
            r.expires = r.expires.max(rev_until);
            rev_until = r.expires;
        }
        let rev = RouteInfo {
            dst: rq.originator,
            seq: Some(rq.originator_seq),
            hops,
            next_hop: from,
            expires: rev_until,
        };
        if a.table.update_ns2(now, rev) {
            if a.req
                .get(&rq.originator)
                .is_some_and(|st| st.timeout.is_some())
            {
                // ns-2: we were asking for the originator ourselves: that
                // discovery is over, and the route counts as used.
                a.ns2_reset_req(ctx.now, rq.originator, hops);
                if let Some(r) = a.table.get_mut(rq.originator) {
                    r.expires = now + a.p.active_route_timeout;
                }
            }
            a.route_ready(ctx, rq.originator, SimDuration::ZERO);
        }
        a.table.up(rq.originator).map(|r| r.next_hop)
    }

    fn reply_seq(a: &mut Aodv, rq: &Rreq) {
        // ns-2 `recvRequest`: always a new number, max(own, asked) + 1, made even.
        let base = if !rq.unknown_seq && seq_newer(rq.dst_seq, a.seq) {
            rq.dst_seq
        } else {
            a.seq
        };
        a.seq = base.wrapping_add(1);
        if a.seq % 2 == 1 {
            a.seq = a.seq.wrapping_add(1);
        }
    }

    fn reply_route(a: &mut Aodv, _now: SimTime, dst: NodeId, _from: NodeId) -> Option<&mut Route> {
        // ns-2 answers from any route that is up or under repair, whatever
        // its lifetime or next hop.
        a.table
            .get_mut(dst)
            .filter(|r| r.state != RouteState::Invalid)
    }

    fn reply_lifetime(p: &Params, r: &Route, now: SimTime) -> SimDuration {
        ns2_reply_lifetime(r.expires, now, p.reply_lifetime_wraps)
    }

    fn traces_expired_requests() -> bool {
        // ns-2's `forward` traces a request whose TTL is used up as a drop
        // (`DROP_RTR_TTL`), counted as `rtr.TTL`.
        true
    }

    fn forward_route(a: &mut Aodv, now: SimTime, rp: &Rrep, fwd: RouteInfo) -> bool {
        let updated = a.table.update_ns2(now, fwd);
        if updated {
            // (`update_ns2` gave the route exactly the reply's lifetime, even
            // if it had a later one: ns-2 `rt_update`.)
            a.ns2_reset_req(now, rp.dst, fwd.hops);
            if rp.originator == a.me {
                // ns-2: discovery latency per hop, for PerHopTime.
                let st = a.req.entry(rp.dst).or_default();
                st.latency_s[st.hist] =
                    now.since(SimTime(rp.timestamp_ns)).as_secs_f64() / fwd.hops.max(1) as f64;
                st.hist = (st.hist + 1) % st.latency_s.len();
            }
        }
        updated
    }

    fn reply_back_route(
        a: &mut Aodv,
        now: SimTime,
        originator: NodeId,
        _from: NodeId,
    ) -> Option<NodeId> {
        let active_route_timeout = a.p.active_route_timeout;
        let back = a
            .table
            .get_mut(originator)
            .filter(|r| r.state != RouteState::Invalid)?;
        back.expires = now + active_route_timeout;
        // ns-2 `recvReply` records only the next hop towards the originator as
        // a precursor of the reply's destination; the reverse route gains none
        // (the RFC's rules add the reply's sender to it). Without that, a relay
        // whose route to the originator is broken by a RERR passes the RERR on
        // only if a reply *from* the originator's side made it a precursor, else
        // the originator's next packet is dropped there (`rtr.NRTE`, rt_resolve).
        Some(back.next_hop)
    }

    fn recv_rerr(a: &mut Aodv, ctx: &mut RoutingCtx, re: &Rerr, from: NodeId) {
        a.ns2_recv_rerr(ctx, re, from);
    }

    fn control_failure_callback() -> bool {
        // ns-2 sets the link-failure callback only in `rt_resolve`, i.e. on data;
        // its replies (originated or forwarded, the header zeroed at allocation)
        // carry none, so the MAC's `RET` (or ARP's drop) is their end.
        false
    }

    fn tx_failed_drop() -> DropReason {
        // ns-2's `rt_ll_failed` drops what the MAC gave up on as `CBK` (the MAC's own
        // `RET` line is for its discarded original).
        DropReason::MacCallback
    }

    fn data_tx_failed(a: &mut Aodv, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId) {
        let failed = Self::tx_failed_drop();
        let dst = pkt.ip.dst;
        let travelled = pkt.ip.forwards();
        // ns-2 `rt_ll_failed`. Without an entry for the destination nothing
        // else happens.
        let Some(r) = a.table.get(dst) else {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: failed,
            });
            return;
        };
        // Repair when the packet has come further than the route still has
        // to go (a route that is down has ns-2's infinite hop count).
        if a.p.local_repair
            && r.state != RouteState::Invalid
            && travelled > r.hops
            && r.hops <= a.p.max_repair_ttl
        {
            // The other packets queued for the neighbour stay in the queue
            // and the other routes through it stay up (ns-2).
            a.ns2_local_repair(ctx, dst, pkt);
        } else {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: failed,
            });
            ctx.actions.push(RoutingAction::ReclaimQueued { next_hop });
            a.ns2_link_failure(ctx, next_hop);
        }
    }

    fn buffers_reclaimed_in_repair() -> bool {
        // ns-2 drops what comes back from the interface queue
        // (`DROP_RTR_MAC_CALLBACK`), even for a destination under repair.
        false
    }
}

/// The lifetime an ns-2 intermediate node puts in its reply for a route that
/// expires at `expires`: whole seconds, `(u_int32_t)(rt_expire − now)` in
/// double precision, truncated towards zero; a negative difference wraps
/// modulo 2³² when `wraps` (ns-2.35 on x86-64), else it is 0.
pub fn ns2_reply_lifetime(expires: SimTime, now: SimTime, wraps: bool) -> SimDuration {
    let diff_s = (expires.as_secs_f64() - now.as_secs_f64()).trunc();
    let secs = if diff_s >= 0.0 {
        diff_s as u32
    } else if wraps {
        (diff_s as i64) as u32
    } else {
        0
    };
    SimDuration::from_nanos(secs as u64 * 1_000_000_000)
}

/// ns-2 rules: a destination's request soft state (ns-2 keeps it in the
/// route entry: `rt_req_cnt`, `rt_req_timeout`, `rt_req_last_ttl`,
/// `rt_disc_latency`).
#[derive(Default)]
pub(super) struct ReqState {
    /// Network-wide requests since the last success or give-up.
    cnt: u32,
    /// No new request before this.
    timeout: Option<SimTime>,
    /// TTL of the last request.
    last_ttl: u8,
    /// Discovery latency per hop (s) of the last three discoveries; 0 = none.
    latency_s: [f64; 3],
    hist: usize,
    /// A discovery is under way since this time (for the counters); true for
    /// a local repair.
    since: Option<(SimTime, bool)>,
}

impl ReqState {
    /// ns-2 `PerHopTime`: the mean measured latency per hop, else NODE_TRAVERSAL_TIME.
    pub(super) fn per_hop_time(&self, default: SimDuration) -> SimDuration {
        let seen: Vec<f64> = self
            .latency_s
            .iter()
            .copied()
            .filter(|&l| l > 0.0)
            .collect();
        if seen.is_empty() {
            default
        } else {
            SimDuration::from_secs_f64(seen.iter().sum::<f64>() / seen.len() as f64)
        }
    }
}

impl Aodv {
    /// ns-2 `sendRequest`: ask for `dst` unless its route is up or the last
    /// request's wait has not passed; give up after RREQ_RETRIES network-wide
    /// requests (buffered packets dropped, no request for MAX_RREQ_TIMEOUT).
    pub(super) fn ns2_send_request(&mut self, ctx: &mut RoutingCtx, dst: NodeId, repair: bool) {
        let now = ctx.now;
        let last_hops = match self.table.get(dst) {
            Some(r) if r.state == RouteState::Valid => return,
            Some(r) => r.last_hops,
            None => None,
        };
        let p = self.p;
        let st = self.req.entry(dst).or_default();
        if st.timeout.is_some_and(|t| t > now) {
            return;
        }
        if st.cnt > p.rreq_retries {
            st.timeout = Some(now + p.max_rreq_timeout);
            st.cnt = 0;
            if st.since.take().is_some_and(|(_, rep)| !rep) {
                self.counters.discoveries_failed += 1;
            }
            self.drop_buffered(ctx, dst, DropReason::NoRoute);
            return;
        }
        // The ring starts above the hop count the route had when it went down;
        // a destination never routed has ns-2's INFINITY2 there.
        let last = match last_hops {
            Some(h) => h,
            None if p.first_request_network_wide => u8::MAX,
            None => 0,
        };
        st.last_ttl = st.last_ttl.max(last);
        let ttl = if st.last_ttl == 0 {
            p.ttl_start
        } else if st.last_ttl < p.ttl_threshold {
            st.last_ttl
                .saturating_add(p.ttl_increment)
                .min(p.net_diameter)
        } else {
            st.cnt += 1;
            p.net_diameter
        };
        st.last_ttl = ttl;
        // 2·TTL·PerHopTime, times the number of network-wide requests so far.
        let mut wait = SimDuration(2 * ttl as u64 * st.per_hop_time(p.node_traversal_time).0);
        if st.cnt > 0 {
            wait = SimDuration(wait.0.saturating_mul(st.cnt as u64));
        }
        st.timeout = Some(now + wait.min(p.max_rreq_timeout));
        // ns-2 sets rt_expire = 0 with every request it sends: a route in
        // repair thus advertises a lifetime of (u_int32_t)(0 − now) in the
        // replies it gives meanwhile (see `reply_lifetime_wraps`), and the next
        // request heard from its destination gives it exactly REV_ROUTE_LIFE.
        if let Some(r) = self.table.get_mut(dst) {
            r.expires = SimTime::ZERO;
        }
        match st.since {
            None => {
                st.since = Some((now, repair));
                if !repair {
                    self.counters.discoveries += 1;
                }
            }
            Some(_) => self.counters.request_retries += 1,
        }
        self.originate_rreq(ctx, dst, ttl);
    }

    /// A route to `dst` came up (ns-2 resets the request soft state): the
    /// discovery, if any, succeeded.
    pub(super) fn ns2_reset_req(&mut self, now: SimTime, dst: NodeId, hops: u8) {
        let Some(st) = self.req.get_mut(&dst) else {
            return;
        };
        st.cnt = 0;
        st.timeout = None;
        st.last_ttl = hops;
        if let Some((t, repair)) = st.since.take() {
            if !repair {
                self.counters.routes_found += 1;
                self.counters.route_hops_sum += hops as u64;
                self.counters.discovery_time_sum_s += now.since(t).as_secs_f64();
            }
        }
    }

    /// ns-2 `rt_purge`, every `route_purge_interval`: expired routes go down
    /// (their buffered packets dropped), packets waiting for a route that is up
    /// leave, and destinations still waiting get their next request.
    pub(super) fn ns2_purge(&mut self, ctx: &mut RoutingCtx) {
        let now = ctx.now;
        // Only a route that has expired or a destination with buffered packets
        // gets an action below; the walk visits those alone, in table order (a
        // lookup per route made purges of large tables, every second at every
        // node, most of a 1600-node AODV run). No action for one destination
        // changes another's route or buffered packets, so these are the routes
        // a walk over all of them would act on.
        let mut buffered = self.buffer.destinations();
        buffered.sort_unstable();
        let dsts: Vec<NodeId> = self
            .table
            .iter()
            .filter(|r| {
                (r.state == RouteState::Valid && r.expires < now)
                    || buffered.binary_search(&r.dst).is_ok()
            })
            .map(|r| r.dst)
            .collect();
        for dst in dsts {
            let r = self.table.get_mut(dst).expect("listed above");
            if r.state == RouteState::Valid && r.expires < now {
                r.seq = r.seq.wrapping_add(1);
                r.down_ns2();
                self.drop_buffered(ctx, dst, DropReason::NoRoute);
            } else if r.state == RouteState::Valid {
                if self.buffer.has_for(dst) {
                    self.route_ready(ctx, dst, self.p.release_spacing);
                }
            } else if self.buffer.has_for(dst) {
                self.ns2_send_request(ctx, dst, false);
            }
        }
        // ns-2 has an entry for every destination it buffers for; we may not.
        for dst in self.buffer.destinations() {
            if self.table.get(dst).is_none() {
                self.ns2_send_request(ctx, dst, false);
            }
        }
        let at = now + self.p.route_purge_interval;
        Self::set_timer(ctx, &mut self.purge_timer, at, KEY_PURGE);
    }

    /// ns-2 `local_rt_repair`: buffer the packet, mark the route under repair
    /// (same sequence number), request it, and arm the repair timer.
    pub(super) fn ns2_local_repair(&mut self, ctx: &mut RoutingCtx, dst: NodeId, pkt: Packet) {
        self.buffer_packet(ctx, pkt);
        let new_seq = self.p.local_repair_new_seq;
        if let Some(r) = self.table.get_mut(dst) {
            if new_seq && r.state == RouteState::Valid {
                r.seq = r.seq.wrapping_add(1);
            }
            r.state = RouteState::Repairing;
        }
        self.counters.local_repairs += 1;
        self.ns2_send_request(ctx, dst, true);
        let deadline = self
            .req
            .get(&dst)
            .and_then(|st| st.timeout)
            .unwrap_or(SimTime::ZERO);
        // ns-2 passes the absolute deadline where a delay is expected.
        let at = if self.p.repair_timer_bug {
            ctx.now + SimDuration(deadline.0)
        } else {
            deadline.max(ctx.now)
        };
        // Every repair arms its own firing (ns-2 schedules one event per repair).
        ctx.actions.push(RoutingAction::SetTimer {
            at,
            key: KEY_REPAIR | dst.0 as u64,
            token: TimerToken(0),
        });
    }

    /// ns-2 `LocalRepairTimer`: a route still not up is brought down, silently.
    pub(super) fn ns2_repair_timeout(&mut self, ctx: &mut RoutingCtx, dst: NodeId) {
        let Some(r) = self.table.get_mut(dst) else {
            return;
        };
        match r.state {
            RouteState::Valid => {}
            RouteState::Invalid => {}
            RouteState::Repairing => {
                r.down_ns2();
                self.counters.local_repairs_failed += 1;
                ctx.actions
                    .push(RoutingAction::Notify(TransportNotice::RouteFailed { dst }));
            }
        }
    }

    /// ns-2 `nb_delete` + `handle_link_failure`: every route up (or under
    /// repair) through `nb` goes down with its number + 1; one RERR lists them
    /// all, whether or not anyone used them.
    pub(super) fn ns2_link_failure(&mut self, ctx: &mut RoutingCtx, nb: NodeId) {
        self.seq = self.seq.wrapping_add(2); // the set of neighbours changed
        let mut unreachable = Vec::new();
        for r in self.table.iter_mut() {
            if r.state != RouteState::Invalid && r.next_hop == nb {
                r.seq = r.seq.wrapping_add(1);
                r.valid_seq = true;
                unreachable.push((r.dst, r.seq));
                r.down_ns2();
                ctx.actions
                    .push(RoutingAction::Notify(TransportNotice::RouteFailed {
                        dst: r.dst,
                    }));
            }
            r.precursors.retain(|&p| p != nb);
        }
        if !unreachable.is_empty() {
            self.counters.route_breaks += 1;
            self.send_rerr(ctx, unreachable, false);
        }
    }

    /// ns-2 `recvError`: a route up through the RERR's sender whose number is
    /// not newer than the RERR's goes down with that number; the packets queued
    /// for the sender are dropped; destinations with precursors are passed on.
    pub(super) fn ns2_recv_rerr(&mut self, ctx: &mut RoutingCtx, re: &Rerr, from: NodeId) {
        let mut propagate = Vec::new();
        let mut purged = false;
        for &(dst, seq) in &re.unreachable {
            let Some(r) = self.table.get_mut(dst) else {
                continue;
            };
            if r.state == RouteState::Invalid || r.next_hop != from || seq_newer(r.seq, seq) {
                continue;
            }
            r.seq = seq;
            let had_precursors = !r.precursors.is_empty();
            r.down_ns2();
            ctx.actions
                .push(RoutingAction::Notify(TransportNotice::RouteFailed { dst }));
            if self.p.rerr_purges_queue && !purged {
                purged = true;
                ctx.actions
                    .push(RoutingAction::ReclaimQueued { next_hop: from });
            }
            if had_precursors {
                // ns-2 `pc_delete()`: the list is emptied once the RERR is passed on.
                r.precursors.clear();
                propagate.push((dst, seq));
            }
        }
        self.send_rerr(ctx, propagate, true);
    }
}
