//! Dynamic Source Routing: Johnson, Maltz, Hu, "The Dynamic Source Routing
//! Protocol for Mobile Ad Hoc Networks (DSR)", IETF draft, published as
//! RFC 4728 (2007); with ns-2.35's `dsr/` (CMU Monarch code: `dsragent.cc`,
//! `mobicache.cc`) choices as defaults (docs/routing.md).
//!
//! Implemented (RFC 4728 sections):
//! * §3.1, §8.2 route discovery: the first packet for a destination with no
//!   cached route is buffered ([`crate::routing::send_buffer`]) and starts a
//!   discovery: a non-propagating request first (neighbours and their caches
//!   answer, §3.3.3), then after NonpropRequestTimeout a propagating one,
//!   both timed by ns-2's send-buffer poll (`Params::buffer_poll`);
//!   cycles repeat with exponential backoff while packets wait ([`request_table`]);
//! * §8.2.2 request processing: duplicates (request table) and requests
//!   already listing this node are dropped; §8.2.4 the target replies to every
//!   copy, reversing the accumulated route (ns-2; links are assumed
//!   bidirectional, as 802.11's ACKs need); §3.3.2, §8.2.3 intermediate nodes
//!   reply from their cache;
//! * §4.1 route cache: ns-2's primary/secondary path cache ([`cache`]), fed
//!   by replies, forwarded source routes and (promiscuous mode) overheard ones;
//! * §6.7 source routes carried by data packets ([`SourceRoute`] in
//!   `Packet::source_route`): nodes forward by the source route, not a table;
//! * §8.3 route maintenance from link-layer feedback (the MAC's retry limit,
//!   as ns-2; no DSR acknowledgements): the link is cut from the cache, the
//!   packets queued for it are taken back, and §8.3.4 a route error goes back
//!   along the route to its first node; nodes that forward or overhear it cut
//!   the link too; §8.2.1 the last error received rides on the next
//!   propagating request;
//! * §3.4.1, §8.3.6 salvaging: a forwarded packet whose link broke is sent on
//!   another cached route (at most MAX_SALVAGE_COUNT times);
//! * §3.4.3 automatic route shortening: a node that overhears a packet that
//!   will reach it later on its route sends the route's first node a
//!   gratuitous reply without the hops in between (held down per route);
//! * ns-2.35's flow state at the source (`dsragent_enable_flowstate`): after
//!   a flow's first packets, data travels flow-only ([`FlowMark`]), and relays
//!   and overhearers learn nothing from it.
//!
//! Not implemented: flow tables at relays (unknown-flow errors; see
//! docs/routing.md), DSR acknowledgements and the maintenance buffer (§8.3.1–
//! 8.3.3), the blacklist for unidirectional links (§4.6), route-reply storm
//! prevention (§3.3.4; ns-2 has it disabled too), piggybacking data on
//! requests, route-cache timeouts.

pub mod cache;
use crate::wire::dsr as packets;
pub mod request_table;

pub use crate::wire::dsr::{DsrMessage, FlowMark, Rerr, Rrep, Rreq, SourceRoute};
pub use cache::RouteCache;
pub use request_table::{RequestKind, RequestTable};

use super::send_buffer::SendBuffer;
use super::{mark_tcp_ip_twice, Routing, RoutingAction, RoutingCtx, RoutingMessage};
use crate::ids::NodeId;
use crate::routing::RoutingCounters;
use crate::sim::{SimDuration, SimRng, SimTime, Timer, TimerToken};
use crate::wire::DropReason;
use crate::wire::TransportNotice;
use crate::wire::{IpHeader, IpProto, Packet, TransportHeader, IP_BROADCAST, IP_HEADER_BYTES};
use rand::Rng;
use std::collections::BTreeMap;

