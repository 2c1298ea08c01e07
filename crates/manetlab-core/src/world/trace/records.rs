//! Rendering a packet into the parts of an ns-2 trace record (its type name,
//! sizes, IP, application, AODV and DSR parts, drop level), as ns-2 2.35
//! prints them. Pure functions of the packet: which lines are written, and
//! when, is the hooks' business (world/trace.rs).

use crate::ids::NodeId;
use crate::mac::frame::{DATA_HEADER_BYTES, PLCP_BYTES};
use crate::metrics::DropReason;
use crate::packet::{Packet, TransportHeader, IP_HEADER_BYTES};
use crate::routing::aodv::AodvMessage;
use crate::routing::dsr::DsrMessage;
use crate::routing::RoutingMessage;
use crate::trace::ns2::{ip_addr, AodvPart, AodvReply, AppPart, DsrPart, IpPart, Level};
use crate::trace::RxNote;

/// ns-2's ether types in the MAC header.
pub(super) const ETHERTYPE_IP: u32 = 0x800;
pub(super) const ETHERTYPE_ARP: u32 = 0x806;
/// How ns-2 prints the MAC broadcast address (`%x` of -1).
pub(super) const MAC_BROADCAST: u32 = u32::MAX;

/// ns-2's packet type name.
pub(super) fn ptype(pkt: &Packet) -> &'static str {
    match &pkt.transport {
        TransportHeader::Udp(_) => "cbr",
        // A pure ACK; SYN and FIN segments count as "tcp" like data.
        TransportHeader::Tcp(h) if pkt.payload_bytes == 0 && !h.flags.syn && !h.flags.fin => "ack",
        TransportHeader::Tcp(_) => "tcp",
        TransportHeader::Routing(RoutingMessage::Aodv(_)) => "AODV",
        // ns-2's DSDV agent sends PT_MESSAGE packets.
        TransportHeader::Routing(RoutingMessage::Dsdv(_)) => "message",
        TransportHeader::Routing(RoutingMessage::Dsr(_)) => "DSR",
        TransportHeader::Routing(RoutingMessage::Frn(_)) => "FRN",
    }
}

/// Size as the sending agent hands the packet down, before any router added to it:
/// a CBR packet is its UDP payload (ns-2's `Agent/UDP` adds no header; ours adds 8
/// bytes when `udp_header` is on), a TCP segment its payload + 40 (ns-2's TCP
/// agents count the IP header in; Vegas its payload only), a routing message its
/// whole datagram.
pub(super) fn agent_size(pkt: &Packet) -> u32 {
    match &pkt.transport {
        TransportHeader::Udp(_) => pkt.transport.size_bytes() + pkt.payload_bytes,
        // ns-2.35 Vegas hands down packetSize_ bytes without its header.
        TransportHeader::Tcp(h) if h.headerless => pkt.payload_bytes,
        TransportHeader::Tcp(_) => IP_HEADER_BYTES + pkt.transport.size_bytes() + pkt.payload_bytes,
        TransportHeader::Routing(_) => pkt.size_bytes(),
    }
}

/// The IP datagram's size: what ns-2 prints once a router has handled the packet
/// (from `s RTR` on, at the IFQ, and on `r MAC` lines, whose MAC header ns-2 has
/// already taken off). ns-2's AODV adds its 20-byte IP header to everything but
/// TCP, so a 1000-byte segment is 1040 B after routing, as here; ns-2's DSR and
/// DSDV add it to TCP too (1060 B). The trace prints the size the model sends
/// (docs/ns2-differences.md).
pub(super) fn ip_size(pkt: &Packet) -> u32 {
    pkt.size_bytes()
}

/// A data frame's size on `s MAC` lines: the MSDU + the 802.11 header and FCS +
/// ns-2's 24 bytes for the PLCP (its `getHdrLen11()`: 58 B in all).
pub(super) fn frame_size(msdu_bytes: u32) -> u32 {
    msdu_bytes + DATA_HEADER_BYTES + PLCP_BYTES
}

pub(super) fn app_part(pkt: &Packet) -> AppPart {
    match &pkt.transport {
        TransportHeader::Udp(_) => AppPart::Cbr {
            seq: pkt.tag.map_or(0, |t| t.seq),
        },
        // Byte sequence numbers (ns-2 prints segment numbers; docs/metrics.md).
        TransportHeader::Tcp(h) => AppPart::Tcp {
            seq: h.seq as i64,
            ack: h.ack as i64,
        },
        TransportHeader::Routing(RoutingMessage::Aodv(m)) => AppPart::Aodv(aodv_part(m)),
        TransportHeader::Routing(RoutingMessage::Dsr(m)) => AppPart::Dsr(dsr_part(m)),
        TransportHeader::Routing(RoutingMessage::Dsdv(_)) => AppPart::None,
        // FRN control has no ns-2 counterpart: no application part, as DSDV's.
        TransportHeader::Routing(RoutingMessage::Frn(_)) => AppPart::None,
    }
}

