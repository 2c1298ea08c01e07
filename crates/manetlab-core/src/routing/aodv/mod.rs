//! Ad hoc On-Demand Distance Vector routing: RFC 3561 (Perkins, Belding-Royer,
//! Das, 2003), with ns-2.35's `aodv/` choices as defaults (docs/routing.md).
//!
//! Implemented (RFC sections):
//! * §6.1 own and destination sequence numbers, compared in signed 32-bit
//!   arithmetic; §6.2 route-table freshness rules, lifetimes refreshed on use,
//!   precursor lists ([`table`]);
//! * §6.3–6.4 route discovery: RREQ flooding with the (originator, RREQ ID)
//!   cache ([`rreq_cache`]), expanding-ring search (TTL_START, TTL_INCREMENT,
//!   TTL_THRESHOLD, NET_DIAMETER), RREQ_RETRIES network-wide retries with binary
//!   exponential backoff of the wait, packets buffered meanwhile ([`send_buffer`]);
//! * §6.5 reverse routes; §6.6 replies by the destination and by intermediate
//!   nodes with a fresh-enough route, gratuitous RREPs (G flag, option);
//! * §6.7 forward routes from RREPs, forwarded only if they updated the route;
//! * §6.9 HELLO messages (option); by default link breaks come from the MAC's
//!   retry failures (link-layer feedback), as in ns-2;
//! * §6.11 RERR with precursor lists: link breaks, data for which there is no
//!   route, RERR propagation upstream;
//! * §6.12 local repair of a break closer to the destination than to the source.
//!
//! Not implemented: multicast (J/R flags), RREP-ACK and blacklists for
//! unidirectional links (§6.8), subnet routes, RREQ/RERR rate limits (ns-2 has
//! none either), the N flag after a longer repaired route, reboot handling (§6.13).
//! Deviations from ns-2 and the RFC are listed in docs/routing.md.
//!
//! Broadcasts that a node forwards (RREQ, propagated RERR) are delayed by
//! U(0, `broadcast_jitter`) drawn from the node's `Component::Routing` stream,
//! as ns-2 does, so that neighbours rebroadcasting the same request do not
//! collide systematically.

use crate::wire::aodv as packets;
pub mod rreq_cache;
mod rules_ns2;
mod rules_rfc;
pub use super::send_buffer;
pub mod table;

pub use crate::wire::aodv::{AodvMessage, Hello, Rerr, Rrep, Rreq};
pub use rreq_cache::RreqCache;
pub use rules_ns2::ns2_reply_lifetime;
pub use send_buffer::SendBuffer;
pub use table::{seq_newer, Route, RouteInfo, RouteState, RouteTable};

use super::{Routing, RoutingAction, RoutingCtx, RoutingMessage};
use crate::ids::NodeId;
use crate::param::{Fidelity, ParamChoice};
use crate::routing::RoutingCounters;
use crate::sim::{SimDuration, SimRng, SimTime, Timer, TimerToken};
use crate::wire::DropReason;
use crate::wire::TransportNotice;
use crate::wire::{IpHeader, IpProto, Packet, TransportHeader, IP_BROADCAST, IP_HEADER_BYTES};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a node learns that a link to a neighbour broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkDetection {
    /// The MAC's retry limit (ns-2 `AODV_LINK_LAYER_DETECTION`, the default).
    Mac,
    /// Missing HELLO messages (RFC 3561 §6.9).
    Hello,
}

/// Which discovery and maintenance rules AODV follows (docs/routing.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rules {
    /// ns-2.35's `aodv.cc`: requests (re)sent by a 0.5 s route-purge timer or
    /// the next packet once their deadline has passed, linear backoff, per-hop
    /// time measured from past discoveries, even sequence numbers, no routes to
    /// neighbours, lifetimes refreshed on the destination route only, RERRs for
    /// every broken route, ns-2's local repair.
    Ns2,
    /// RFC 3561 as written (timers at the exact deadlines, binary backoff,
    /// NODE_TRAVERSAL_TIME, §6.12 local repair, ...).
    Rfc3561,
}

crate::param_choice!(LinkDetection, ["mac", "hello"]);
crate::param_choice!(Rules, ["ns2", "rfc3561"]);

