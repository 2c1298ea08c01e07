//! The counters every routing protocol keeps (routing overhead, discoveries,
//! breaks); the results turn them into per-node columns (`metrics::RoutingSummary`).

use std::collections::BTreeMap;

/// A routing protocol's counters at one node (docs/routing.md). Control packets
/// are counted when the protocol hands them down (ns-2 counts routing overhead
/// at the RTR layer the same way): `originated` are messages this node created
/// (RREQ it initiates, RREP it generates, RERR for a break it detected, HELLO),
/// `forwarded` are messages it relays for others (RREQ rebroadcast, RREP on its
/// way to the originator, RERR propagated upstream).
#[derive(Clone, Debug, Default)]
pub struct RoutingCounters {
    pub ctrl_originated_pkts: u64,
    pub ctrl_originated_bytes: u64,
    pub ctrl_forwarded_pkts: u64,
    pub ctrl_forwarded_bytes: u64,
    pub ctrl_received_pkts: u64,
    /// Control packets sent (originated + forwarded) per message type.
    pub sent_by_type: BTreeMap<&'static str, u64>,
    /// Control packets received per message type.
    pub received_by_type: BTreeMap<&'static str, u64>,
    /// Route discoveries this node started as a source (not counting retries).
    pub discoveries: u64,
    /// Discoveries that gave up after all retries.
    pub discoveries_failed: u64,
    /// Route requests re-sent after a timeout (wider ring or network-wide retry).
    pub request_retries: u64,
    /// Discoveries that found a route, with the routes' hop counts and the time
    /// from the first request to the route (s), summed.
    pub routes_found: u64,
    pub route_hops_sum: u64,
    pub discovery_time_sum_s: f64,
    /// Link breaks detected (MAC feedback or lost HELLOs) that cut an active route.
    pub route_breaks: u64,
    pub local_repairs: u64,
    pub local_repairs_failed: u64,
    /// Requests received again and suppressed (each node handles a request once).
    pub duplicate_requests: u64,
    /// DSR: packets this node forwarded on a new route from its cache after
    /// their next hop failed (salvaging, RFC 4728 §8.3.6).
    pub salvaged: u64,
    /// DSR: route requests this node (not the target) answered from its cache.
    pub replies_from_cache: u64,
    /// DSR: gratuitous route replies sent (automatic route shortening, RFC 4728 §3.4.3).
    pub gratuitous_replies: u64,
}

impl RoutingCounters {
    /// Counters with a zero entry for each message kind of a protocol, so every
    /// kind appears in the results even when none was sent.
    pub fn with_kinds(kinds: &[&'static str]) -> Self {
        let mut c = RoutingCounters::default();
        for &k in kinds {
            c.sent_by_type.insert(k, 0);
            c.received_by_type.insert(k, 0);
        }
        c
    }

    /// Count a control packet of `kind` and `bytes` (IP included) handed down.
    pub fn on_send(&mut self, kind: &'static str, bytes: u32, forwarded: bool) {
        if forwarded {
            self.ctrl_forwarded_pkts += 1;
            self.ctrl_forwarded_bytes += bytes as u64;
        } else {
            self.ctrl_originated_pkts += 1;
            self.ctrl_originated_bytes += bytes as u64;
        }
        *self.sent_by_type.entry(kind).or_default() += 1;
    }
}
