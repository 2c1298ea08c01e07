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

use super::render::{ns2_addr, put_addr, Ns2Style, PcapBody, WireFormat};
use crate::ids::NodeId;
use std::fmt::Write;

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

// ---- rendering: ns-2 trace fields and pcap bytes ------------------------------

/// IP protocol number of the DSR Options header (RFC 4728 §10).
pub const IPPROTO_DSR: u8 = 48;
/// "No Next Header" (RFC 4728 §6.1, IANA protocol 59): a DSR packet carrying options only.
pub const IPPROTO_NONE: u8 = 59;

/// DSR option types (RFC 4728 §6).
pub const DSR_OPT_RREQ: u8 = 1;
pub const DSR_OPT_RREP: u8 = 2;
pub const DSR_OPT_RERR: u8 = 3;
pub const DSR_OPT_SRCRT: u8 = 96;
/// RFC 4728 §6.4.1: error type NODE_UNREACHABLE.
pub const DSR_ERR_NODE_UNREACHABLE: u8 = 1;

/// RFC 4728 §6.7 Source Route option for a packet on the air from
/// `sr.path[sr.next - 1]` to `sr.path[sr.next]`: the intermediate nodes
/// (source and destination are the IP addresses), and Segments Left = the
/// listed nodes still to be visited. None for a one-hop route (§8.1.3: no
/// option is needed).
fn srcrt_option(b: &mut Vec<u8>, sr: &SourceRoute) {
    if sr.path.len() <= 2 {
        return;
    }
    let hops = &sr.path[1..sr.path.len() - 1];
    let segs_left = (sr.path.len() - 1).saturating_sub(sr.next.max(1) as usize) as u16;
    b.push(DSR_OPT_SRCRT);
    b.push(2 + 4 * hops.len() as u8);
    // |F|L|reserved(4)|salvage(4)|segments left(6)|
    let bits = (u16::from(sr.salvaged & 0x0f) << 6) | (segs_left & 0x3f);
    b.extend_from_slice(&bits.to_be_bytes());
    for &n in hops {
        put_addr(b, n);
    }
}

/// RFC 4728 §6.4 Route Error option, type NODE_UNREACHABLE.
fn rerr_option(b: &mut Vec<u8>, from: NodeId, tell: NodeId, unreachable: NodeId) {
    b.extend_from_slice(&[DSR_OPT_RERR, 14, DSR_ERR_NODE_UNREACHABLE, 0]);
    put_addr(b, from);
    put_addr(b, tell);
    put_addr(b, unreachable);
}

/// The DSR Options header (RFC 4728 §6.1) around `options`.
fn dsr_header(next_header: u8, options: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(4 + options.len());
    b.extend_from_slice(&[next_header, 0]);
    b.extend_from_slice(&(options.len() as u16).to_be_bytes());
    b.extend_from_slice(options);
    b
}

/// The DSR header of a control packet from IP source `src`.
pub fn dsr_control(m: &DsrMessage, src: NodeId) -> Vec<u8> {
    let mut o = Vec::with_capacity(48);
    match m {
        DsrMessage::Rreq(r) => {
            // §6.2: the addresses recorded so far; the initiator is the IP source, not listed.
            let hops = r.path.get(1..).unwrap_or(&[]);
            o.push(DSR_OPT_RREQ);
            o.push(6 + 4 * hops.len() as u8);
            o.extend_from_slice(&((r.id & 0xffff) as u16).to_be_bytes());
            put_addr(&mut o, r.target);
            for &n in hops {
                put_addr(&mut o, n);
            }
            if let Some((from, to)) = r.error {
                // §8.2.1: the last route error, addressed to the initiator.
                rerr_option(&mut o, from, src, to);
            }
        }
        DsrMessage::Rrep(r) => {
            // §6.3: the route from the initiator (the reply's IP destination), not listed.
            let hops = r.route.get(1..).unwrap_or(&[]);
            o.push(DSR_OPT_RREP);
            o.push(1 + 4 * hops.len() as u8);
            o.push(0); // L (last hop external) = 0, reserved
            for &n in hops {
                put_addr(&mut o, n);
            }
            srcrt_option(&mut o, &r.sr);
        }
        DsrMessage::Rerr(r) => {
            rerr_option(&mut o, r.from, r.tell, r.to);
            for &(tell, from, to) in r.nested.iter().rev() {
                rerr_option(&mut o, from, tell, to);
            }
            srcrt_option(&mut o, &r.sr);
        }
    }
    dsr_header(IPPROTO_NONE, &o)
}

/// The DSR header a data packet on source route `sr` carries before its
/// transport header (`next_header`: that header's protocol).
pub fn dsr_data(sr: &SourceRoute, next_header: u8) -> Vec<u8> {
    let mut o = Vec::with_capacity(4 + 4 * sr.path.len());
    srcrt_option(&mut o, sr);
    dsr_header(next_header, &o)
}