crate::params! {
    /// Every DSR timer and constant. `Default` is ns-2.35's value; each field's doc
    /// gives the RFC 4728 §9 value where it differs.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Params {
    /// Send-buffer capacity (packets). ns-2 `SEND_BUF_SIZE` 64; RFC: not fixed.
    pub send_buffer_pkts: u32 = 64,
        { key: "send_buffer_pkts", unit: PKTS, allowed: Int { lo: 1, hi: u32::MAX as u64 }, source: "ns-2 dsragent.cc SEND_BUF_SIZE" },
    /// Packets a route reply releases from the send buffer leave this far
    /// apart. ns-2 `arp_timeout` 30 ms; 0 = all at once.
    pub release_spacing: SimDuration = SimDuration::from_millis(30),
        { key: "release_spacing_ms", unit: MS, allowed: Time { positive: false }, source: "ns-2 dsragent.cc arp_timeout" },
    /// How long a packet may wait for a route. SendBufferTimeout 30 s (both).
    pub send_buffer_timeout: SimDuration = SimDuration::from_secs_f64(30.0),
        { key: "send_buffer_timeout_s", unit: S, allowed: Time { positive: true }, source: "RFC 4728 §9 SendBufferTimeout; ns-2 dsragent.cc" },
    /// Wait before the first retry cycle of a discovery. RequestPeriod 500 ms
    /// (RFC); ns-2 `rt_rq_period` 0.5 s.
    pub request_period: SimDuration = SimDuration::from_millis(500),
        { key: "request_period_ms", unit: MS, allowed: Time { positive: true }, source: "RFC 4728 §9 RequestPeriod; ns-2 dsragent.cc rt_rq_period" },
    /// Cap on the wait between cycles. MaxRequestPeriod 10 s (both).
    pub max_request_period: SimDuration = SimDuration::from_secs_f64(10.0),
        { key: "max_request_period_s", unit: S, allowed: Time { positive: true }, source: "RFC 4728 §9 MaxRequestPeriod; ns-2 dsragent.cc rt_rq_max_period" },
    /// Growth of the wait per cycle: the k-th wait is request_period·factor^k.
    /// ns-2 4 (`BackOffTest`: 0.5, 2, 8, 10 s); RFC 2 (binary exponential).
    pub request_backoff_factor: u32 = 4,
        { key: "request_backoff_factor", unit: NONE, allowed: Int { lo: 1, hi: 16 }, source: "ns-2 dsragent.cc BackOffTest; RFC 4728 §8.2.1 (binary exponential)" },
    /// Count the cycle just started in the backoff exponent (ns-2
    /// `BackOffTest` computes period·4^n with n the cycles already started, so
    /// the first retry comes 2 s after the first request: waits 2, 8, 10 s).
    /// Off: the RFC's RequestPeriod before the first retry (0.5, 1, 2, … s).
    pub backoff_counts_first_cycle: bool = true,
        { key: "backoff_counts_first_cycle", unit: NONE, allowed: Any, source: "ns-2 dsragent.cc BackOffTest" },
    /// Discoveries an intermediate node may start for a packet it can neither
    /// forward nor salvage (ns-2 `NEW_SALVAGE_LOGIC`:
    /// `dsr_salvage_max_requests` 1, non-propagating requests only): the
    /// packet waits in the send buffer meanwhile. 0: such packets are dropped
    /// (RFC 4728 §8.3.6 only salvages with a cached route).
    pub salvage_requests: u32 = 1,
        { key: "salvage_requests", unit: NONE, allowed: Int { lo: 0, hi: 15 }, source: "ns-2 dsragent.cc NEW_SALVAGE_LOGIC dsr_salvage_max_requests" },
    /// Start each cycle with a non-propagating request (ns-2
    /// `dsragent_ring_zero_search`; RFC §3.3.3: MAY).
    pub ring_zero_search: bool = true,
        { key: "ring_zero_search", unit: NONE, allowed: Any, source: "ns-2 dsragent.cc dsragent_ring_zero_search; RFC 4728 §3.3.3" },
    /// Wait for replies to a non-propagating request before a propagating one.
    /// NonpropRequestTimeout 30 ms (RFC); ns-2 `arp_timeout` 30 ms, checked by
    /// its 30–60 ms send-buffer poll.
    pub nonprop_request_timeout: SimDuration = SimDuration::from_millis(30),
        { key: "nonprop_request_timeout_ms", unit: MS, allowed: Time { positive: true }, source: "RFC 4728 §9 NonpropRequestTimeout; ns-2 dsragent.cc arp_timeout" },
    /// Most addresses in a source route, both ends included (ns-2 `MAX_SR_LEN`
    /// 16; the RFC bounds requests by DiscoveryHopLimit = 255 hops).
    pub max_route_len: u8 = 16,
        { key: "max_route_len", unit: NONE, allowed: Int { lo: 2, hi: 255 }, source: "ns-2 dsr/hdr_sr.h MAX_SR_LEN" },
    /// Route requests (originated and forwarded) and replies by the target
    /// wait U(0, this). BroadcastJitter 10 ms (RFC); ns-2 `RREQ_JITTER` 10 ms.
    pub broadcast_jitter: SimDuration = SimDuration::from_millis(10),
        { key: "broadcast_jitter_ms", unit: MS, allowed: Time { positive: false }, source: "RFC 4728 §9 BroadcastJitter; ns-2 dsragent.cc RREQ_JITTER" },
    /// Intermediate nodes answer propagating requests from their cache
    /// (ns-2 `dsragent_reply_from_cache_on_propagating`; RFC §8.2.3: MAY).
    /// Non-propagating requests are always answered from the cache (ns-2).
    pub reply_from_cache: bool = true,
        { key: "reply_from_cache", unit: NONE, allowed: Any, source: "ns-2 dsragent.cc dsragent_reply_from_cache_on_propagating; RFC 4728 §8.2.3" },
    /// Snoop on unicast packets between other nodes (ns-2 `dsragent_use_tap`;
    /// RFC §3.3.1: optional promiscuous receive).
    pub promiscuous: bool = true,
        { key: "promiscuous", unit: NONE, allowed: Any, source: "ns-2 dsragent.cc dsragent_use_tap; RFC 4728 §3.3.1" },
    /// Send gratuitous replies to shorten routes (ns-2
    /// `dsragent_send_grat_replies`; RFC §3.4.3). Needs `promiscuous`.
    pub gratuitous_replies: bool = true,
        { key: "gratuitous_replies", unit: NONE, allowed: Any, source: "ns-2 dsragent.cc dsragent_send_grat_replies; RFC 4728 §3.4.3" },
    /// At most one gratuitous reply per route per this time. GratReplyHoldoff
    /// 1 s (RFC); ns-2 `grat_hold_down_time` 1 s.
    pub grat_reply_holdoff: SimDuration = SimDuration::from_secs_f64(1.0),
        { key: "grat_reply_holdoff_s", unit: S, allowed: Time { positive: false }, source: "RFC 4728 §9 GratReplyHoldoff; ns-2 dsragent.cc grat_hold_down_time" },
    /// Salvage forwarded packets whose next hop failed (ns-2
    /// `dsragent_salvage_with_cache`; RFC §8.3.6).
    pub salvage: bool = true,
        { key: "salvage", unit: NONE, allowed: Any, source: "ns-2 dsragent.cc dsragent_salvage_with_cache; RFC 4728 §8.3.6" },
    /// Most salvages of one packet. MAX_SALVAGE_COUNT 15 (RFC); ns-2
    /// `dsr_salvage_max_attempts` 15.
    pub max_salvage_count: u8 = 15,
        { key: "max_salvage_count", unit: NONE, allowed: Int { lo: 0, hi: 255 }, source: "RFC 4728 §9 MAX_SALVAGE_COUNT; ns-2 dsragent.cc dsr_salvage_max_attempts" },
    /// Piggyback the last route error received on the next propagating
    /// request (ns-2 `dsragent_propagate_last_error`; RFC §8.2.1: SHOULD).
    pub propagate_last_error: bool = true,
        { key: "propagate_last_error", unit: NONE, allowed: Any, source: "ns-2 dsragent.cc dsragent_propagate_last_error; RFC 4728 §8.2.1" },
    /// How long that error stays worth propagating (ns-2 `max_err_hold` 1 s).
    pub error_hold: SimDuration = SimDuration::from_secs_f64(1.0),
        { key: "error_hold_s", unit: S, allowed: Time { positive: false }, source: "ns-2 dsragent.cc max_err_hold" },
    /// Primary route-cache paths (ns-2 MobiCache 30).
    pub primary_cache_paths: u32 = 30,
        { key: "primary_cache_paths", unit: NONE, allowed: Int { lo: 1, hi: 100_000 }, source: "ns-2 dsr/mobicache.cc primary cache size" },
    /// Secondary route-cache paths (ns-2 MobiCache 64).
    pub secondary_cache_paths: u32 = 64,
        { key: "secondary_cache_paths", unit: NONE, allowed: Int { lo: 1, hi: 100_000 }, source: "ns-2 dsr/mobicache.cc secondary cache size" },
    /// Count the IP header of an originated TCP segment twice, as ns-2.35's
    /// agent does (it adds `IP_HDR_LEN` to every packet it originates although
    /// ns-2's TCP already counts IP in its 40-byte header): a 1000-byte segment
    /// is 1060 B on the air, an ACK 60 B. Off: 1040/40 B, as with AODV (whose
    /// ns-2 agent skips TCP) and as on a real network.
    pub tcp_ip_header_twice: bool = true,
        { key: "tcp_ip_header_twice", unit: NONE, allowed: Any, source: "ns-2.35 dsragent.cc recv (IP_HDR_LEN)" },
    /// ns-2.35's flow state at the source (`dsragent_enable_flowstate`, a
    /// `static const` true in `dsragent.cc`): after a route's first packets
    /// have set the flow up, data packets travel without their source route
    /// ([`FlowMark`]), and the source keeps using its default flow's route
    /// while the cache offers none shorter (`dsragent_prefer_default_flow`).
    /// Off: every data packet carries its route (RFC 4728, which left the
    /// drafts' flow-state extension out).
    pub flow_state: bool = true,
        { key: "flow_state", unit: NONE, allowed: Any, source: "ns-2.35 dsragent.cc dsragent_enable_flowstate" },
    /// Reproduce ns-2.35's size accounting of relayed route requests, which
    /// counts every earlier hop's header again ([`Rreq::stale_bytes`]): 48
    /// bytes after one relay, 68 after two (instead of 36, 40). Off: each
    /// request is its current header only.
    pub request_size_bug: bool = true,
        { key: "request_size_bug", unit: NONE, allowed: Any, source: "ns-2.35 dsragent.cc handleRouteRequest" },
    /// Reproduce ns-2.35's gratuitous-reply hold-down slip: a route entering
    /// the table gets the next slot's time stamped instead of its own, so the
    /// second shortening of a route is usually not held down. Off: each
    /// route's own time (the evident intent).
    pub grat_holdoff_bug: bool = true,
        { key: "grat_holdoff_bug", unit: NONE, allowed: Any, source: "ns-2.35 dsragent.cc sendRouteShortening" },
    /// Back the route-request backoff down whenever a route to a destination
    /// we are discovering turns up (overheard, forwarded, or in a reply for
    /// another target). Off (ns-2.35): only a route reply for that target
    /// resets it (`acceptRouteReply` is the only place `rt_reqs_outstanding`
    /// returns to 0); a route learned otherwise ends the wait but the next
    /// discovery for the destination waits out the backoff the last one
    /// reached, and a relay's salvage request counts against it.
    pub learned_route_resets_backoff: bool = false,
        { key: "learned_route_resets_backoff", unit: NONE, allowed: Any, source: "ns-2.35 dsragent.cc acceptRouteReply" },
    /// A route error starts with the salvage count of the packet whose failure
    /// it reports (ns-2.35: `xmitFailed` turns the failed packet itself into
    /// the error and never clears `salvaged`; `processBrokenRouteError`'s
    /// unwrapped inner error is a copy of the outer one). Such an error, when
    /// its own hop fails, is salvaged only up to MAX_SALVAGE_COUNT in all. Off:
    /// every error starts at 0, as a new packet (RFC 4728 §8.3.4).
    pub error_keeps_salvage_count: bool = true,
        { key: "error_keeps_salvage_count", unit: NONE, allowed: Any, source: "ns-2.35 dsragent.cc xmitFailed; RFC 4728 §8.3.4" },
    /// The inner error a node unwraps from a nested one it received is a copy
    /// of the received packet (ns-2.35 `processBrokenRouteError` uses
    /// `Packet::copy`): it keeps the received error's uid, so nodes that
    /// overheard that one skip it (the tap's uid filter), and its size still
    /// counts the received packet's headers, the new source-route header
    /// added on top (60 B in, 84 B out on a 2-address route). Off: a packet
    /// of its own, with a new uid and its own size.
    pub unwrapped_error_copies_packet: bool = true,
        { key: "unwrapped_error_copies_packet", unit: NONE, allowed: Any, source: "ns-2.35 dsragent.cc processBrokenRouteError" },
    /// ns-2's send-buffer poll (`SendBufferTimer`, `BUFFER_CHECK` 30 ms): a
    /// node looks at its waiting packets every U(1, 2) × this, and only then
    /// turns an unanswered non-propagating request into a propagating one,
    /// starts a due request cycle, or asks a route for a packet it could not
    /// salvage. So the propagating request leaves at the first poll more than
    /// 30 ms after the non-propagating one (30–90 ms, ≈ 55 ms on average), not
    /// at 30 ms. 0: each of those at its exact due time.
    pub buffer_poll: SimDuration = SimDuration::from_millis(30),
        { key: "buffer_poll_ms", unit: MS, allowed: Time { positive: false }, source: "ns-2 dsragent.cc SendBufferTimer BUFFER_CHECK" },
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
                request_size_bug: false,
                grat_holdoff_bug: false,
                error_keeps_salvage_count: false,
                unwrapped_error_copies_packet: false,
                tcp_ip_header_twice: false,
                ..Params::default()
            },
        }
    }

    /// The wait after a cycle when `outstanding` cycles have been started:
    /// min(request_period·factor^outstanding, max_request_period) as ns-2's
    /// `BackOffTest` (whose count was raised by the cycle it follows), or
    /// factor^(outstanding−1) without `backoff_counts_first_cycle`.
    pub fn cycle_backoff(&self, outstanding: u32) -> SimDuration {
        let k = if self.backoff_counts_first_cycle {
            outstanding
        } else {
            outstanding.saturating_sub(1)
        }
        .min(40);
        let mut w = self.request_period.0 as u128;
        for _ in 0..k {
            w = w.saturating_mul(self.request_backoff_factor as u128);
            if w >= self.max_request_period.0 as u128 {
                return self.max_request_period;
            }
        }
        SimDuration((w as u64).min(self.max_request_period.0))
    }
}