crate::params! {
    /// Every AODV timer and constant, declared once (crate::param): `Default`
    /// is ns-2.35's value, the `standard` profile RFC 3561 §10's
    /// ([`Params::rfc3561`]); each field's doc gives the RFC value where it differs.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Params {
    /// Discovery and maintenance rules. ns-2's by default.
    pub rules: Rules = Rules::Ns2,
        { key: "rules", unit: NONE, allowed: Choice(Rules::CHOICES), source: "ns-2.35 aodv.cc; RFC 3561 §6" },
    /// ns-2 rules: a destination never routed before is asked for with a
    /// network-wide request at once. In ns-2 a new entry's last hop count is
    /// `INFINITY2`, so `sendRequest` never uses TTL_START (an ns-2 bug; false
    /// gives the intended expanding ring from TTL_START).
    pub first_request_network_wide: bool = true,
        { key: "first_request_network_wide", unit: NONE, allowed: Any, source: "ns-2 aodv.cc sendRequest (rt_last_hop_count = INFINITY2); RFC 3561 §6.4: TTL_START ring" },
    /// ns-2 rules: the local-repair timer is scheduled with the request's
    /// absolute deadline as its *delay* (`schedule(&lrtimer, p, rt_req_timeout)`),
    /// so it fires at about twice the current time (an ns-2 bug; false: at the
    /// deadline). When it fires an unrepaired route is brought down silently.
    pub repair_timer_bug: bool = true,
        { key: "local_repair_timer_bug", unit: NONE, allowed: Any, source: "ns-2 aodv.cc local_rt_repair: schedule(&lrtimer, p, rt_req_timeout)" },
    /// ns-2 rules: a local repair asks for the broken route's number + 1
    /// (RFC §6.12). ns-2 asks with the same number (`rt_seqno++` is commented
    /// out), so the neighbours, which hold that number, answer instead of
    /// passing the request on, and ns-2 refuses their replies (same number, no
    /// fewer hops: [`RouteTable::update_ns2`]): the route stays in repair, its
    /// packets buffered, until a newer number turns up or the retries run out.
    /// An ns-2 bug, off by default.
    pub local_repair_new_seq: bool = false,
        { key: "local_repair_new_seq", unit: NONE, allowed: Any, source: "RFC 3561 §6.12 (number + 1); ns-2 aodv.cc local_rt_repair (rt_seqno++ commented out)" },
    /// ns-2 rules: an intermediate node replies with lifetime
    /// `(u_int32_t)(rt_expire − now)`, and for a route in repair (where
    /// `sendRequest` set rt_expire to 0) that difference is −now: ns-2.35's
    /// x86-64 build truncates it to a 64-bit integer (`cvttsd2si`) and keeps
    /// the low 32 bits, so the reply advertises about 2³² s and every node
    /// that takes it holds the route until data refreshes it to
    /// ACTIVE_ROUTE_TIMEOUT. (An expired route not yet purged is at most the
    /// purge interval past, which truncates to 0.) An
    /// ns-2 bug (true reproduces it; false: a lifetime of 0).
    pub reply_lifetime_wraps: bool = true,
        { key: "reply_lifetime_wraps", unit: NONE, allowed: Any, source: "ns-2 aodv.cc recvRequest: (u_int32_t)(rt_expire − now)" },
    /// A RERR from a neighbour drops every packet queued for that neighbour
    /// (ns-2 `recvError` → `ifqueue->filter`). ns-2: on.
    pub rerr_purges_queue: bool = true,
        { key: "rerr_purges_queue", unit: NONE, allowed: Any, source: "ns-2 aodv.cc recvError → ifqueue->filter" },
    /// Packets released from the send buffer by a reply or the purge timer
    /// leave this far apart (ns-2 `ARP_DELAY` 10 ms, "to keep ARP happy").
    pub release_spacing: SimDuration = SimDuration::from_millis(10),
        { key: "release_spacing_ms", unit: MS, allowed: Time { positive: false }, source: "ns-2 aodv.h ARP_DELAY" },
    /// ns-2 rules: period of the route-purge timer (`rt_purge`, 0.5 s), which
    /// expires routes, releases buffered packets and retries requests.
    pub route_purge_interval: SimDuration = SimDuration::from_millis(500),
        { key: "route_purge_interval_s", unit: S, allowed: Time { positive: true }, source: "ns-2 aodv.cc rt_purge, FREQUENCY" },
    /// Lifetime of a route after it is used for data (ACTIVE_ROUTE_TIMEOUT).
    /// ns-2 10 s; RFC 3 s.
    pub active_route_timeout: SimDuration = SimDuration::from_secs_f64(10.0),
        { key: "active_route_timeout_s", unit: S, allowed: Time { positive: true }, source: "RFC 3561 §10 ACTIVE_ROUTE_TIMEOUT; ns-2 aodv.h" },
    /// Lifetime the destination puts in its RREPs (MY_ROUTE_TIMEOUT).
    /// ns-2 10 s; RFC 2·ACTIVE_ROUTE_TIMEOUT = 6 s.
    pub my_route_timeout: SimDuration = SimDuration::from_secs_f64(10.0),
        { key: "my_route_timeout_s", unit: S, allowed: Time { positive: true }, source: "RFC 3561 §10 MY_ROUTE_TIMEOUT; ns-2 aodv.h" },
    /// Lifetime of a reverse route set up by a RREQ. ns-2 `REV_ROUTE_LIFE` 6 s;
    /// RFC 2·NET_TRAVERSAL_TIME − 2·hops·NODE_TRAVERSAL_TIME (§6.5).
    pub reverse_route_life: SimDuration = SimDuration::from_secs_f64(6.0),
        { key: "reverse_route_life_s", unit: S, allowed: Time { positive: true }, source: "RFC 3561 §6.5; ns-2 aodv.h REV_ROUTE_LIFE" },
    /// How long an (originator, RREQ ID) pair is remembered. ns-2
    /// `BCAST_ID_SAVE` 6 s; RFC PATH_DISCOVERY_TIME = 2·NET_TRAVERSAL_TIME = 5.6 s.
    pub rreq_id_save: SimDuration = SimDuration::from_secs_f64(6.0),
        { key: "rreq_id_save_s", unit: S, allowed: Time { positive: true }, source: "RFC 3561 §10 PATH_DISCOVERY_TIME; ns-2 aodv.h BCAST_ID_SAVE" },
    /// NODE_TRAVERSAL_TIME: a conservative per-hop delay. ns-2 30 ms; RFC 40 ms.
    pub node_traversal_time: SimDuration = SimDuration::from_millis(30),
        { key: "node_traversal_time_ms", unit: MS, allowed: Time { positive: true }, source: "RFC 3561 §10 NODE_TRAVERSAL_TIME; ns-2 aodv.h" },
    /// NET_DIAMETER (hops): TTL of network-wide requests. ns-2 30; RFC 35.
    pub net_diameter: u8 = 30,
        { key: "net_diameter_hops", unit: HOPS, allowed: Int { lo: 1, hi: 255 }, source: "RFC 3561 §10 NET_DIAMETER; ns-2 aodv.h" },
    /// TTL of the first request of an expanding-ring search. ns-2 5; RFC 1.
    pub ttl_start: u8 = 5,
        { key: "ttl_start", unit: NONE, allowed: Int { lo: 1, hi: 255 }, source: "RFC 3561 §10 TTL_START; ns-2 aodv.h" },
    /// TTL added per ring. 2 (both).
    pub ttl_increment: u8 = 2,
        { key: "ttl_increment", unit: NONE, allowed: Int { lo: 1, hi: 255 }, source: "RFC 3561 §10 TTL_INCREMENT; ns-2 aodv.h" },
    /// Last ring TTL before a network-wide request. 7 (both).
    pub ttl_threshold: u8 = 7,
        { key: "ttl_threshold", unit: NONE, allowed: Int { lo: 0, hi: 255 }, source: "RFC 3561 §10 TTL_THRESHOLD; ns-2 aodv.h" },
    /// TIMEOUT_BUFFER added to the TTL in RING_TRAVERSAL_TIME =
    /// 2·NODE_TRAVERSAL_TIME·(TTL + TIMEOUT_BUFFER). ns-2 0 (its wait is
    /// 2·TTL·NODE_TRAVERSAL_TIME); RFC 2.
    pub timeout_buffer: u8 = 0,
        { key: "timeout_buffer", unit: NONE, allowed: Int { lo: 0, hi: 255 }, source: "RFC 3561 §10 TIMEOUT_BUFFER; ns-2 aodv.cc sendRequest" },
    /// Network-wide retries after the first network-wide request (RREQ_RETRIES).
    /// ns-2 3; RFC 2.
    pub rreq_retries: u32 = 3,
        { key: "rreq_retries", unit: NONE, allowed: Int { lo: 0, hi: 32 }, source: "RFC 3561 §10 RREQ_RETRIES; ns-2 aodv.h" },
    /// Cap on one request's wait, and how long a destination whose discovery
    /// failed is left alone before new packets may start another one
    /// (ns-2 `MAX_RREQ_TIMEOUT` 10 s; not in the RFC).
    pub max_rreq_timeout: SimDuration = SimDuration::from_secs_f64(10.0),
        { key: "max_rreq_timeout_s", unit: S, allowed: Time { positive: true }, source: "ns-2 aodv.h MAX_RREQ_TIMEOUT" },
    /// Intermediate nodes with a fresh-enough route reply (RFC §6.6.2; ns-2 yes).
    pub intermediate_replies: bool = true,
        { key: "intermediate_replies", unit: NONE, allowed: Any, source: "RFC 3561 §6.6.2; ns-2 aodv.cc recvRequest" },
    /// Set the G flag in our requests: an intermediate replier also sends a
    /// gratuitous RREP to the destination (RFC §6.6.3). ns-2: off.
    pub gratuitous_rrep: bool = false,
        { key: "gratuitous_rrep", unit: NONE, allowed: Any, source: "RFC 3561 §6.6.3; ns-2 RREQ_GRAT_RREP" },
    /// Repair a break locally when closer to the destination (RFC §6.12; ns-2
    /// `AODV_LOCAL_REPAIR` is on).
    pub local_repair: bool = true,
        { key: "local_repair", unit: NONE, allowed: Any, source: "RFC 3561 §6.12; ns-2 AODV_LOCAL_REPAIR" },
    /// LOCAL_ADD_TTL: extra TTL of a local-repair request. 2 (RFC; ns-2 uses its
    /// expanding ring instead).
    pub local_add_ttl: u8 = 2,
        { key: "local_add_ttl", unit: NONE, allowed: Int { lo: 0, hi: 255 }, source: "RFC 3561 §10 LOCAL_ADD_TTL" },
    /// MAX_REPAIR_TTL: repair only destinations at most this many hops away.
    /// RFC 0.3·NET_DIAMETER; ns-2 no limit (30 = its diameter).
    pub max_repair_ttl: u8 = 30,
        { key: "max_repair_ttl", unit: HOPS, allowed: Int { lo: 0, hi: 255 }, source: "RFC 3561 §10 MAX_REPAIR_TTL (0.3·NET_DIAMETER)" },
    /// How link breaks are detected: `"mac"` (the MAC's retry limit) or
    /// `"hello"` (missing HELLOs, RFC 3561 §6.9).
    pub link_detection: LinkDetection = LinkDetection::Mac,
        { key: "link_detection", unit: NONE, allowed: Choice(LinkDetection::CHOICES), source: "RFC 3561 §6.9 / §6.11; ns-2 AODV_LINK_LAYER_DETECTION" },
    /// HELLO_INTERVAL (both 1 s); ns-2 jitters each interval uniformly in
    /// [0.75, 1.25]·HELLO_INTERVAL, and so do we.
    pub hello_interval: SimDuration = SimDuration::from_secs_f64(1.0),
        { key: "hello_interval_s", unit: S, allowed: Time { positive: true }, source: "RFC 3561 §10 HELLO_INTERVAL; ns-2 aodv.h" },
    /// ALLOWED_HELLO_LOSS. ns-2 3; RFC 2.
    pub allowed_hello_loss: u32 = 3,
        { key: "allowed_hello_loss", unit: NONE, allowed: Int { lo: 1, hi: u32::MAX as u64 }, source: "RFC 3561 §10 ALLOWED_HELLO_LOSS; ns-2 aodv.h" },
    /// Forwarded broadcasts (RREQ, propagated RERR) wait U(0, this). ns-2 10 ms.
    pub broadcast_jitter: SimDuration = SimDuration::from_millis(10),
        { key: "broadcast_jitter_ms", unit: MS, allowed: Time { positive: false }, source: "ns-2 aodv.cc 0.01·Random::uniform()" },
    /// Send-buffer capacity (packets). ns-2 `AODV_RTQ_MAX_LEN` 64.
    pub send_buffer_pkts: u32 = 64,
        { key: "send_buffer_pkts", unit: PKTS, allowed: Int { lo: 1, hi: u32::MAX as u64 }, source: "ns-2 aodv_rqueue.h AODV_RTQ_MAX_LEN" },
    /// Send-buffer timeout. ns-2 `AODV_RTQ_TIMEOUT` 30 s.
    pub send_buffer_timeout: SimDuration = SimDuration::from_secs_f64(30.0),
        { key: "send_buffer_timeout_s", unit: S, allowed: Time { positive: true }, source: "ns-2 aodv_rqueue.h AODV_RTQ_TIMEOUT" },
    }
    profile(f) = match f {
        Fidelity::Ns2 => Params::default(),
        Fidelity::Standard => Params::rfc3561(),
    };
    // `[routing.aodv] preset` names the section's profile.
    profile_key = ("preset", &[("ns2", Fidelity::Ns2), ("rfc3561", Fidelity::Standard)]);
}

