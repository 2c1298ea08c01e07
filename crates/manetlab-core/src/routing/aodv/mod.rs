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
pub use super::send_buffer;
pub mod table;

pub use crate::wire::aodv::{AodvMessage, Hello, Rerr, Rrep, Rreq};
pub use rreq_cache::RreqCache;
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

/// What an entry of the discovery table is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DiscoveryKind {
    /// This node needs the route for packets it originates.
    Source,
    /// Local repair after a break on a route this node forwards on (§6.12).
    Repair,
    /// The last discovery failed: new packets wait in the buffer until this
    /// ends (ns-2 `rt_req_timeout = now + MAX_RREQ_TIMEOUT`).
    HoldDown,
}

struct Discovery {
    kind: DiscoveryKind,
    /// TTL of the last request sent.
    ttl: u8,
    /// Network-wide requests sent so far.
    network_wide: u32,
    started: SimTime,
    timer: Timer,
}

/// ns-2 rules: a destination's request soft state (ns-2 keeps it in the
/// route entry: `rt_req_cnt`, `rt_req_timeout`, `rt_req_last_ttl`,
/// `rt_disc_latency`).
#[derive(Default)]
struct ReqState {
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
    fn per_hop_time(&self, default: SimDuration) -> SimDuration {
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
    req: BTreeMap<NodeId, ReqState>,
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
            // ns-2 starts at 2 and keeps its own number even.
            seq: if p.rules == Rules::Ns2 { 2 } else { 0 },
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
        let now = ctx.now;
        let until = now + self.p.active_route_timeout;
        if self.p.rules == Rules::Ns2 {
            // ns-2 `forward`: only the destination route is refreshed, to exactly
            // now + ACTIVE_ROUTE_TIMEOUT.
            let Some(r) = self.table.up(pkt.ip.dst) else {
                return Some(pkt);
            };
            r.expires = until;
            let next_hop = r.next_hop;
            if delay > SimDuration::ZERO {
                ctx.actions.push(RoutingAction::ForwardAfter {
                    pkt,
                    next_hop,
                    delay,
                });
            } else {
                ctx.actions.push(RoutingAction::Forward { pkt, next_hop });
            }
            return None;
        }
        let Some(r) = self.table.active(now, pkt.ip.dst) else {
            return Some(pkt);
        };
        r.expires = r.expires.max(until);
        let next_hop = r.next_hop;
        self.table.refresh(now, next_hop, until);
        if pkt.ip.src != self.me {
            self.table.refresh(now, pkt.ip.src, until);
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
        None
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

    // ---- route discovery (§6.3, §6.4) ------------------------------------------

    /// Start a discovery for `dst` unless one is under way (or held down).
    fn request_route(&mut self, ctx: &mut RoutingCtx, dst: NodeId) {
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
    fn send_rreq(&mut self, ctx: &mut RoutingCtx, dst: NodeId, ttl: u8) {
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
    fn originate_rreq(&mut self, ctx: &mut RoutingCtx, dst: NodeId, ttl: u8) {
        // §6.1: increment our own number before originating a request (ns-2:
        // by 2, its own numbers stay even).
        self.seq = self
            .seq
            .wrapping_add(if self.p.rules == Rules::Ns2 { 2 } else { 1 });
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

    // ---- ns-2 rules: sendRequest, rt_purge, local repair ---------------------

    /// ns-2 `sendRequest`: ask for `dst` unless its route is up or the last
    /// request's wait has not passed; give up after RREQ_RETRIES network-wide
    /// requests (buffered packets dropped, no request for MAX_RREQ_TIMEOUT).
    fn ns2_send_request(&mut self, ctx: &mut RoutingCtx, dst: NodeId, repair: bool) {
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
    fn ns2_reset_req(&mut self, now: SimTime, dst: NodeId, hops: u8) {
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
    fn ns2_purge(&mut self, ctx: &mut RoutingCtx) {
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
    fn ns2_local_repair(&mut self, ctx: &mut RoutingCtx, dst: NodeId, pkt: Packet) {
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
    fn ns2_repair_timeout(&mut self, ctx: &mut RoutingCtx, dst: NodeId) {
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
    fn ns2_link_failure(&mut self, ctx: &mut RoutingCtx, nb: NodeId) {
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

    fn discovery_timeout(&mut self, ctx: &mut RoutingCtx, dst: NodeId, token: TimerToken) {
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

    // ---- control messages --------------------------------------------------------

    /// §6.5/§6.7: a route to the neighbour a control message came from, without
    /// a sequence number.
    fn neighbour_route(&mut self, ctx: &mut RoutingCtx, nb: NodeId) {
        if self.p.rules == Rules::Ns2 {
            return; // ns-2 learns no route from the previous hop itself
        }
        let info = RouteInfo {
            dst: nb,
            seq: None,
            hops: 1,
            next_hop: nb,
            expires: ctx.now + self.p.active_route_timeout,
        };
        if self.table.update(ctx.now, info) {
            self.route_ready(ctx, nb, SimDuration::ZERO);
        }
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
        let ns2 = self.p.rules == Rules::Ns2;
        let mut rev_until = now + self.p.reverse_route_life;
        if ns2 {
            // ns-2 `recvRequest` first sets rt_expire = max(rt_expire, now +
            // REV_ROUTE_LIFE) on any entry it has, up, in repair or down,
            // whether or not the request is fresher; a fresher one then brings
            // it up with that same lifetime.
            if let Some(r) = self.table.get_mut(rq.originator) {
                r.expires = r.expires.max(rev_until);
                rev_until = r.expires;
            }
        }
        let rev = RouteInfo {
            dst: rq.originator,
            seq: Some(rq.originator_seq),
            hops,
            next_hop: from,
            expires: rev_until,
        };
        let rev_updated = if self.p.rules == Rules::Ns2 {
            self.table.update_ns2(now, rev)
        } else {
            self.table.update(now, rev)
        };
        if rev_updated {
            if ns2
                && self
                    .req
                    .get(&rq.originator)
                    .is_some_and(|st| st.timeout.is_some())
            {
                // ns-2: we were asking for the originator ourselves: that
                // discovery is over, and the route counts as used.
                self.ns2_reset_req(ctx.now, rq.originator, hops);
                if let Some(r) = self.table.get_mut(rq.originator) {
                    r.expires = now + self.p.active_route_timeout;
                }
            }
            self.route_ready(ctx, rq.originator, SimDuration::ZERO);
        } else if !ns2 {
            self.table.refresh(now, rq.originator, rev_until);
        }
        let rev_next = if ns2 {
            self.table.up(rq.originator).map(|r| r.next_hop)
        } else {
            self.table.active(now, rq.originator).map(|r| r.next_hop)
        };
        let Some(rev_next) = rev_next else { return };

        // §6.6.1: the destination replies.
        if rq.dst == self.me {
            if ns2 {
                // ns-2: always a new number, max(own, asked) + 1, made even.
                let base = if !rq.unknown_seq && seq_newer(rq.dst_seq, self.seq) {
                    rq.dst_seq
                } else {
                    self.seq
                };
                self.seq = base.wrapping_add(1);
                if self.seq % 2 == 1 {
                    self.seq = self.seq.wrapping_add(1);
                }
            } else if !rq.unknown_seq && seq_newer(rq.dst_seq, self.seq) {
                self.seq = rq.dst_seq;
            }
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
            // ns-2 answers from any route that is up or under repair, whatever
            // its lifetime or next hop; the RFC from an active route only.
            let r = if ns2 {
                self.table
                    .get_mut(rq.dst)
                    .filter(|r| r.state != RouteState::Invalid)
            } else {
                self.table.active(now, rq.dst)
            };
            if let Some(r) = r {
                if r.valid_seq
                    && (rq.unknown_seq || !seq_newer(rq.dst_seq, r.seq))
                    && (ns2 || r.next_hop != from)
                {
                    let (fwd_next, fwd_hops, fwd_seq) = (r.next_hop, r.hops, r.seq);
                    let lifetime = if ns2 {
                        ns2_reply_lifetime(r.expires, now, self.p.reply_lifetime_wraps)
                    } else if r.expires > now {
                        r.expires.since(now)
                    } else {
                        SimDuration::ZERO
                    };
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
        if ttl == 0 && !ns2 {
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
        let updated = if self.p.rules == Rules::Ns2 {
            self.table.update_ns2(now, fwd)
        } else {
            self.table.update(now, fwd)
        };
        self.neighbour_route(ctx, from);
        let ns2 = self.p.rules == Rules::Ns2;
        if updated {
            if ns2 {
                // (`update_ns2` gave the route exactly the reply's lifetime, even
                // if it had a later one: ns-2 `rt_update`.)
                self.ns2_reset_req(now, rp.dst, hops);
                if rp.originator == self.me {
                    // ns-2: discovery latency per hop, for PerHopTime.
                    let st = self.req.entry(rp.dst).or_default();
                    st.latency_s[st.hist] =
                        now.since(SimTime(rp.timestamp_ns)).as_secs_f64() / hops.max(1) as f64;
                    st.hist = (st.hist + 1) % st.latency_s.len();
                }
            }
            self.route_ready(ctx, rp.dst, self.p.release_spacing);
        }
        if rp.originator == self.me || !updated {
            return; // ours, or stale: a reply that changed nothing is not forwarded
        }
        let back = if ns2 {
            self.table
                .get_mut(rp.originator)
                .filter(|r| r.state != RouteState::Invalid)
        } else {
            self.table.active(now, rp.originator)
        };
        let Some(back) = back else {
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
        let back_next = back.next_hop;
        back.expires = if ns2 {
            now + self.p.active_route_timeout
        } else {
            back.expires.max(now + self.p.active_route_timeout)
        };
        // ns-2 `recvReply` records only the next hop towards the originator as
        // a precursor of the reply's destination; the reverse route gains none
        // (the RFC's rules add the reply's sender to it). Without that, a relay
        // whose route to the originator is broken by a RERR passes the RERR on
        // only if a reply *from* the originator's side made it a precursor, else
        // the originator's next packet is dropped there (`rtr.NRTE`, rt_resolve).
        if !ns2 {
            back.add_precursor(from);
        }
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
        if self.p.rules == Rules::Ns2 {
            self.ns2_recv_rerr(ctx, re, from);
            return;
        }
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

    /// ns-2 `recvError`: a route up through the RERR's sender whose number is
    /// not newer than the RERR's goes down with that number; the packets queued
    /// for the sender are dropped; destinations with precursors are passed on.
    fn ns2_recv_rerr(&mut self, ctx: &mut RoutingCtx, re: &Rerr, from: NodeId) {
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

    fn start_local_repair(&mut self, ctx: &mut RoutingCtx, dst: NodeId, pkt: Packet) {
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
        if self.p.rules == Rules::Ns2 {
            // ns-2 runs rt_purge from "start" at 0 s, then every 0.5 s.
            let at = ctx.now;
            Self::set_timer(ctx, &mut self.purge_timer, at, KEY_PURGE);
        }
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
            // ns-2 gives the unicast packets it originates TTL NETWORK_DIAMETER (30,
            // `recv`, aodv.cc:586), not the IP default of 32: a relay drops one on
            // its 30th hop, and traces show ns-2's TTLs.
            if self.p.rules == Rules::Ns2 && pkt.ip.dst != IP_BROADCAST {
                pkt.ip.ttl = self.p.net_diameter;
            }
        }
        let Some(pkt) = self.forward_data(ctx, pkt, SimDuration::ZERO) else {
            return;
        };
        let dst = pkt.ip.dst;
        let repairing = self
            .table
            .get(dst)
            .is_some_and(|r| r.state == RouteState::Repairing);
        if self.p.rules == Rules::Ns2 && pkt.ip.src == self.me {
            // ns-2 `rt_resolve`: the source buffers and asks (sendRequest
            // decides whether a request is due).
            self.buffer_packet(ctx, pkt);
            self.ns2_send_request(ctx, dst, false);
        } else if repairing {
            self.buffer_packet(ctx, pkt);
        } else if pkt.ip.src == self.me {
            self.buffer_packet(ctx, pkt);
            self.request_route(ctx, dst);
        } else {
            // §6.11 (ii): data to forward but no route: tell upstream, drop.
            let seq = self.table.get(dst).map_or(0, |r| r.seq);
            self.send_rerr(ctx, vec![(dst, seq)], false);
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::NoRoute,
            });
        }
    }

    fn failure_callback(&self, pkt: &Packet) -> bool {
        // ns-2 sets the link-failure callback only in `rt_resolve`, i.e. on data;
        // its replies (originated or forwarded, the header zeroed at allocation)
        // carry none, so the MAC's `RET` (or ARP's drop) is their end.
        self.p.rules != Rules::Ns2 || !pkt.is_routing()
    }

    fn tx_failed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, next_hop: NodeId) {
        // ns-2's `rt_ll_failed` drops what the MAC gave up on as `CBK` (the MAC's own
        // `RET` line is for its discarded original); RFC rules keep the MAC's `RET`.
        let failed = if self.p.rules == Rules::Ns2 {
            DropReason::MacCallback
        } else {
            DropReason::RetryLimit
        };
        // ns-2: control packets and broadcasts are simply dropped; with HELLO
        // detection the MAC's verdict is not used at all.
        if pkt.is_routing() || self.p.link_detection != LinkDetection::Mac {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: failed,
            });
            return;
        }
        let now = ctx.now;
        let dst = pkt.ip.dst;
        let travelled = pkt.ip.forwards();
        if self.p.rules == Rules::Ns2 {
            // ns-2 `rt_ll_failed`. Without an entry for the destination nothing
            // else happens.
            let Some(r) = self.table.get(dst) else {
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: failed,
                });
                return;
            };
            // Repair when the packet has come further than the route still has
            // to go (a route that is down has ns-2's infinite hop count).
            if self.p.local_repair
                && r.state != RouteState::Invalid
                && travelled > r.hops
                && r.hops <= self.p.max_repair_ttl
            {
                // The other packets queued for the neighbour stay in the queue
                // and the other routes through it stay up (ns-2).
                self.ns2_local_repair(ctx, dst, pkt);
            } else {
                ctx.actions.push(RoutingAction::Drop {
                    pkt,
                    reason: failed,
                });
                ctx.actions.push(RoutingAction::ReclaimQueued { next_hop });
                self.ns2_link_failure(ctx, next_hop);
            }
            return;
        }
        let repair = match self.table.active(now, dst) {
            // ns-2: repair when the break is closer to the destination than to the source.
            Some(r) => {
                r.next_hop == next_hop
                    && self.p.local_repair
                    && pkt.ip.src != self.me
                    && travelled > r.hops
                    && r.hops <= self.p.max_repair_ttl
            }
            None => false,
        };
        let cut = self.link_break(ctx, next_hop, repair.then_some(dst));
        if cut {
            self.counters.route_breaks += 1;
        }
        // Packets already queued for the dead neighbour come back to us.
        ctx.actions.push(RoutingAction::ReclaimQueued { next_hop });
        if repair {
            self.start_local_repair(ctx, dst, pkt);
        } else if self
            .table
            .get(dst)
            .is_some_and(|r| r.state == RouteState::Repairing)
        {
            self.buffer_packet(ctx, pkt);
        } else {
            ctx.actions.push(RoutingAction::Drop {
                pkt,
                reason: DropReason::RetryLimit,
            });
        }
    }

    fn reclaimed(&mut self, ctx: &mut RoutingCtx, pkt: Packet, _next_hop: NodeId) {
        // Data for a destination under repair waits for the repair; the rest is
        // dropped as ns-2 does (`DROP_RTR_MAC_CALLBACK`).
        if self.p.rules == Rules::Rfc3561
            && !pkt.is_routing()
            && self
                .table
                .get(pkt.ip.dst)
                .is_some_and(|r| r.state == RouteState::Repairing)
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