/// The fields of ns-2's `format_dsr`: addresses in the source route, request
/// flag and id, reply flag and route length with its first and last address,
/// error flag, count and the last broken link (tell, from → to).
struct Ns2DsrFields {
    num_addrs: u32,
    request: bool,
    request_id: u32,
    reply: bool,
    reply_len: u32,
    reply_ends: (i64, i64),
    error: bool,
    num_errors: u32,
    error_link: (i64, i64, i64),
}

impl Ns2DsrFields {
    fn of(m: &DsrMessage) -> Self {
        let none = Ns2DsrFields {
            num_addrs: 0,
            request: false,
            request_id: 0,
            reply: false,
            reply_len: 0,
            reply_ends: (0, 0),
            error: false,
            num_errors: 0,
            error_link: (0, 0, 0),
        };
        match m {
            DsrMessage::Rreq(r) => Ns2DsrFields {
                num_addrs: r.path.len() as u32,
                request: true,
                request_id: r.id,
                error: r.error.is_some(),
                num_errors: u32::from(r.error.is_some()),
                error_link: r
                    .error
                    .map_or((0, 0, 0), |(f, t)| (0, ns2_addr(f), ns2_addr(t))),
                ..none
            },
            DsrMessage::Rrep(r) => Ns2DsrFields {
                num_addrs: r.sr.path.len() as u32,
                request_id: r.req_id,
                reply: true,
                reply_len: r.route.len() as u32,
                reply_ends: (
                    r.route.first().map_or(0, |&n| ns2_addr(n)),
                    r.route.last().map_or(0, |&n| ns2_addr(n)),
                ),
                ..none
            },
            DsrMessage::Rerr(e) => Ns2DsrFields {
                num_addrs: e.sr.path.len() as u32,
                error: true,
                num_errors: 1 + e.nested.len() as u32,
                error_link: (ns2_addr(e.tell), ns2_addr(e.from), ns2_addr(e.to)),
                ..none
            },
        }
    }
}

impl WireFormat for DsrMessage {
    fn size_bytes(&self) -> u32 {
        DsrMessage::size_bytes(self)
    }

    fn ns2_ptype(&self) -> &'static str {
        "DSR"
    }

    fn ns2_trace_fields(&self, style: Ns2Style, out: &mut String) {
        let d = Ns2DsrFields::of(self);
        let _ = match style {
            Ns2Style::Old => write!(
                out,
                "{} [{} {}] [{} {} {} {}->{}] [{} {} {} {}->{}]",
                d.num_addrs,
                u8::from(d.request),
                d.request_id,
                u8::from(d.reply),
                d.request_id,
                d.reply_len,
                d.reply_ends.0,
                d.reply_ends.1,
                u8::from(d.error),
                d.num_errors,
                d.error_link.0,
                d.error_link.1,
                d.error_link.2
            ),
            Ns2Style::New => write!(
                out,
                "-P dsr -Ph {} -Pq {} -Ps {} -Pp {} -Pn {} -Pl {} -Pe {}->{} -Pw {} -Pm {} -Pc {} -Pb {}->{} ",
                d.num_addrs,
                u8::from(d.request),
                d.request_id,
                u8::from(d.reply),
                d.request_id,
                d.reply_len,
                d.reply_ends.0,
                d.reply_ends.1,
                u8::from(d.error),
                d.num_errors,
                d.error_link.0,
                d.error_link.1,
                d.error_link.2
            ),
        };
    }

    fn pcap_bytes(&self, ip_src: NodeId, _next_header: u8) -> PcapBody {
        PcapBody::Ip {
            proto: IPPROTO_DSR,
            bytes: dsr_control(self, ip_src),
        }
    }

    /// ns-2's DSR addresses a route request to its target (and broadcasts it at the MAC).
    fn ns2_ip_dst(&self) -> Option<NodeId> {
        match self {
            DsrMessage::Rreq(r) => Some(r.target),
            _ => None,
        }
    }
}

impl WireFormat for SourceRoute {
    fn size_bytes(&self) -> u32 {
        SourceRoute::size_bytes(self)
    }

    fn ns2_ptype(&self) -> &'static str {
        "DSR"
    }

    /// RFC 4728 §6.1: the DSR header sits between IP and the transport header.
    /// (RFC 4728 has no flow state: flow-only packets are written with their route.)
    fn pcap_bytes(&self, _ip_src: NodeId, next_header: u8) -> PcapBody {
        PcapBody::Ip {
            proto: IPPROTO_DSR,
            bytes: dsr_data(self, next_header),
        }
    }
}

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