/// ns-2 `END_TO_END_COUNT`: a flow's packets carry the route until this many
/// have (the entry is created by the first, then counted up to it).
const FLOW_EST_COUNT: u32 = 2;
/// ns-2 `min_adv_interval` (s): an established flow re-advertises its route
/// when its last establishing packet is older than this.
const FLOW_ADV_INTERVAL_S: f64 = 5.0;
/// ns-2 `default_flow_timeout` (s), refreshed by every packet
/// (`dsragent_always_reestablish`).
const FLOW_TIMEOUT_S: f64 = 60.0;

/// A flow this node originates (ns-2 `TableEntry` with `sourceIP` = us).
#[derive(Clone, Debug)]
struct SourceFlow {
    route: Vec<NodeId>,
    /// Packets sent with the route on the air (ns-2 `count`).
    count: u32,
    last_adv: SimTime,
    timeout: SimTime,
}

/// The decision of `flow_for` on a destination's flow list (pruned or not: an
/// expired flow never changes it, which the tests check against an unpruned list).
fn choose_flow(list: &mut Vec<SourceFlow>, now: SimTime, route: &mut Vec<NodeId>) -> FlowMark {
    if let Some(d) = list.last() {
        if d.timeout >= now && d.route.len() <= route.len() && d.route != *route {
            route.clone_from(&d.route);
        }
    }
    let adv = SimDuration::from_secs_f64(FLOW_ADV_INTERVAL_S);
    let (i, mark) = match list.iter().rposition(|f| f.route == *route) {
        Some(i) if list[i].timeout >= now => {
            let f = &mut list[i];
            if f.count <= FLOW_EST_COUNT || f.last_adv + adv < now {
                f.count += 1;
                f.last_adv = now;
                (i, FlowMark::Establish)
            } else if i + 1 == list.len() {
                (i, FlowMark::Default)
            } else {
                (i, FlowMark::FlowId)
            }
        }
        _ => {
            list.push(SourceFlow {
                route: route.clone(),
                count: 1,
                last_adv: now,
                timeout: now,
            });
            (list.len() - 1, FlowMark::Establish)
        }
    };
    list[i].timeout = now + SimDuration::from_secs_f64(FLOW_TIMEOUT_S);
    mark
}

/// End the live flows of one destination whose route uses the link `from` →
/// `to` (ns-2 sets their timeout 1 s in the past).
fn expire_flows_over(list: &mut [SourceFlow], now: SimTime, from: NodeId, to: NodeId) {
    for f in list.iter_mut() {
        if f.timeout >= now && f.route.windows(2).any(|w| w[0] == from && w[1] == to) {
            f.timeout = SimTime(now.0.saturating_sub(SimDuration::from_secs_f64(1.0).0));
        }
    }
}

/// Drop the flows of one destination that can no longer change what
/// [`Dsr::flow_for`] or [`Dsr::dead_link`] do, so that the list holds at most
/// the flows used within the last `FLOW_TIMEOUT_S` plus the default one.
///
/// Why this changes nothing: a flow is expired once `timeout < now`; time only
/// grows and only an unexpired flow has its timeout pushed later, so an
/// expired flow stays expired and is never modified again. Every lookup skips
/// expired flows (the default-route check, the route match, which sets up a
/// new flow when its newest match is expired, and `dead_link`), and an older
/// flow on the same route as a newer one is always expired too, so removing an
/// expired flow never uncovers a different match. The one thing an expired
/// flow still decides is, if it is the last, that no live flow is the default
/// (so those need their flow id): it is kept while live flows precede it, and
/// a list with no live flow at all is emptied, as an empty one behaves alike.
fn prune_flows(list: &mut Vec<SourceFlow>, now: SimTime) {
    let n = list.len();
    let mut i = 0;
    list.retain(|f| {
        i += 1;
        f.timeout >= now || i == n
    });
    if list.len() == 1 && list[0].timeout < now {
        list.clear();
    }
}

/// ns-2 `RTREP_HOLDOFF_SIZE`: routes remembered for the gratuitous-reply hold-down.
const GRAT_HOLD_SLOTS: usize = 10;
/// ns-2 `TAP_CACHE_SIZE`: recently overheard packet uids (each processed once).
const TAP_SLOTS: usize = 1024;

// Timer keys: kind in the high 32 bits, a node id or reply number in the low ones.
const KEY_DISCOVERY: u64 = 0;
const KEY_BUFFER: u64 = 1 << 32;
const KEY_REPLY: u64 = 2 << 32;

/// Remove loops from a route (ns-2 `compressPath`): when a node appears again,
/// the detour between its two appearances is cut out.
pub fn compress_path(route: &[NodeId]) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::with_capacity(route.len());
    for &n in route {
        if let Some(j) = out.iter().position(|&m| m == n) {
            out.truncate(j + 1);
        } else {
            out.push(n);
        }
    }
    out
}

/// The source route `pkt` travels on: a data packet's, or a reply's or error's.
fn route_of(pkt: &Packet) -> Option<&SourceRoute> {
    match &pkt.transport {
        TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rrep(r))) => Some(&r.sr),
        TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rerr(r))) => Some(&r.sr),
        TransportHeader::Routing(_) => None,
        _ => pkt.source_route.as_deref(),
    }
}

fn control_route_mut(pkt: &mut Packet) -> Option<&mut SourceRoute> {
    match &mut pkt.transport {
        TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rrep(r))) => Some(&mut r.sr),
        TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rerr(r))) => Some(&mut r.sr),
        _ => None,
    }
}