impl Params {
    /// RFC 3561 §10 values (with NODE_TRAVERSAL_TIME 40 ms, NET_DIAMETER 35).
    pub fn rfc3561() -> Self {
        let ntt = SimDuration::from_millis(40);
        let net_traversal = SimDuration(2 * ntt.0 * 35);
        Params {
            active_route_timeout: SimDuration::from_secs_f64(3.0),
            my_route_timeout: SimDuration::from_secs_f64(6.0),
            reverse_route_life: SimDuration(2 * net_traversal.0),
            rreq_id_save: SimDuration(2 * net_traversal.0),
            node_traversal_time: ntt,
            net_diameter: 35,
            ttl_start: 1,
            timeout_buffer: 2,
            rreq_retries: 2,
            max_repair_ttl: 10,
            allowed_hello_loss: 2,
            ..Params::default()
        }
        .with_rfc_rules()
    }

    /// These constants under RFC 3561's discovery and maintenance rules, with none
    /// of ns-2's bugs (what `rules = "rfc3561"` means).
    pub fn with_rfc_rules(self) -> Self {
        Params {
            rules: Rules::Rfc3561,
            first_request_network_wide: false,
            repair_timer_bug: false,
            local_repair_new_seq: true,
            reply_lifetime_wraps: false,
            rerr_purges_queue: false,
            release_spacing: SimDuration::ZERO,
            ..self
        }
    }

