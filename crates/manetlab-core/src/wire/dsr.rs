//! DSR headers (RFC 4728 §6) and their sizes as ns-2 counts them.
//!
//! ns-2 carries every DSR option in one `hdr_sr` and charges (`hdr_sr::size()`,
//! `dsr/hdr_sr.h`), rounded up to a multiple of 4:
//!
//! | part | bytes |
//! |---|---|
//! | fixed part (`SR_HDR_SZ`), if any option is present | 4 |
//! | source route of n addresses (source and destination included) | 4·(n − 1) |
//! | route request | 8 |
//! | route reply listing L addresses | 5 + 4·L |
//! | route error, per broken link | 16 |
//!
//! on top of the 20-byte IP header. We keep ns-2's accounting: a data packet
//! with a 4-hop route carries 4 + 16 = 20 bytes of DSR header; a first route
//! request 4 + 8 = 12 bytes. (RFC 4728's own encoding differs in detail.) With
//! flow state ([`FlowMark`]) a data packet carries the route plus 8 bytes of flow
//! options while its flow is set up, then a 4-byte flow id or no DSR header at all.
//!
//! Data packets carry their [`SourceRoute`] in [`Packet::source_route`]
//! (crate::wire::Packet); control packets are `TransportHeader::Routing`
//! messages whose size includes the source route they travel on.

use crate::ids::NodeId;

/// The fixed part of the DSR header (ns-2 `SR_HDR_SZ`).
pub const SR_HDR_BYTES: u32 = 4;
/// A route request option (ns-2: identification + target + max propagation).
pub const RREQ_OPT_BYTES: u32 = 8;
/// A route reply option without its addresses.
pub const RREP_OPT_BASE_BYTES: u32 = 5;
/// One broken link in a route error (ns-2: type, tell, from, to).
pub const RERR_LINK_BYTES: u32 = 16;
/// Bytes per address.
pub const ADDR_BYTES: u32 = 4;

fn align4(b: u32) -> u32 {
    (b + 3) & !3
}

fn route_bytes(n: usize) -> u32 {
    ADDR_BYTES * (n.max(1) as u32 - 1)
}

/// The DSR source route option (RFC 4728 §6.7): the whole route, and where the
/// packet is on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRoute {
    /// Source first, destination last; no node twice.
    pub path: Vec<NodeId>,
    /// Index in `path` of the node the packet is being sent to (ns-2's
    /// `cur_addr` after the send). The node at `path[next]` forwards it to
    /// `path[next + 1]`.
    pub next: u8,
    /// Times the packet was salvaged (RFC 4728 §6.7 "Salvage").
    pub salvaged: u8,
    /// What of the route a data packet carries on the air under ns-2's flow
    /// state (`FlowMark::None` for control packets and without flow state).
    pub flow: FlowMark,
}

/// ns-2.35's DSR flow-state header on a data packet (`dsragent_enable_flowstate`,
/// hard-wired on; the flow-state extension of the DSR drafts, Hu et al.). The
/// source route stays in [`SourceRoute::path`] for the simulation's own
/// forwarding, but a flow-only packet does not carry it on the air: it costs
/// fewer bytes and nodes that forward or overhear it learn no route from it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowMark {
    /// A plain source route: control packets, salvaged packets, flow state off.
    #[default]
    None,
    /// The source route plus flow id and flow timeout: sets the flow up at
    /// each hop (ns-2 trace `SFESTs`): 8 bytes more than a plain route.
    Establish,
    /// Flow id only, no route (ns-2 `SFs` with `flow_header`): 4 bytes.
    FlowId,
    /// The (src, dst) pair's default flow: no DSR header at all (ns-2 `SFs`
    /// without `flow_header`): 0 bytes.
    Default,
}

/// The flow-state options an establishing packet adds: flow timeout and flow id
/// (ns-2 `hdr_sr::size()`: `flow_timeout` 4, `flow_header` 4).
pub const FLOW_EST_BYTES: u32 = 8;
/// The flow-id option alone.
pub const FLOW_ID_BYTES: u32 = 4;

impl SourceRoute {
    pub fn new(path: Vec<NodeId>) -> Self {
        SourceRoute {
            path,
            next: 0,
            salvaged: 0,
            flow: FlowMark::None,
        }
    }

    /// A control packet's route from the sender (`path[0]`): next hop `path[1]`.
    pub fn outbound(path: Vec<NodeId>) -> Self {
        SourceRoute {
            next: 1,
            ..SourceRoute::new(path)
        }
    }

    /// Header bytes as ns-2 counts them for a data packet.
    pub fn size_bytes(&self) -> u32 {
        match self.flow {
            FlowMark::None => align4(SR_HDR_BYTES + route_bytes(self.path.len())),
            FlowMark::Establish => {
                align4(SR_HDR_BYTES + route_bytes(self.path.len()) + FLOW_EST_BYTES)
            }
            FlowMark::FlowId => FLOW_ID_BYTES,
            FlowMark::Default => 0,
        }
    }

    /// Whether the route itself is on the air (ns-2 `num_addrs` > 0): false
    /// for flow-only packets, which forwarders and overhearers cannot learn from.
    pub fn on_air(&self) -> bool {
        matches!(self.flow, FlowMark::None | FlowMark::Establish)
    }

    /// Hops of the whole route.
    pub fn hops(&self) -> usize {
        self.path.len().saturating_sub(1)
    }
}