/// One node's DSR instance.
pub struct Dsr {
    me: NodeId,
    p: Params,
    rng: SimRng,
    cache: RouteCache,
    requests: RequestTable,
    buffer: SendBuffer,
    buffer_timer: Timer,
    next_request_id: u32,
    /// The last route error addressed to us: (from, to, when) (ns-2
    /// `route_error_held`, `err_from`, `err_to`, `route_error_data_time`).
    held_error: Option<(NodeId, NodeId, SimTime)>,
    /// Gratuitous-reply hold-down: (route, last reply), round robin (ns-2
    /// `grat_hold`, `RTREP_HOLDOFF_SIZE` slots, times 0 at first).
    grat_hold: Vec<(Vec<NodeId>, SimTime)>,
    grat_victim: usize,
    /// uids of recently overheard packets (ns-2 `tap_uid_cache`).
    tap_seen: Vec<u64>,
    /// Replies by the target waiting for their jitter.
    pending_replies: BTreeMap<u32, (Timer, Packet)>,
    next_pending: u32,
    counters: RoutingCounters,
    scratch: Vec<Packet>,
    /// Destinations this node originates data for: the ones whose route loss or
    /// return is told to the transport layer (ELFN notices).
    talked_to: std::collections::BTreeSet<NodeId>,
    /// Flows this node originates, per destination in creation order (ns-2
    /// `flow_table` entries with us as source). The last one is the pair's
    /// default flow (ns-2 `DRTable`: the newest odd flow id). ns-2 never
    /// removes entries (`FlowTable::cleanup` returns at once); we drop the
    /// expired ones that can no longer matter ([`prune_flows`]), which keeps
    /// every result as it was.
    flows: BTreeMap<NodeId, Vec<SourceFlow>>,
    /// The latest send-buffer poll tick not after the present (`buffer_poll`);
    /// ticks are drawn lazily, only when a discovery needs the next one.
    poll_at: SimTime,
    /// Draws the poll intervals: the routing stream long-jumped (2^192 draws
    /// ahead), so that the jitter draws stay as they were.
    poll_rng: SimRng,
}

impl Dsr {
    /// DSR for node `me`, drawing jitter from `rng` (stream `Component::Routing`).
    pub fn new(me: NodeId, p: Params, rng: SimRng) -> Self {
        let counters = RoutingCounters::with_kinds(&packets::KINDS);
        let mut poll_rng = rng.clone();
        poll_rng.long_jump();
        Dsr {
            me,
            p,
            rng,
            cache: RouteCache::new(
                me,
                p.primary_cache_paths as usize,
                p.secondary_cache_paths as usize,
            ),
            requests: RequestTable::new(),
            buffer: SendBuffer::new(p.send_buffer_pkts, p.send_buffer_timeout),
            buffer_timer: Timer::new(),
            next_request_id: 1,
            held_error: None,
            grat_hold: vec![(Vec::new(), SimTime::ZERO); GRAT_HOLD_SLOTS],
            grat_victim: 0,
            tap_seen: vec![u64::MAX; TAP_SLOTS],
            pending_replies: BTreeMap::new(),
            next_pending: 0,
            counters,
            scratch: Vec::new(),
            talked_to: std::collections::BTreeSet::new(),
            flows: BTreeMap::new(),
            poll_at: SimTime::ZERO,
            poll_rng,
        }
    }