    /// These values under `rules`: the ns-2 bugs that only ns-2's rules have
    /// (`first_request_network_wide`, `repair_timer_bug`,
    /// `reply_lifetime_wraps`) take ns-2's value under its rules and are off
    /// under the RFC's; the rest is kept (what a scenario's `rules` key does
    /// before its other keys).
    pub fn under_rules(self, rules: Rules) -> Self {
        let ns2 = rules == Rules::Ns2;
        let d = Params::default();
        Params {
            rules,
            first_request_network_wide: ns2 && d.first_request_network_wide,
            repair_timer_bug: ns2 && d.repair_timer_bug,
            reply_lifetime_wraps: ns2 && d.reply_lifetime_wraps,
            ..self
        }
    }

    /// NET_TRAVERSAL_TIME = 2·NODE_TRAVERSAL_TIME·NET_DIAMETER.
    pub fn net_traversal_time(&self) -> SimDuration {
        SimDuration(2 * self.node_traversal_time.0 * self.net_diameter as u64)
    }

    /// RING_TRAVERSAL_TIME for a request with this TTL.
    pub fn ring_traversal_time(&self, ttl: u8) -> SimDuration {
        SimDuration(2 * self.node_traversal_time.0 * (ttl as u64 + self.timeout_buffer as u64))
    }

    /// The TTL of the next ring after one with `last` (ns-2 `sendRequest`).
    pub fn next_ttl(&self, last: u8) -> u8 {
        if last < self.ttl_threshold {
            last.saturating_add(self.ttl_increment)
                .min(self.net_diameter)
        } else {
            self.net_diameter
        }
    }

    /// How long to wait for a reply to a request with `ttl`, the
    /// `network_wide`-th network-wide one if `ttl` is the diameter (§6.3: binary
    /// exponential backoff), capped at `max_rreq_timeout`.
    pub fn rrep_wait(&self, ttl: u8, network_wide: u32) -> SimDuration {
        let w = if ttl >= self.net_diameter {
            let k = network_wide.saturating_sub(1).min(20);
            SimDuration(self.net_traversal_time().0 << k)
        } else {
            self.ring_traversal_time(ttl)
        };
        w.min(self.max_rreq_timeout)
    }

    /// How long a neighbour may stay silent before its link counts as lost
    /// (HELLO mode): ALLOWED_HELLO_LOSS·HELLO_INTERVAL (§6.9).
    pub fn neighbour_timeout(&self) -> SimDuration {
        SimDuration(self.hello_interval.0 * self.allowed_hello_loss as u64)
    }
}

/// The behaviour that differs between AODV's two rule sets: ns-2.35's
/// `aodv.cc` ([`rules_ns2::Ns2Rules`]) and RFC 3561 ([`rules_rfc::RfcRules`]).
/// Every hook is an associated function over the node's state;
/// `rules!` picks the implementation from `Params::rules` with a two-arm match, so the
/// call is static (no virtual call on the per-packet path) and this file holds
/// the logic both rule sets share.
trait RuleSet {
    /// The own sequence number a node starts with (§6.1).
    fn initial_seq() -> u32;
    /// How much the own number grows before a request is originated (§6.1).
    fn seq_step() -> u32;
    /// What the rule set does when the node starts.
    fn start(a: &mut Aodv, ctx: &mut RoutingCtx);
    /// Adjust a packet this node originates before it is routed.
    fn originated(a: &Aodv, pkt: &mut Packet);
    /// Send a data packet on its route, refreshing lifetimes (§6.2); the
    /// packet back if there is no usable route.
    fn forward_data(
        a: &mut Aodv,
        ctx: &mut RoutingCtx,
        pkt: Packet,
        delay: SimDuration,
    ) -> Option<Packet>;
    /// A data packet found no usable route: buffer and ask, or report (§6.11).
    fn no_route(a: &mut Aodv, ctx: &mut RoutingCtx, pkt: Packet);
    /// A control message came from neighbour `nb` (§6.5/§6.7 route to it).
    fn neighbour_route(a: &mut Aodv, ctx: &mut RoutingCtx, nb: NodeId);
    /// §6.5: set up the reverse route a request gives; the next hop towards
    /// its originator if there is a usable one.
    fn reverse_route(
        a: &mut Aodv,
        ctx: &mut RoutingCtx,
        rq: &Rreq,
        hops: u8,
        from: NodeId,
    ) -> Option<NodeId>;
    /// §6.6.1: the destination's own number before it replies.
    fn reply_seq(a: &mut Aodv, rq: &Rreq);
    /// §6.6.2: the route an intermediate node may reply from.
    fn reply_route(a: &mut Aodv, now: SimTime, dst: NodeId, from: NodeId) -> Option<&mut Route>;
    /// §6.6.2: the lifetime an intermediate node's reply advertises for `r`.
    fn reply_lifetime(p: &Params, r: &Route, now: SimTime) -> SimDuration;
    /// A request whose TTL is used up is traced as a drop.
    fn traces_expired_requests() -> bool;
    /// §6.7: update the forward route a reply gives; whether it changed.
    fn forward_route(a: &mut Aodv, now: SimTime, rp: &Rrep, fwd: RouteInfo) -> bool;
    /// §6.7: refresh the route back to a reply's originator; its next hop.
    fn reply_back_route(
        a: &mut Aodv,
        now: SimTime,
        originator: NodeId,
        from: NodeId,
    ) -> Option<NodeId>;
    /// §6.11: a RERR from `from`.
    fn recv_rerr(a: &mut Aodv, ctx: &mut RoutingCtx, re: &Rerr, from: NodeId);
    /// Control packets also get the MAC's link-failure callback.
    fn control_failure_callback() -> bool;
    /// How a packet the MAC gave up on is dropped.
    fn tx_failed_drop() -> DropReason;
    /// The MAC gave up on a data packet to `next_hop` (MAC link detection).
    fn data_tx_failed(a: &mut Aodv, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId);
    /// Data reclaimed from the interface queue waits for a repair under way.
    fn buffers_reclaimed_in_repair() -> bool;
}