/// Route Request (RFC 4728 §6.2), broadcast hop by hop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rreq {
    /// Identification, unique per originator (ns-2 `rtreq_seq`, increasing).
    pub id: u32,
    pub target: NodeId,
    /// The route so far: the originator first, then each node that
    /// rebroadcast the request.
    pub path: Vec<NodeId>,
    /// How many nodes besides the originator may rebroadcast (ns-2
    /// `max_propagation`): 0 for a non-propagating request.
    pub max_propagation: u8,
    /// A broken link (from, to) piggybacked from the last route error this
    /// node received (ns-2 `dsragent_propagate_last_error`; RFC 4728 §8.2.1).
    pub error: Option<(NodeId, NodeId)>,
    /// Bytes ns-2.35 still counts from the headers of earlier hops: its
    /// `handleRouteRequest` adds the grown header to the packet size again
    /// without removing the old one (`handleForwarding` does remove it), so a
    /// request is 32, 48, 68, 92, 120 … bytes after 0, 1, 2, 3, 4 relays.
    /// 0 unless `Params::request_size_bug`.
    pub stale_bytes: u32,
}

impl Rreq {
    /// The request's DSR header as it stands (without `stale_bytes`).
    pub fn header_bytes(&self) -> u32 {
        align4(
            SR_HDR_BYTES
                + route_bytes(self.path.len())
                + RREQ_OPT_BYTES
                + if self.error.is_some() {
                    RERR_LINK_BYTES
                } else {
                    0
                },
        )
    }
}

/// Route Reply (RFC 4728 §6.3), unicast along `sr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rrep {
    /// The discovered route, from the node that asked to the target.
    pub route: Vec<NodeId>,
    /// The request answered (0 for a gratuitous reply, as ns-2).
    pub req_id: u32,
    /// The route the reply travels on, back to `route[0]`.
    pub sr: SourceRoute,
}

/// Route Error (RFC 4728 §6.4, type NODE_UNREACHABLE), unicast along `sr` to
/// `tell`: the link from `from` to `to` is broken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerr {
    pub from: NodeId,
    pub to: NodeId,
    pub tell: NodeId,
    /// Errors this one is nested around, innermost first, as (tell, from, to):
    /// in ns-2 a route error that itself fails to cross a link becomes a new
    /// error carrying the old ones (at most [`MAX_ROUTE_ERRORS`] in all);
    /// its `tell` passes the rest on to the next one's `tell`.
    pub nested: Vec<(NodeId, NodeId, NodeId)>,
    pub sr: SourceRoute,
}

/// ns-2 `MAX_ROUTE_ERRORS`: broken links one DSR header can carry.
pub const MAX_ROUTE_ERRORS: usize = 3;

/// A DSR control packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DsrMessage {
    Rreq(Rreq),
    Rrep(Rrep),
    Rerr(Rerr),
}

impl DsrMessage {
    /// Header bytes after the IP header (ns-2 `hdr_sr::size()`).
    pub fn size_bytes(&self) -> u32 {
        let b = match self {
            DsrMessage::Rreq(r) => return r.header_bytes() + r.stale_bytes,
            DsrMessage::Rrep(r) => {
                route_bytes(r.sr.path.len())
                    + RREP_OPT_BASE_BYTES
                    + ADDR_BYTES * r.route.len() as u32
            }
            DsrMessage::Rerr(r) => {
                route_bytes(r.sr.path.len()) + RERR_LINK_BYTES * (1 + r.nested.len() as u32)
            }
        };
        align4(SR_HDR_BYTES + b)
    }

    /// The message type (keys of the per-type counters).
    pub fn kind(&self) -> &'static str {
        match self {
            DsrMessage::Rreq(_) => "RREQ",
            DsrMessage::Rrep(_) => "RREP",
            DsrMessage::Rerr(_) => "RERR",
        }
    }
}

/// Every message kind, for counters that list all of them.
pub const KINDS: [&str; 3] = ["RREQ", "RREP", "RERR"];

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<NodeId> {
        v.iter().map(|&i| NodeId(i)).collect()
    }

    #[test]
    fn sizes_follow_ns2_hdr_sr() {
        // 4-hop data route: 4 + 4·4 = 20 B.
        assert_eq!(SourceRoute::new(ids(&[0, 1, 2, 3, 4])).size_bytes(), 20);
        // A fresh request: 4 + 0 + 8 = 12 B; after two rebroadcasts 20 B.
        let mut rq = Rreq {
            id: 1,
            target: NodeId(4),
            path: ids(&[0]),
            max_propagation: 0,
            error: None,
            stale_bytes: 0,
        };
        assert_eq!(DsrMessage::Rreq(rq.clone()).size_bytes(), 12);
        rq.path = ids(&[0, 1, 2]);
        assert_eq!(DsrMessage::Rreq(rq.clone()).size_bytes(), 20);
        rq.error = Some((NodeId(5), NodeId(6)));
        assert_eq!(DsrMessage::Rreq(rq).size_bytes(), 36);
        // Reply for a 2-hop route travelling 2 hops: 4 + 8 + 5 + 12 = 29 → 32.
        let rp = Rrep {
            route: ids(&[0, 1, 2]),
            req_id: 1,
            sr: SourceRoute::new(ids(&[2, 1, 0])),
        };
        assert_eq!(DsrMessage::Rrep(rp).size_bytes(), 32);
        let re = Rerr {
            from: NodeId(2),
            to: NodeId(3),
            tell: NodeId(0),
            nested: vec![],
            sr: SourceRoute::new(ids(&[2, 1, 0])),
        };
        assert_eq!(DsrMessage::Rerr(re).size_bytes(), 28);
    }
}