    /// The first send-buffer poll at or after `t` (≥ `now`): ns-2 reschedules
    /// its poll U(BUFFER_CHECK, 2·BUFFER_CHECK) after each one, from the
    /// agent's start; `t` itself without the poll. Ticks up to `now` are
    /// committed (drawn once); later ones are only looked ahead at, so that
    /// asking for a far tick (a 10 s backoff) does not hide the near ones.
    fn poll_at_or_after(&mut self, now: SimTime, t: SimTime) -> SimTime {
        let b = self.p.buffer_poll.0;
        if b == 0 {
            return t;
        }
        loop {
            let mut r = self.poll_rng.clone();
            let next = self.poll_at + SimDuration(b + r.gen_range(0..=b));
            if next > now {
                break;
            }
            self.poll_at = next;
            self.poll_rng = r;
        }
        if self.poll_at >= t {
            return self.poll_at;
        }
        let mut r = self.poll_rng.clone();
        let mut tick = self.poll_at;
        while tick < t {
            tick += SimDuration(b + r.gen_range(0..=b));
        }
        tick
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    pub fn cache(&self) -> &RouteCache {
        &self.cache
    }

    /// Packets waiting for a route.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    // ---- sending -----------------------------------------------------------------

    fn control(&self, ctx: &mut RoutingCtx, dst: NodeId, msg: DsrMessage) -> Packet {
        self.control_with_uid(ctx.new_uid(), dst, msg)
    }

    fn control_with_uid(&self, uid: u64, dst: NodeId, msg: DsrMessage) -> Packet {
        // ns-2 sends DSR control packets with TTL 255; hops are bounded by
        // the source route, so the IP TTL plays no part.
        Packet::control(
            uid,
            IpHeader::new(self.me, dst, u8::MAX, IpProto::Manet),
            RoutingMessage::Dsr(msg),
        )
    }

    fn count(&mut self, pkt: &Packet, forwarded: bool) {
        if let TransportHeader::Routing(RoutingMessage::Dsr(m)) = &pkt.transport {
            self.counters.on_send(m.kind(), pkt.size_bytes(), forwarded);
        }
    }

    fn jitter(&mut self) -> SimDuration {
        if self.p.broadcast_jitter.0 > 0 {
            SimDuration(self.rng.gen_range(0..self.p.broadcast_jitter.0))
        } else {
            SimDuration::ZERO
        }
    }

    fn broadcast(&mut self, ctx: &mut RoutingCtx, pkt: Packet, forwarded: bool) {
        self.count(&pkt, forwarded);
        let delay = self.jitter();
        ctx.actions.push(RoutingAction::Broadcast { pkt, delay });
    }

    /// Send a control packet along its own source route (`sr.next` is the
    /// index of the node it goes to).
    fn unicast_control(&mut self, ctx: &mut RoutingCtx, pkt: Packet, forwarded: bool) {
        let next_hop = match &pkt.transport {
            TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rrep(r))) => {
                r.sr.path[r.sr.next as usize]
            }
            TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rerr(r))) => {
                r.sr.path[r.sr.next as usize]
            }
            _ => unreachable!("only replies and errors travel on source routes"),
        };
        self.count(&pkt, forwarded);
        ctx.actions.push(RoutingAction::Forward { pkt, next_hop });
    }

    fn set_timer(ctx: &mut RoutingCtx, timer: &mut Timer, at: SimTime, key: u64) {
        let token = timer.arm(at);
        ctx.actions.push(RoutingAction::SetTimer { at, key, token });
    }

    /// Send a data packet on `route` (this node first).
    fn send_on_route(
        &mut self,
        ctx: &mut RoutingCtx,
        pkt: Packet,
        route: Vec<NodeId>,
        salvaged: u8,
    ) {
        self.send_on_route_after(ctx, pkt, route, salvaged, SimDuration::ZERO);
    }

    fn send_on_route_after(
        &mut self,
        ctx: &mut RoutingCtx,
        mut pkt: Packet,
        mut route: Vec<NodeId>,
        salvaged: u8,
        delay: SimDuration,
    ) {
        debug_assert_eq!(route[0], self.me);
        let flow = if self.p.flow_state && pkt.ip.src == self.me && !pkt.is_routing() {
            self.flow_for(ctx.now, pkt.ip.dst, &mut route)
        } else {
            FlowMark::None
        };
        let next_hop = route[1];
        let sr = SourceRoute {
            path: route,
            next: 1,
            salvaged,
            flow,
        };
        if let Some(old) = control_route_mut(&mut pkt) {
            // A reply or error sent afresh (re-routed, salvaged or released
            // from the send buffer): ns-2 traces each such send.
            *old = sr;
            let forwarded = pkt.ip.src != self.me;
            self.count(&pkt, forwarded);
        } else {
            pkt.source_route = Some(Box::new(sr));
        }
        if delay > SimDuration::ZERO {
            ctx.actions.push(RoutingAction::ForwardAfter {
                pkt,
                next_hop,
                delay,
            });
        } else {
            ctx.actions.push(RoutingAction::Forward { pkt, next_hop });
        }
    }

    /// ns-2 `sendOutPacketWithRoute`'s flow-state part for a data packet we
    /// originate on `route`: the default flow's route replaces it unless the
    /// cache's is shorter; the flow on that route is found or set up, and the
    /// packet carries the route while the flow is new (its first
    /// `FLOW_EST_COUNT` + 1 packets) or has not advertised it for
    /// `FLOW_ADV_INTERVAL_S`; otherwise it goes flow-only.
    fn flow_for(&mut self, now: SimTime, dst: NodeId, route: &mut Vec<NodeId>) -> FlowMark {
        let list = self.flows.entry(dst).or_default();
        prune_flows(list, now);
        choose_flow(list, now, route)
    }

    /// A link is broken: cut it from the cache and end our flows over it
    /// (ns-2 `noticeDeadLink` of the route cache and of the flow table).
    fn dead_link(&mut self, now: SimTime, from: NodeId, to: NodeId) {
        self.cache.dead_link(from, to);
        for list in self.flows.values_mut() {
            expire_flows_over(list, now, from, to);
            prune_flows(list, now);
        }
        self.flows.retain(|_, list| !list.is_empty());
    }

    // ---- send buffer -------------------------------------------------------------

    fn buffer_packet(&mut self, ctx: &mut RoutingCtx, pkt: Packet) {
        if let Some(old) = self.buffer.push(ctx.now, pkt) {
            // ns-2 `stickPacketInSendBuffer` evicts the oldest through
            // `dropSendBuff`, which logs it as a timeout (`DROP_RTR_QTIMEOUT`).
            ctx.actions.push(RoutingAction::Drop {
                pkt: old,
                reason: DropReason::SendBufferTimeout,
            });
        }
        self.arm_buffer_timer(ctx);
    }

    fn arm_buffer_timer(&mut self, ctx: &mut RoutingCtx) {
        match self.buffer.next_expiry() {
            Some(at) if self.buffer_timer.expires() != Some(at) => {
                Self::set_timer(ctx, &mut self.buffer_timer, at, KEY_BUFFER)
            }
            Some(_) => {}
            None => self.buffer_timer.cancel(),
        }
    }

    /// Send every buffered packet whose destination the cache now reaches
    /// (ns-2 `sendBufferCheck`), all at once.
    fn release_buffered(&mut self, ctx: &mut RoutingCtx) {
        self.release_buffered_spaced(ctx, SimDuration::ZERO);
    }

    /// The same, `spacing` apart (ns-2 `acceptRouteReply` spaces the packets a
    /// reply releases by `arp_timeout`, 30 ms, "to give ARP time").
    fn release_buffered_spaced(&mut self, ctx: &mut RoutingCtx, spacing: SimDuration) {
        if self.buffer.is_empty() {
            return;
        }
        let mut delay = SimDuration::ZERO;
        for dst in self.buffer.destinations() {
            let Some(route) = self.cache.find(dst, true) else {
                continue;
            };
            let mut out = std::mem::take(&mut self.scratch);
            self.buffer.take_for(dst, &mut out);
            for pkt in out.drain(..) {
                // A packet keeps its salvage count while it waits (ns-2
                // re-routes it with `handlePktWithoutSR`, which leaves it).
                let salvaged = route_of(&pkt).map_or(0, |s| s.salvaged);
                self.send_on_route_after(ctx, pkt, route.clone(), salvaged, delay);
                delay = delay + spacing;
            }
            self.scratch = out;
            if let Some(d) = self.requests.get(dst) {
                if d.started.is_some() {
                    // Learned without a reply for this target (overheard, or a
                    // reply for another target): the discovery is over, but
                    // ns-2 keeps its backoff (`learned_route_resets_backoff`).
                    self.discovery_done(
                        ctx,
                        dst,
                        route.len() - 1,
                        self.p.learned_route_resets_backoff,
                    );
                }
            }
        }
        self.arm_buffer_timer(ctx);
    }

    /// A link was cut from the cache: tell the transport about every destination
    /// we send to that no cached route reaches any more (ERDN, for ELFN).
    fn notify_lost_routes(&mut self, ctx: &mut RoutingCtx) {
        let lost: Vec<NodeId> = self
            .talked_to
            .iter()
            .copied()
            .filter(|&d| self.cache.find(d, false).is_none())
            .collect();
        for dst in lost {
            ctx.actions
                .push(RoutingAction::Notify(TransportNotice::RouteFailed { dst }));
        }
    }

    fn discovery_done(
        &mut self,
        ctx: &mut RoutingCtx,
        target: NodeId,
        hops: usize,
        reset_backoff: bool,
    ) {
        if self.talked_to.contains(&target) {
            // ERSN: a route to a destination we send to was found again.
            ctx.actions
                .push(RoutingAction::Notify(TransportNotice::RouteReestablished {
                    dst: target,
                }));
        }
        let started = if reset_backoff {
            self.requests.route_found(target)
        } else {
            self.requests.route_learned(target)
        };
        if let Some(started) = started {
            self.counters.routes_found += 1;
            self.counters.route_hops_sum += hops as u64;
            self.counters.discovery_time_sum_s += ctx.now.since(started).as_secs_f64();
        }
    }

    // ---- route discovery (§8.2.1) --------------------------------------------------

    /// A packet for `dst` from `src` needs a route (ns-2 `getRouteForPacket`
    /// with `BackOffTest`): start a request cycle if one is due, else turn a
    /// non-propagating request nobody answered into a propagating one. A
    /// packet this node only forwards may start at most `salvage_requests`
    /// cycles, non-propagating ones (ns-2 `NEW_SALVAGE_LOGIC`); returns false
    /// when such a packet has had its chance and must be dropped.
    fn get_route(&mut self, ctx: &mut RoutingCtx, dst: NodeId, own: bool) -> bool {
        let now = ctx.now;
        let p = self.p;
        let d = self.requests.target(dst);
        let cycle_due = d
            .last_cycle
            .is_none_or(|t| now >= t + p.cycle_backoff(d.outstanding));
        let kind = if cycle_due {
            d.outstanding = (d.outstanding + 1).min(15);
            d.last_cycle = Some(now);
            if !own && d.outstanding > p.salvage_requests {
                return false;
            }
            if d.started.is_none() {
                d.started = Some(now);
                self.counters.discoveries += 1;
            } else {
                self.counters.request_retries += 1;
            }
            Some(if p.ring_zero_search {
                RequestKind::NonPropagating
            } else {
                RequestKind::Propagating
            })
        } else if own
            && d.last_kind == RequestKind::NonPropagating
            && now >= d.last_request + p.nonprop_request_timeout
        {
            // No neighbour answered the non-propagating request: flood.
            self.counters.request_retries += 1;
            Some(RequestKind::Propagating)
        } else {
            None
        };
        if let Some(kind) = kind {
            self.send_rreq(ctx, dst, kind);
        }
        true
    }

    /// When to look at the discovery for `dst` again.
    fn arm_discovery_timer(&mut self, ctx: &mut RoutingCtx, dst: NodeId) {
        let p = self.p;
        let now = ctx.now;
        let d = self.requests.target(dst);
        let due = match d.last_kind {
            // ns-2 floods only once more than arp_timeout has passed.
            RequestKind::NonPropagating if d.last_request + p.nonprop_request_timeout > now => {
                d.last_request + p.nonprop_request_timeout
            }
            _ => d
                .last_cycle
                .map_or(now, |t| t + p.cycle_backoff(d.outstanding)),
        };
        let at = self.poll_at_or_after(now, due.max(now));
        let d = self.requests.target(dst);
        if d.timer.expires() != Some(at) {
            Self::set_timer(ctx, &mut d.timer, at, KEY_DISCOVERY | dst.0 as u64);
        }
    }

    /// ns-2 `sendBufferCheck` for `dst`: every packet waiting for it asks for
    /// a route in turn; forwarded ones past their request are dropped.
    fn need_route(&mut self, ctx: &mut RoutingCtx, dst: NodeId) {
        let waiting: Vec<(u64, bool)> = self
            .buffer
            .iter()
            .filter(|p| p.ip.dst == dst)
            .map(|p| (p.uid, p.ip.src == self.me))
            .collect();
        let mut doomed: Vec<u64> = Vec::new();
        for (uid, own) in waiting {
            if !self.get_route(ctx, dst, own) {
                doomed.push(uid);
            }
        }
        if !doomed.is_empty() {
            let mut out = std::mem::take(&mut self.scratch);
            self.buffer
                .take_matching(|p| p.ip.dst == dst && doomed.contains(&p.uid), &mut out);
            for pkt in out.drain(..) {
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::NoRoute,
                });
            }
            self.scratch = out;
            self.arm_buffer_timer(ctx);
        }
        self.arm_discovery_timer(ctx, dst);
    }

    fn send_rreq(&mut self, ctx: &mut RoutingCtx, dst: NodeId, kind: RequestKind) {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1);
        let max_propagation = match kind {
            RequestKind::NonPropagating => 0,
            RequestKind::Propagating => self.p.max_route_len,
        };
        // §8.2.1 / ns-2: the last route error we received rides on our requests
        // (until one propagating request has carried it), so that nodes with
        // the broken link cached do not answer from their caches.
        let mut error = None;
        if self.p.propagate_last_error {
            if let Some((from, to, t)) = self.held_error {
                if ctx.now.since(t) < self.p.error_hold {
                    error = Some((from, to));
                    if kind == RequestKind::Propagating {
                        self.held_error = None;
                    }
                } else {
                    self.held_error = None;
                }
            }
        }
        let rq = Rreq {
            id,
            target: dst,
            path: vec![self.me],
            max_propagation,
            error,
            stale_bytes: 0,
        };
        let pkt = self.control(ctx, IP_BROADCAST, DsrMessage::Rreq(rq));
        self.broadcast(ctx, pkt, false);
        let d = self.requests.target(dst);
        d.last_request = ctx.now;
        d.last_kind = kind;
    }

    fn discovery_timer(&mut self, ctx: &mut RoutingCtx, dst: NodeId, token: TimerToken) {
        if self.requests.get(dst).is_none() || !self.requests.target(dst).timer.fire(token) {
            return;
        }
        if self.buffer.has_for(dst) {
            if self.cache.find(dst, false).is_some() {
                self.release_buffered(ctx);
            } else {
                self.need_route(ctx, dst);
            }
        } else {
            // Nothing waits any more (sent on a route learned meanwhile, or
            // timed out in the buffer): the discovery stops here.
            let d = self.requests.target(dst);
            if d.started.take().is_some() && self.cache.find(dst, false).is_none() {
                self.counters.discoveries_failed += 1;
            }
        }
    }

    // ---- control packets -------------------------------------------------------------

    fn recv_rreq(&mut self, ctx: &mut RoutingCtx, mut rq: Rreq, uid: u64) {
        if rq.path[0] == self.me {
            return; // our own request, rebroadcast by a neighbour
        }
        if let Some((from, to)) = rq.error {
            self.dead_link(ctx.now, from, to);
        }
        let originator = rq.path[0];
        if rq.target == self.me {
            // §8.2.4: reply to every copy (ns-2: `dsragent_reply_only_to_first_rtreq`
            // is false), by the reversed route.
            self.requests.record(originator, rq.id);
            if rq.path.len() >= self.p.max_route_len as usize {
                return;
            }
            let mut route = rq.path.clone();
            route.push(self.me);
            let back: Vec<NodeId> = route.iter().rev().copied().collect();
            self.cache.add_route(&back);
            let rp = Rrep {
                route,
                req_id: rq.id,
                sr: SourceRoute::outbound(back),
            };
            let pkt = self.control(ctx, originator, DsrMessage::Rrep(rp));
            // ns-2 jitters the target's replies: they answer a broadcast.
            let delay = self.jitter();
            self.schedule_reply(ctx, pkt, delay);
            self.release_buffered(ctx);
            return;
        }
        // §8.2.2 / ns-2 `ignoreRouteRequestp`.
        if self.requests.seen(originator, rq.id) {
            self.counters.duplicate_requests += 1;
            return;
        }
        if rq.path.contains(&self.me) || rq.path.len() >= self.p.max_route_len as usize {
            return;
        }
        self.requests.record(originator, rq.id);
        if (rq.max_propagation == 0 || self.p.reply_from_cache) && self.reply_from_cache(ctx, &rq) {
            return;
        }
        if rq.path.len() > rq.max_propagation as usize {
            return; // a non-propagating request ends at the neighbours
        }
        if self.p.request_size_bug {
            rq.stale_bytes += rq.header_bytes();
        }
        rq.path.push(self.me);
        let pkt = Packet::control(
            uid,
            IpHeader::new(originator, IP_BROADCAST, u8::MAX, IpProto::Manet),
            RoutingMessage::Dsr(DsrMessage::Rreq(rq)),
        );
        self.broadcast(ctx, pkt, true);
    }

    /// §8.2.3: answer `rq` with a cached route if the joined route still
    /// passes through this node once loops are removed (ns-2 `replyFromRouteCache`).
    fn reply_from_cache(&mut self, ctx: &mut RoutingCtx, rq: &Rreq) -> bool {
        let Some(rest) = self.cache.find(rq.target, false) else {
            return false;
        };
        if rest.len() + rq.path.len() > self.p.max_route_len as usize {
            return false;
        }
        let joined: Vec<NodeId> = rq.path.iter().chain(rest.iter()).copied().collect();
        let route = compress_path(&joined);
        if !route.contains(&self.me) {
            return false;
        }
        let back: Vec<NodeId> = std::iter::once(self.me)
            .chain(rq.path.iter().rev().copied())
            .collect();
        self.cache.add_route(&back);
        let rp = Rrep {
            route,
            req_id: rq.id,
            sr: SourceRoute::outbound(back),
        };
        let pkt = self.control(ctx, rq.path[0], DsrMessage::Rrep(rp));
        self.counters.replies_from_cache += 1;
        self.unicast_control(ctx, pkt, false);
        true
    }

    fn schedule_reply(&mut self, ctx: &mut RoutingCtx, pkt: Packet, delay: SimDuration) {
        if delay == SimDuration::ZERO {
            self.unicast_control(ctx, pkt, false);
            return;
        }
        let n = self.next_pending;
        self.next_pending = self.next_pending.wrapping_add(1);
        let mut timer = Timer::new();
        Self::set_timer(ctx, &mut timer, ctx.now + delay, KEY_REPLY | n as u64);
        self.pending_replies.insert(n, (timer, pkt));
    }

    fn recv_rrep(&mut self, ctx: &mut RoutingCtx, mut rp: Rrep, ip: IpHeader, uid: u64) {
        let k = rp.sr.next as usize;
        if rp.sr.path.get(k) != Some(&self.me) {
            return;
        }
        if k + 1 == rp.sr.path.len() {
            self.accept_reply(ctx, &rp.route);
            return;
        }
        // Relay it on; its route back to the originator is worth caching (ns-2
        // `handleForwarding` snoops every source route it forwards).
        self.cache.notice_route_used(&rp.sr.path, None);
        rp.sr.next += 1;
        let pkt = Packet::control(uid, ip, RoutingMessage::Dsr(DsrMessage::Rrep(rp)));
        self.unicast_control(ctx, pkt, true);
        self.release_buffered(ctx);
    }

    /// §8.2.5: a reply for us: cache the route and send what waited for it.
    fn accept_reply(&mut self, ctx: &mut RoutingCtx, route: &[NodeId]) {
        if !self.cache.add_route(route) {
            return;
        }
        let target = *route.last().expect("a route has two nodes");
        self.discovery_done(ctx, target, route.len() - 1, true);
        self.release_buffered_spaced(ctx, self.p.release_spacing);
    }

    /// `received_bytes`: the error packet's size as it arrived.
    fn recv_rerr(
        &mut self,
        ctx: &mut RoutingCtx,
        mut re: Rerr,
        ip: IpHeader,
        uid: u64,
        received_bytes: u32,
    ) {
        // §8.3.5: every node the error passes cuts the link (ns-2
        // `dsragent_snoop_forwarded_errors`).
        self.dead_link(ctx.now, re.from, re.to);
        for &(_, from, to) in &re.nested {
            self.dead_link(ctx.now, from, to);
        }
        let k = re.sr.next as usize;
        if re.sr.path.get(k) != Some(&self.me) {
            return;
        }
        if k + 1 == re.sr.path.len() {
            self.held_error = Some((re.from, re.to, ctx.now));
            self.notify_lost_routes(ctx);
            // ns-2 `processBrokenRouteError`: the errors it was nested around
            // go on to the next one's `tell`, as a packet of our own. When
            // that is us too, ns-2 receives its own copy (`handlePktWithoutSR`
            // → `handlePacketReceipt`) and unwraps again.
            while let Some((tell, from, to)) = re.nested.pop() {
                if tell == self.me {
                    self.held_error = Some((from, to, ctx.now));
                    continue;
                }
                let mut sr = SourceRoute::new(vec![self.me]);
                if self.p.error_keeps_salvage_count {
                    // ns-2 sends a copy of the error it received.
                    sr.salvaged = re.sr.salvaged;
                }
                let inner = Rerr {
                    from,
                    to,
                    tell,
                    nested: std::mem::take(&mut re.nested),
                    sr,
                };
                let pkt = if self.p.unwrapped_error_copies_packet {
                    // ns-2 copies the received packet (`Packet::copy`): the
                    // same uid, and a size that still counts everything the
                    // received error had (its IP and DSR headers; nothing
                    // took them off yet), `sendOutPacketWithRoute` adding the
                    // new header on top.
                    let mut p = self.control_with_uid(uid, tell, DsrMessage::Rerr(inner));
                    p.ip.extra_bytes = received_bytes
                        .saturating_sub(IP_HEADER_BYTES)
                        .min(u8::MAX as u32) as u8;
                    p
                } else {
                    self.control(ctx, tell, DsrMessage::Rerr(inner))
                };
                self.originate(ctx, pkt);
                break;
            }
            return;
        }
        self.cache.notice_route_used(&re.sr.path, None);
        re.sr.next += 1;
        let pkt = Packet::control(uid, ip, RoutingMessage::Dsr(DsrMessage::Rerr(re)));
        self.unicast_control(ctx, pkt, true);
    }

    // ---- route maintenance (§8.3) ----------------------------------------------------

    /// §8.3.4: tell the first node of `sr` that the link from us to `to` broke,
    /// along the part of the route already travelled, reversed.
    /// `nested`: the errors the failed packet carried, if it was an error.
    fn send_rerr(
        &mut self,
        ctx: &mut RoutingCtx,
        sr: &SourceRoute,
        to: NodeId,
        nested: Vec<(NodeId, NodeId, NodeId)>,
    ) {
        let k = (sr.next as usize).saturating_sub(1);
        let tell = sr.path[0];
        if tell == self.me
            || sr.path.get(k) != Some(&self.me)
            || nested.len() >= packets::MAX_ROUTE_ERRORS
        {
            return;
        }
        let back: Vec<NodeId> = sr.path[..=k].iter().rev().copied().collect();
        let mut route = SourceRoute::outbound(back);
        if self.p.error_keeps_salvage_count {
            // ns-2 `xmitFailed` rewrites the failed packet into the error.
            route.salvaged = sr.salvaged;
        }
        let re = Rerr {
            from: self.me,
            to,
            tell,
            nested,
            sr: route,
        };
        let pkt = self.control(ctx, tell, DsrMessage::Rerr(re));
        self.unicast_control(ctx, pkt, false);
    }

    /// A packet that cannot go on its route (ns-2 `undeliverablePkt`), data or
    /// a reply or error: our own is routed afresh; one we forward is salvaged
    /// if the cache has another route (§8.3.6), else waits in the send buffer
    /// for a route of its own (ns-2 `NEW_SALVAGE_LOGIC`) or is dropped.
    /// `dead` is the neighbour that could not be reached.
    fn undeliverable(&mut self, ctx: &mut RoutingCtx, mut pkt: Packet, dead: NodeId) {
        let salvaged = route_of(&pkt).map_or(0, |s| s.salvaged);
        if pkt.ip.src == self.me {
            self.originate(ctx, pkt);
            return;
        }
        if !self.p.salvage || salvaged >= self.p.max_salvage_count {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::NoRoute,
            });
            return;
        }
        match self.cache.find(pkt.ip.dst, false) {
            Some(route) => {
                // ns-2 `dsragent_dont_salvage_bad_replies`: a reply listing
                // the dead link (either way) is not worth saving.
                if let TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rrep(rp))) =
                    &pkt.transport
                {
                    if rp.route.windows(2).any(|w| {
                        (w[0] == self.me && w[1] == dead) || (w[0] == dead && w[1] == self.me)
                    }) {
                        ctx.actions.push(RoutingAction::Drop {
                            pkt,
                            reason: DropReason::MacCallback,
                        });
                        return;
                    }
                }
                self.counters.salvaged += 1;
                pkt.source_route = None;
                self.send_on_route(ctx, pkt, route, salvaged + 1);
            }
            None if self.p.salvage_requests > 0 => {
                let dst = pkt.ip.dst;
                if self.p.buffer_poll > SimDuration::ZERO {
                    // ns-2 only buffers it: its next poll asks for the route.
                    self.buffer_packet(ctx, pkt);
                } else if self.get_route(ctx, dst, false) {
                    self.buffer_packet(ctx, pkt);
                } else {
                    ctx.actions.push(RoutingAction::Drop {
                        pkt,
                        reason: DropReason::NoRoute,
                    });
                }
                self.arm_discovery_timer(ctx, dst);
            }
            None => ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::NoRoute,
            }),
        }
    }

    /// A packet this node originates: on a cached route, else buffered while a
    /// route is discovered.
    ///
    /// A packet of ours sent again (ns-2 `handlePktWithoutSR`) keeps its
    /// salvage count: an error that inherited one, or data salvaged by others
    /// back through us (lost if it has to wait in the buffer: data waits there
    /// without a route).
    fn originate(&mut self, ctx: &mut RoutingCtx, mut pkt: Packet) {
        let dst = pkt.ip.dst;
        let salvaged = route_of(&pkt).map_or(0, |s| s.salvaged);
        pkt.source_route = None;
        mark_tcp_ip_twice(&mut pkt, self.p.tcp_ip_header_twice);
        if !pkt.is_routing() {
            self.talked_to.insert(dst);
        }
        match self.cache.find(dst, true) {
            Some(route) => self.send_on_route(ctx, pkt, route, salvaged),
            None => {
                // ns-2 asks for a route for the new packet alone, then buffers it.
                self.get_route(ctx, dst, true);
                self.buffer_packet(ctx, pkt);
                self.arm_discovery_timer(ctx, dst);
            }
        }
    }

    // ---- promiscuous tap (§3.3.1, §3.4.3) ------------------------------------------

    /// §3.4.3: we overheard `sr` sent towards `path[heard_at]` though we come
    /// later on it, at `xmit_at`: tell its first node that the hops between
    /// can go (ns-2 `sendRouteShortening`).
    fn route_shortening(
        &mut self,
        ctx: &mut RoutingCtx,
        sr: &SourceRoute,
        heard_at: usize,
        xmit_at: usize,
    ) {
        let now = ctx.now;
        match self.grat_hold.iter().position(|(r, _)| *r == sr.path) {
            Some(i) if now.since(self.grat_hold[i].1) < self.p.grat_reply_holdoff => return,
            Some(i) => self.grat_hold[i].1 = now,
            None => {
                let v = self.grat_victim;
                self.grat_hold[v].0 = sr.path.clone();
                self.grat_victim = (v + 1) % GRAT_HOLD_SLOTS;
                // ns-2 `sendRouteShortening` stamps the slot after the one it
                // filled (it advances `grat_hold_victim` before taking the
                // entry): the new route keeps that slot's old time (0 at
                // first), so its next shortening is not held down.
                let stamped = if self.p.grat_holdoff_bug {
                    self.grat_victim
                } else {
                    v
                };
                self.grat_hold[stamped].1 = now;
            }
        }
        let first = sr.path[0];
        if first == self.me || heard_at == 0 {
            return;
        }
        let short: Vec<NodeId> = sr.path[..heard_at]
            .iter()
            .chain(sr.path[xmit_at..].iter())
            .copied()
            .collect();
        let back: Vec<NodeId> = std::iter::once(self.me)
            .chain(sr.path[..heard_at].iter().rev().copied())
            .collect();
        self.cache.add_route(&back);
        let rp = Rrep {
            route: short,
            req_id: 0,
            sr: SourceRoute::outbound(back),
        };
        let pkt = self.control(ctx, first, DsrMessage::Rrep(rp));
        self.counters.gratuitous_replies += 1;
        self.unicast_control(ctx, pkt, false);
    }
}