/// `rules!(rules, hook(args))`: call `hook` of the rule set `rules` names.
macro_rules! rules {
    ($rules:expr, $hook:ident($($arg:expr),*)) => {
        match $rules {
            Rules::Ns2 => <rules_ns2::Ns2Rules as RuleSet>::$hook($($arg),*),
            Rules::Rfc3561 => <rules_rfc::RfcRules as RuleSet>::$hook($($arg),*),
        }
    };
}

/// What an entry of the discovery table is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DiscoveryKind {
    /// This node needs the route for packets it originates.
    Source,
    /// Local repair after a break on a route this node forwards on (§6.12).
    Repair,
    /// The last discovery failed: new packets wait in the buffer until this
    /// ends (ns-2 `rt_req_timeout = now + MAX_RREQ_TIMEOUT`).
    HoldDown,
}

pub(super) struct Discovery {
    kind: DiscoveryKind,
    /// TTL of the last request sent.
    ttl: u8,
    /// Network-wide requests sent so far.
    network_wide: u32,
    started: SimTime,
    timer: Timer,
}

// Timer keys: kind in the high 32 bits, a node id in the low ones.
const KEY_DISCOVERY: u64 = 0;
const KEY_BUFFER: u64 = 1 << 32;
const KEY_HELLO: u64 = 2 << 32;
const KEY_PURGE: u64 = 3 << 32;
const KEY_REPAIR: u64 = 4 << 32;

/// One node's AODV instance.
pub struct Aodv {
    me: NodeId,
    p: Params,
    rng: SimRng,
    /// Own sequence number (§6.1).
    seq: u32,
    rreq_id: u32,
    table: RouteTable,
    cache: RreqCache,
    buffer: SendBuffer,
    buffer_timer: Timer,
    discoveries: BTreeMap<NodeId, Discovery>,
    /// ns-2 rules: request soft state per destination.
    req: BTreeMap<NodeId, rules_ns2::ReqState>,
    purge_timer: Timer,
    /// HELLO mode: neighbours and when each was last heard.
    neighbours: BTreeMap<NodeId, SimTime>,
    hello_timer: Timer,
    counters: RoutingCounters,
    scratch: Vec<Packet>,
}