/// ns-2 counts AODV hops including the hop the message is crossing (an RREQ leaves
/// its originator with hop count 1); RFC 3561, and manetlab, count from 0.
pub(super) fn aodv_part(m: &AodvMessage) -> AodvPart {
    let hops = |h: u8| u32::from(h) + 1;
    match m {
        AodvMessage::Rreq(r) => AodvPart::Request {
            hops: hops(r.hop_count),
            id: r.id,
            dst: ip_addr(r.dst),
            dst_seq: r.dst_seq,
            src: ip_addr(r.originator),
            src_seq: r.originator_seq,
        },
        AodvMessage::Rrep(r) => AodvPart::Reply {
            kind: AodvReply::Reply,
            hops: hops(r.hop_count),
            dst: ip_addr(r.dst),
            dst_seq: r.dst_seq,
            lifetime_s: r.lifetime_ns as f64 * 1e-9,
        },
        AodvMessage::Hello(h) => AodvPart::Reply {
            kind: AodvReply::Hello,
            hops: 1,
            dst: ip_addr(h.node),
            dst_seq: h.seq,
            lifetime_s: h.lifetime_ns as f64 * 1e-9,
        },
        // ns-2 prints an RERR through the RREP layout: its destination count where
        // the hop count is, then the first unreachable destination and its number
        // (ns-2's overlay shows the second address there; we print the number) and
        // no lifetime.
        AodvMessage::Rerr(e) => {
            let (d, s) = e
                .unreachable
                .first()
                .map_or((-1, 0), |&(d, s)| (ip_addr(d), s));
            AodvPart::Reply {
                kind: AodvReply::Error,
                hops: e.unreachable.len() as u32,
                dst: d,
                dst_seq: s,
                lifetime_s: 0.0,
            }
        }
    }
}

pub(super) fn dsr_part(m: &DsrMessage) -> DsrPart {
    let none = DsrPart {
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
        DsrMessage::Rreq(r) => DsrPart {
            num_addrs: r.path.len() as u32,
            request: true,
            request_id: r.id,
            error: r.error.is_some(),
            num_errors: u32::from(r.error.is_some()),
            error_link: r
                .error
                .map_or((0, 0, 0), |(f, t)| (0, ip_addr(f), ip_addr(t))),
            ..none
        },
        DsrMessage::Rrep(r) => DsrPart {
            num_addrs: r.sr.path.len() as u32,
            request_id: r.req_id,
            reply: true,
            reply_len: r.route.len() as u32,
            reply_ends: (
                r.route.first().map_or(0, |&n| ip_addr(n)),
                r.route.last().map_or(0, |&n| ip_addr(n)),
            ),
            ..none
        },
        DsrMessage::Rerr(e) => DsrPart {
            num_addrs: e.sr.path.len() as u32,
            error: true,
            num_errors: 1 + e.nested.len() as u32,
            error_link: (ip_addr(e.tell), ip_addr(e.from), ip_addr(e.to)),
            ..none
        },
    }
}

/// The IP source ns-2 would show. ns-2's AODV forwards an RREP as the packet it
/// received, IP source kept (so the forwarder's line is `f`); manetlab's AODV, as
/// RFC 3561, sends it on from its own address (same uid). `rx` is the note of the
/// node that last received the packet (the one writing the line, or a frame's
/// transmitter), whose noted source is already ns-2's.
pub(super) fn ns2_src(pkt: &Packet, rx: Option<RxNote>) -> NodeId {
    match (rx, &pkt.transport) {
        (Some(r), TransportHeader::Routing(RoutingMessage::Aodv(AodvMessage::Rrep(_)))) => r.ip_src,
        _ => pkt.ip.src,
    }
}

pub(super) fn ip_part(pkt: &Packet, src: NodeId) -> IpPart {
    let (sport, dport) = match &pkt.transport {
        TransportHeader::Udp(u) => (u.src_port, u.dst_port),
        TransportHeader::Tcp(h) => (h.src_port, h.dst_port),
        TransportHeader::Routing(_) => (255, 255), // ns-2's RT_PORT
    };
    // ns-2's DSR addresses a route request to its target (and broadcasts it at the MAC).
    let dst = match &pkt.transport {
        TransportHeader::Routing(RoutingMessage::Dsr(DsrMessage::Rreq(r))) => r.target,
        _ => pkt.ip.dst,
    };
    IpPart {
        src: ip_addr(src),
        sport,
        dst: ip_addr(dst),
        dport,
        ttl: pkt.ip.ttl,
    }
}

/// Hops a data packet has crossed (ns-2 `num_forwards`, which the receiving side
/// counts): each forwarder took one off the TTL, and a copy just taken off the air
/// has crossed one more hop than its TTL says.
pub(super) fn forwards(pkt: &Packet, received_here: bool) -> u32 {
    u32::from(pkt.ip.forwards()) + u32::from(received_here)
}

/// Whether ns-2's routing agent would have set the packet's `xmit_failure_`
/// callback, so that its MAC hands it back after the retry limit (and traces it
/// without the MAC header). ns-2's AODV sets it only in `rt_resolve`, on data;
/// its own unicast replies go without (aodv.cc `sendReply`); DSR and DSDV set it
/// on every unicast they send.
pub(super) fn ns2_calls_back(pkt: &Packet) -> bool {
    !matches!(
        pkt.transport,
        TransportHeader::Routing(RoutingMessage::Aodv(_))
    )
}

/// The trace level of a drop reason.
pub(super) fn drop_level(r: DropReason) -> Level {
    match r.layer() {
        "mac" => Level::Mac,
        "ifq" => Level::Ifq,
        _ => Level::Rtr,
    }
}