impl Routing for Dsr {
    fn name(&self) -> &'static str {
        "dsr"
    }

    fn promiscuous(&self) -> bool {
        self.p.promiscuous
    }

    fn route(&mut self, ctx: &mut RoutingCtx, mut pkt: Packet) {
        let Some(sr) = pkt.source_route.as_mut() else {
            if pkt.ip.src == self.me {
                self.originate(ctx, pkt);
            } else {
                // Only DSR data (with a source route) is forwarded.
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::NoRoute,
                });
            }
            return;
        };
        // §8.1.5: forward by the source route. We must be the node it was sent to.
        let k = sr.next as usize;
        if sr.path.get(k) != Some(&self.me) || k + 1 >= sr.path.len() {
            // ns-2 "ran off the end of a source route": DROP_RTR_ROUTE_LOOP.
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::RouteLoop,
            });
            return;
        }
        sr.next += 1;
        let next_hop = sr.path[k + 1];
        // A flow-only packet shows no route to learn from (ns-2
        // `handleForwarding` returns after flow forwarding).
        let learned = sr.on_air() && self.cache.notice_route_used(&sr.path, None);
        ctx.actions.push(RoutingAction::Forward { pkt, next_hop });
        if learned {
            self.release_buffered(ctx);
        }
    }

    fn tx_failed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId) {
        // ns-2 `xmitFailed`: the link is gone from the cache, the packet is
        // saved if possible, the queue is purged of packets for that neighbour,
        // and the route's first node hears of it.
        self.dead_link(ctx.now, self.me, next_hop);
        self.counters.route_breaks += 1;
        self.notify_lost_routes(ctx);
        // Replies and errors are treated like data (ns-2 `xmitFailed` does not
        // tell them apart): saved if possible, and reported to their route's
        // first node; a failed error is nested inside the new one.
        let Some(sr) = route_of(&pkt).cloned() else {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::RetryLimit,
            });
            ctx.actions.push(RoutingAction::ReclaimQueued { next_hop });
            return;
        };
        let nested = match &pkt.transport {
            TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rerr(re))) => {
                let mut v = re.nested.clone();
                v.push((re.tell, re.from, re.to));
                v
            }
            _ => Vec::new(),
        };
        self.undeliverable(ctx, pkt, next_hop);
        ctx.actions.push(RoutingAction::ReclaimQueued { next_hop });
        self.send_rerr(ctx, &sr, next_hop, nested);
    }

    fn reclaimed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId) {
        if route_of(&pkt).is_none() {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::MacCallback,
            });
        } else {
            self.undeliverable(ctx, pkt, next_hop);
        }
    }

    fn recv_control(&mut self, ctx: &mut RoutingCtx, pkt: Packet, _from: NodeId) {
        let (ip, uid, received_bytes) = (pkt.ip, pkt.uid, pkt.size_bytes());
        let msg = match pkt.transport {
            TransportHeader::Routing(RoutingMessage::Dsr(m)) => m,
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
        match msg {
            DsrMessage::Rreq(rq) => self.recv_rreq(ctx, rq, uid),
            DsrMessage::Rrep(rp) => self.recv_rrep(ctx, rp, ip, uid),
            DsrMessage::Rerr(re) => self.recv_rerr(ctx, re, ip, uid, received_bytes),
        }
    }

    fn overheard(&mut self, ctx: &mut RoutingCtx, pkt: &Packet, _from: NodeId, _to: NodeId) {
        if !self.p.promiscuous || pkt.ip.src == self.me {
            return;
        }
        if pkt.source_route.as_deref().is_some_and(|sr| !sr.on_air()) {
            // ns-2 `tap` hands flow-only packets to `processFlowARS`, whose
            // route shortening never fires (`handleFlowForwarding` tests
            // `p.route.index() - amt > 0` on a route-less packet, index 0);
            // nothing is learned and the uid is not remembered.
            return;
        }
        // Each packet once, however many hops or retries we overhear (ns-2
        // `DSR_FILTER_TAP`).
        let slot = (pkt.uid as usize) & (TAP_SLOTS - 1);
        if self.tap_seen[slot] == pkt.uid {
            return;
        }
        self.tap_seen[slot] = pkt.uid;
        let learned = match &pkt.transport {
            // ns-2 `tap` also snoops the source route a reply or an error
            // travels on (`dsragent_snoop_source_routes`), as for data.
            TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rerr(re))) => {
                self.dead_link(ctx.now, re.from, re.to);
                for &(_, from, to) in &re.nested {
                    self.dead_link(ctx.now, from, to);
                }
                self.cache
                    .notice_route_used(&re.sr.path, Some((re.sr.next as usize).saturating_sub(1)))
            }
            TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rrep(rp))) => {
                let a = self.cache.notice_route_used(&rp.route, None);
                let b = self
                    .cache
                    .notice_route_used(&rp.sr.path, Some((rp.sr.next as usize).saturating_sub(1)));
                a || b
            }
            TransportHeader::Routing(_) => false,
            _ => {
                let Some(sr) = pkt.source_route.as_deref() else {
                    return;
                };
                let heard_at = sr.next as usize; // the node it was sent to
                let learned = self
                    .cache
                    .notice_route_used(&sr.path, Some(heard_at.saturating_sub(1)));
                if self.p.gratuitous_replies {
                    if let Some(i) = sr.path.iter().position(|&n| n == self.me) {
                        if i > heard_at {
                            let sr = sr.clone();
                            self.route_shortening(ctx, &sr, heard_at, i);
                        }
                    }
                }
                learned
            }
        };
        if learned {
            self.release_buffered(ctx);
        }
    }

    fn timer(&mut self, ctx: &mut RoutingCtx, key: u64, token: TimerToken) {
        match key & !0xffff_ffff {
            KEY_DISCOVERY => self.discovery_timer(ctx, NodeId(key as u32), token),
            KEY_BUFFER => {
                if self.buffer_timer.fire(token) {
                    let mut out = std::mem::take(&mut self.scratch);
                    self.buffer.expire(ctx.now, &mut out);
                    for pkt in out.drain(..) {
                        ctx.actions.push(RoutingAction::Drop {
                            pkt,
                            reason: DropReason::SendBufferTimeout,
                        });
                    }
                    self.scratch = out;
                    self.arm_buffer_timer(ctx);
                }
            }
            KEY_REPLY => {
                let n = key as u32;
                if let Some((mut timer, pkt)) = self.pending_replies.remove(&n) {
                    if timer.fire(token) {
                        self.unicast_control(ctx, pkt, false);
                    }
                }
            }
            _ => unreachable!("unknown DSR timer key {key:#x}"),
        }
    }

    fn counters(&self) -> Option<&RoutingCounters> {
        Some(&self.counters)
    }

    fn buffered(&self, f: &mut dyn FnMut(&Packet)) {
        self.buffer.iter().for_each(f);
    }
}

#[cfg(test)]
mod tests;