impl Aodv {
    /// AODV for node `me`, drawing jitter from `rng` (stream `Component::Routing`).
    pub fn new(me: NodeId, p: Params, rng: SimRng) -> Self {
        let counters = RoutingCounters::with_kinds(&packets::KINDS);
        Aodv {
            me,
            p,
            rng,
            seq: rules!(p.rules, initial_seq()),
            rreq_id: 0,
            table: RouteTable::new(),
            cache: RreqCache::new(p.rreq_id_save),
            buffer: SendBuffer::new(p.send_buffer_pkts, p.send_buffer_timeout),
            buffer_timer: Timer::new(),
            discoveries: BTreeMap::new(),
            req: BTreeMap::new(),
            purge_timer: Timer::new(),
            neighbours: BTreeMap::new(),
            hello_timer: Timer::new(),
            counters,
            scratch: Vec::new(),
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
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    // ---- sending ---------------------------------------------------------------

    fn control(&self, ctx: &mut RoutingCtx, dst: NodeId, ttl: u8, msg: AodvMessage) -> Packet {
        Packet::control(
            ctx.new_uid(),
            IpHeader::new(self.me, dst, ttl, IpProto::Manet),
            RoutingMessage::Aodv(msg),
        )
    }

    fn count(&mut self, pkt: &Packet, forwarded: bool) {
        if let TransportHeader::Routing(RoutingMessage::Aodv(m)) = &pkt.transport {
            self.counters.on_send(m.kind(), pkt.size_bytes(), forwarded);
        }
    }

    fn broadcast(&mut self, ctx: &mut RoutingCtx, pkt: Packet, jitter: bool, forwarded: bool) {
        self.count(&pkt, forwarded);
        let delay = if jitter && self.p.broadcast_jitter.0 > 0 {
            SimDuration(self.rng.gen_range(0..self.p.broadcast_jitter.0))
        } else {
            SimDuration::ZERO
        };
        ctx.actions.push(RoutingAction::Broadcast { pkt, delay });
    }

    fn unicast(&mut self, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId, forwarded: bool) {
        self.count(&pkt, forwarded);
        ctx.actions.push(RoutingAction::Forward { pkt, next_hop });
    }

    fn set_timer(ctx: &mut RoutingCtx, timer: &mut Timer, at: SimTime, key: u64) {
        let token = timer.arm(at);
        ctx.actions.push(RoutingAction::SetTimer { at, key, token });
    }

    /// Send a RERR for `unreachable` (TTL 1, broadcast as ns-2 does).
    fn send_rerr(
        &mut self,
        ctx: &mut RoutingCtx,
        unreachable: Vec<(NodeId, u32)>,
        forwarded: bool,
    ) {
        if unreachable.is_empty() {
            return;
        }
        let pkt = self.control(
            ctx,
            IP_BROADCAST,
            1,
            AodvMessage::Rerr(Rerr {
                no_delete: false,
                unreachable,
            }),
        );
        // ns-2: a RERR for a break this node detected goes at once, a propagated one is jittered.
        self.broadcast(ctx, pkt, forwarded, forwarded);
    }

    // ---- data ------------------------------------------------------------------

    /// Forward a data packet on the usable route to its destination, refreshing
    /// the lifetimes of the routes it uses (§6.2). Returns the packet if there is
    /// no usable route.
    fn forward_data(
        &mut self,
        ctx: &mut RoutingCtx,
        pkt: Packet,
        delay: SimDuration,
    ) -> Option<Packet> {
        rules!(self.p.rules, forward_data(self, ctx, pkt, delay))
    }

    /// Hand a data packet to `next_hop`, after `delay` if there is one.
    fn send_data(ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId, delay: SimDuration) {
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

    /// The route to `dst` is under local repair.
    fn repairing(&self, dst: NodeId) -> bool {
        self.table
            .get(dst)
            .is_some_and(|r| r.state == RouteState::Repairing)
    }

    /// §6.11 (ii): data to forward but no route: tell upstream, drop.
    fn no_route_error(&mut self, ctx: &mut RoutingCtx, pkt: Packet) {
        let dst = pkt.ip.dst;
        let seq = self.table.get(dst).map_or(0, |r| r.seq);
        self.send_rerr(ctx, vec![(dst, seq)], false);
        ctx.actions.push(RoutingAction::Drop {
            pkt,
            reason: DropReason::NoRoute,
        });
    }

    fn buffer_packet(&mut self, ctx: &mut RoutingCtx, pkt: Packet) {
        if let Some(old) = self.buffer.push(ctx.now, pkt) {
            ctx.actions.push(RoutingAction::Drop {
                pkt: old,
                reason: DropReason::SendBufferFull,
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

    /// Drop every buffered packet for `dst` with `reason`.
    fn drop_buffered(&mut self, ctx: &mut RoutingCtx, dst: NodeId, reason: DropReason) {
        let mut out = std::mem::take(&mut self.scratch);
        self.buffer.take_for(dst, &mut out);
        for pkt in out.drain(..) {
            ctx.actions.push(RoutingAction::Drop { pkt, reason });
        }
        self.scratch = out;
        self.arm_buffer_timer(ctx);
    }

    /// A route to `dst` has just become usable: end any discovery for it and
    /// send the packets that were waiting, `spacing` apart (ns-2 `ARP_DELAY`).
    fn route_ready(&mut self, ctx: &mut RoutingCtx, dst: NodeId, spacing: SimDuration) {
        // Cross-layer notice for ELFN (ERSN): a route to `dst` is usable again.
        ctx.actions
            .push(RoutingAction::Notify(TransportNotice::RouteReestablished {
                dst,
            }));
        if let Some(d) = self.discoveries.remove(&dst) {
            if d.kind == DiscoveryKind::Source {
                let hops = self.table.get(dst).map_or(0, |r| r.hops);
                self.counters.routes_found += 1;
                self.counters.route_hops_sum += hops as u64;
                self.counters.discovery_time_sum_s += ctx.now.since(d.started).as_secs_f64();
            }
        }
        if !self.buffer.has_for(dst) {
            return;
        }
        let mut out = std::mem::take(&mut self.scratch);
        self.buffer.take_for(dst, &mut out);
        let mut delay = SimDuration::ZERO;
        for pkt in out.drain(..) {
            let sent = self.forward_data(ctx, pkt, delay);
            delay = delay + spacing;
            if let Some(pkt) = sent {
                // Cannot happen (the route is usable), but never lose a packet silently.
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::NoRoute,
                });
            }
        }
        self.scratch = out;
        self.arm_buffer_timer(ctx);
    }

    fn originate_rreq(&mut self, ctx: &mut RoutingCtx, dst: NodeId, ttl: u8) {
        // §6.1: increment our own number before originating a request.
        self.seq = self.seq.wrapping_add(rules!(self.p.rules, seq_step()));
        self.rreq_id = self.rreq_id.wrapping_add(1);
        let (dst_seq, unknown_seq) = match self.table.get(dst) {
            Some(r) if r.valid_seq => (r.seq, false),
            _ => (0, true),
        };
        let rq = Rreq {
            gratuitous: self.p.gratuitous_rrep,
            destination_only: false,
            unknown_seq,
            hop_count: 0,
            id: self.rreq_id,
            dst,
            dst_seq,
            originator: self.me,
            originator_seq: self.seq,
            timestamp_ns: ctx.now.0,
        };
        self.cache.insert(ctx.now, self.me, self.rreq_id);
        let pkt = self.control(ctx, IP_BROADCAST, ttl, AodvMessage::Rreq(rq));
        // ns-2 sends its own requests without jitter (its MAC then defers a
        // random backoff before any frame, docs/wireless.md).
        self.broadcast(ctx, pkt, false, false);
    }

    // ---- control messages --------------------------------------------------------

    /// §6.5/§6.7: a route to the neighbour a control message came from, without
    /// a sequence number.
    fn neighbour_route(&mut self, ctx: &mut RoutingCtx, nb: NodeId) {
        rules!(self.p.rules, neighbour_route(self, ctx, nb))
    }

    fn recv_rreq(&mut self, ctx: &mut RoutingCtx, rq: Rreq, ttl: u8, from: NodeId, uid: u64) {
        let now = ctx.now;
        self.neighbour_route(ctx, from);
        if rq.originator == self.me {
            return; // our own request, rebroadcast by a neighbour
        }
        if !self.cache.insert(now, rq.originator, rq.id) {
            self.counters.duplicate_requests += 1;
            return;
        }
        let hops = rq.hop_count.saturating_add(1);
        // §6.5: the reverse route towards the originator.
        let Some(rev_next) = rules!(self.p.rules, reverse_route(self, ctx, &rq, hops, from)) else {
            return;
        };

        // §6.6.1: the destination replies.
        if rq.dst == self.me {
            rules!(self.p.rules, reply_seq(self, &rq));
            let rp = Rrep {
                hop_count: 0,
                dst: self.me,
                dst_seq: self.seq,
                originator: rq.originator,
                lifetime_ns: self.p.my_route_timeout.0,
                timestamp_ns: rq.timestamp_ns,
            };
            let pkt = self.control(
                ctx,
                rq.originator,
                self.p.net_diameter,
                AodvMessage::Rrep(rp),
            );
            self.unicast(ctx, pkt, rev_next, false);
            return;
        }

        // §6.6.2: an intermediate node with a fresh-enough active route replies.
        if self.p.intermediate_replies && !rq.destination_only {
            let rules = self.p.rules;
            let p = self.p;
            if let Some(r) = rules!(rules, reply_route(self, now, rq.dst, from)) {
                if r.valid_seq && (rq.unknown_seq || !seq_newer(rq.dst_seq, r.seq)) {
                    let (fwd_next, fwd_hops, fwd_seq) = (r.next_hop, r.hops, r.seq);
                    let lifetime = rules!(rules, reply_lifetime(&p, r, now));
                    r.add_precursor(rev_next);
                    if let Some(back) = self.table.get_mut(rq.originator) {
                        back.add_precursor(fwd_next);
                    }
                    let rp = Rrep {
                        hop_count: fwd_hops,
                        dst: rq.dst,
                        dst_seq: fwd_seq,
                        originator: rq.originator,
                        lifetime_ns: lifetime.0,
                        timestamp_ns: rq.timestamp_ns,
                    };
                    let pkt = self.control(
                        ctx,
                        rq.originator,
                        self.p.net_diameter,
                        AodvMessage::Rrep(rp),
                    );
                    self.unicast(ctx, pkt, rev_next, false);
                    // §6.6.3: tell the destination how to reach the originator.
                    if rq.gratuitous {
                        let back_life =
                            self.table
                                .get(rq.originator)
                                .map_or(SimDuration::ZERO, |b| {
                                    if b.expires > now {
                                        b.expires.since(now)
                                    } else {
                                        SimDuration::ZERO
                                    }
                                });
                        let g = Rrep {
                            hop_count: hops,
                            dst: rq.originator,
                            dst_seq: rq.originator_seq,
                            originator: rq.dst,
                            lifetime_ns: back_life.0,
                            timestamp_ns: rq.timestamp_ns,
                        };
                        let pkt =
                            self.control(ctx, rq.dst, self.p.net_diameter, AodvMessage::Rrep(g));
                        self.unicast(ctx, pkt, fwd_next, false);
                    }
                    return;
                }
            }
        }

        // Rebroadcast while the TTL lasts. A request whose TTL is used up ends
        // here (the expanding ring); ns-2's `forward` traces it as a drop
        // (`DROP_RTR_TTL`), so under ns-2 rules it is counted as `rtr.TTL`.
        if ttl == 0 && !rules!(self.p.rules, traces_expired_requests()) {
            return;
        }
        let mut fwd = rq;
        fwd.hop_count = hops;
        // §6.5: carry the freshest destination number known on the way.
        if let Some(r) = self.table.get(rq.dst) {
            if r.valid_seq && (rq.unknown_seq || seq_newer(r.seq, rq.dst_seq)) {
                fwd.dst_seq = r.seq;
                fwd.unknown_seq = false;
            }
        }
        let pkt = Packet::control(
            uid,
            IpHeader::new(self.me, IP_BROADCAST, ttl, IpProto::Manet),
            RoutingMessage::Aodv(AodvMessage::Rreq(fwd)),
        );
        if ttl == 0 {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::TtlExpired,
            });
            return;
        }
        self.broadcast(ctx, pkt, true, true);
    }

    fn recv_rrep(&mut self, ctx: &mut RoutingCtx, rp: Rrep, ttl: u8, from: NodeId, uid: u64) {
        let now = ctx.now;
        let hops = rp.hop_count.saturating_add(1);
        let fwd = RouteInfo {
            dst: rp.dst,
            seq: Some(rp.dst_seq),
            hops,
            next_hop: from,
            expires: now + SimDuration(rp.lifetime_ns),
        };
        // §6.7: the forward route, under the freshness rules. Before the route to
        // the neighbour (§6.2 "route to the previous hop"): when the neighbour is
        // the destination, refreshing that route first would revalidate it with
        // its old number and make this reply look stale, so it would not be
        // forwarded and the discovery would fail.
        let updated = rules!(self.p.rules, forward_route(self, now, &rp, fwd));
        self.neighbour_route(ctx, from);
        if updated {
            self.route_ready(ctx, rp.dst, self.p.release_spacing);
        }
        if rp.originator == self.me || !updated {
            return; // ours, or stale: a reply that changed nothing is not forwarded
        }
        let back = rules!(
            self.p.rules,
            reply_back_route(self, now, rp.originator, from)
        );
        let Some(back_next) = back else {
            // No way back to the originator (the reverse route expired).
            let pkt = Packet::control(
                uid,
                IpHeader::new(self.me, rp.originator, ttl, IpProto::Manet),
                RoutingMessage::Aodv(AodvMessage::Rrep(rp)),
            );
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::NoRoute,
            });
            return;
        };
        if let Some(r) = self.table.get_mut(rp.dst) {
            r.add_precursor(back_next);
        }
        let mut out = rp;
        out.hop_count = hops;
        let pkt = Packet::control(
            uid,
            IpHeader::new(self.me, rp.originator, ttl.max(1), IpProto::Manet),
            RoutingMessage::Aodv(AodvMessage::Rrep(out)),
        );
        self.unicast(ctx, pkt, back_next, true);
    }

    fn recv_rerr(&mut self, ctx: &mut RoutingCtx, re: &Rerr, from: NodeId) {
        rules!(self.p.rules, recv_rerr(self, ctx, re, from))
    }

    fn recv_hello(&mut self, ctx: &mut RoutingCtx, h: Hello, from: NodeId) {
        let now = ctx.now;
        self.neighbours.insert(from, now);
        let info = RouteInfo {
            dst: h.node,
            seq: Some(h.seq),
            hops: 1,
            next_hop: from,
            expires: now + SimDuration(h.lifetime_ns),
        };
        if self.table.update(now, info) {
            self.route_ready(ctx, h.node, SimDuration::ZERO);
        } else {
            self.table.refresh(now, h.node, info.expires);
        }
    }

    // ---- link breaks (§6.11, §6.12) --------------------------------------------

    /// The link to `nb` broke: invalidate every route through it (except
    /// `repairing`), with incremented numbers, and tell the precursors.
    fn link_break(&mut self, ctx: &mut RoutingCtx, nb: NodeId, repairing: Option<NodeId>) -> bool {
        let now = ctx.now;
        let mut unreachable = Vec::new();
        let mut notify = false;
        for r in self.table.iter_mut() {
            r.precursors.retain(|&p| p != nb);
            if r.state != RouteState::Valid || r.next_hop != nb || Some(r.dst) == repairing {
                continue;
            }
            let live = r.expires > now;
            r.seq = r.seq.wrapping_add(1);
            r.valid_seq = true;
            r.state = RouteState::Invalid;
            if live {
                notify |= !r.precursors.is_empty();
                unreachable.push((r.dst, r.seq));
                ctx.actions
                    .push(RoutingAction::Notify(TransportNotice::RouteFailed {
                        dst: r.dst,
                    }));
            }
            r.precursors.clear();
        }
        let cut = !unreachable.is_empty() || repairing.is_some();
        if notify {
            self.send_rerr(ctx, unreachable, false);
        }
        cut
    }

    // ---- HELLO (§6.9) ------------------------------------------------------------

    fn hello_tick(&mut self, ctx: &mut RoutingCtx) {
        let now = ctx.now;
        let lifetime = self.p.neighbour_timeout();
        let h = Hello {
            node: self.me,
            seq: self.seq,
            lifetime_ns: lifetime.0,
        };
        let pkt = self.control(ctx, IP_BROADCAST, 1, AodvMessage::Hello(h));
        self.broadcast(ctx, pkt, false, false);
        let lost: Vec<NodeId> = self
            .neighbours
            .iter()
            .filter(|(_, &t)| t + lifetime <= now)
            .map(|(&n, _)| n)
            .collect();
        for nb in lost {
            self.neighbours.remove(&nb);
            if self.link_break(ctx, nb, None) {
                self.counters.route_breaks += 1;
            }
        }
        let f = self.rng.gen_range(0.75..1.25);
        let at = now + SimDuration::from_secs_f64(self.p.hello_interval.as_secs_f64() * f);
        Self::set_timer(ctx, &mut self.hello_timer, at, KEY_HELLO);
    }
}

impl Routing for Aodv {
    fn name(&self) -> &'static str {
        "aodv"
    }

    fn start(&mut self, ctx: &mut RoutingCtx) {
        rules!(self.p.rules, start(self, ctx));
        if self.p.link_detection == LinkDetection::Hello {
            // Desynchronise the first HELLOs (ns-2 sends one at start on every node).
            let at = ctx.now
                + SimDuration::from_secs_f64(
                    self.p.hello_interval.as_secs_f64() * self.rng.gen::<f64>(),
                );
            Self::set_timer(ctx, &mut self.hello_timer, at, KEY_HELLO);
        }
    }

    fn route(&mut self, ctx: &mut RoutingCtx, mut pkt: Packet) {
        if pkt.ip.src == self.me {
            // ns-2: a node that receives a packet it originated has a loop.
            if pkt.ip.forwards() > 0 {
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: DropReason::RouteLoop,
                });
                return;
            }
            rules!(self.p.rules, originated(self, &mut pkt));
        }
        let Some(pkt) = self.forward_data(ctx, pkt, SimDuration::ZERO) else {
            return;
        };
        rules!(self.p.rules, no_route(self, ctx, pkt));
    }

    fn failure_callback(&self, pkt: &Packet) -> bool {
        rules!(self.p.rules, control_failure_callback()) || !pkt.is_routing()
    }

    fn tx_failed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId) {
        let failed = rules!(self.p.rules, tx_failed_drop());
        // ns-2: control packets and broadcasts are simply dropped; with HELLO
        // detection the MAC's verdict is not used at all.
        if pkt.is_routing() || self.p.link_detection != LinkDetection::Mac {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: failed,
            });
            return;
        }
        rules!(self.p.rules, data_tx_failed(self, ctx, pkt, next_hop));
    }

    fn reclaimed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, _next_hop: NodeId) {
        // Data for a destination under repair waits for the repair; the rest is
        // dropped as ns-2 does (`DROP_RTR_MAC_CALLBACK`).
        if rules!(self.p.rules, buffers_reclaimed_in_repair())
            && !pkt.is_routing()
            && self.repairing(pkt.ip.dst)
        {
            self.buffer_packet(ctx, pkt);
        } else {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::MacCallback,
            });
        }
    }

    fn recv_control(&mut self, ctx: &mut RoutingCtx, pkt: Packet, from: NodeId) {
        let (ttl, uid) = (pkt.ip.ttl.saturating_sub(1), pkt.uid);
        let msg = match pkt.transport {
            TransportHeader::Routing(RoutingMessage::Aodv(m)) => m,
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
        if let Some(t) = self.neighbours.get_mut(&from) {
            *t = ctx.now; // any message from a neighbour shows the link is up (§6.9)
        }
        match msg {
            AodvMessage::Rreq(rq) => self.recv_rreq(ctx, rq, ttl, from, uid),
            AodvMessage::Rrep(rp) => self.recv_rrep(ctx, rp, ttl, from, uid),
            AodvMessage::Rerr(re) => self.recv_rerr(ctx, &re, from),
            AodvMessage::Hello(h) => self.recv_hello(ctx, h, from),
        }
    }

    fn timer(&mut self, ctx: &mut RoutingCtx, key: u64, token: TimerToken) {
        match key & !0xffff_ffff {
            KEY_DISCOVERY => self.discovery_timeout(ctx, NodeId(key as u32), token),
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
            KEY_HELLO => {
                if self.hello_timer.fire(token) {
                    self.hello_tick(ctx);
                }
            }
            KEY_PURGE => {
                if self.purge_timer.fire(token) {
                    self.ns2_purge(ctx);
                }
            }
            KEY_REPAIR => self.ns2_repair_timeout(ctx, NodeId(key as u32)),
            _ => unreachable!("unknown AODV timer key {key:#x}"),
        }
    }

    fn counters(&self) -> Option<&RoutingCounters> {
        Some(&self.counters)
    }

    fn buffered(&self, f: &mut dyn FnMut(&Packet)) {
        self.buffer.iter().for_each(f);
    }
}

/// Bytes of a control packet carrying `msg` (IP header included), as counted in
/// the routing-overhead metrics.
pub fn packet_bytes(msg: &AodvMessage) -> u32 {
    IP_HEADER_BYTES + msg.size_bytes()
}

#[cfg(test)]
mod tests;
