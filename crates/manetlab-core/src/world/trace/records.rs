//! Rendering a packet into the parts of an ns-2 trace record (its type name,
//! sizes, IP and application parts, drop level), as ns-2 2.35 prints them; each
//! protocol's own part comes from its `WireFormat` (crate::wire::render). Pure
//! functions of the packet: which lines are written, and when, is the hooks'
//! business (world/trace.rs).

use crate::ids::NodeId;
use crate::mac::frame::{DATA_HEADER_BYTES, PLCP_BYTES};
use crate::metrics::DropReason;
use crate::trace::ns2::{ip_addr, AppPart, IpPart, Level};
use crate::trace::RxNote;
use crate::wire::{Packet, TransportHeader, IP_HEADER_BYTES};

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
        TransportHeader::Routing(m) => m.wire().ns2_ptype(),
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

pub(super) fn app_part(pkt: &Packet) -> AppPart<'_> {
    match &pkt.transport {
        TransportHeader::Udp(_) => AppPart::Cbr {
            seq: pkt.tag.map_or(0, |t| t.seq),
        },
        // Byte sequence numbers (ns-2 prints segment numbers; docs/metrics.md).
        TransportHeader::Tcp(h) => AppPart::Tcp {
            seq: h.seq as i64,
            ack: h.ack as i64,
        },
        TransportHeader::Routing(m) => AppPart::Routing(m.wire()),
    }
}

/// The IP source ns-2 would show: where ns-2 forwards a message as received
/// (`WireFormat::ns2_keeps_received_src`: AODV's RREP), the source noted by the
/// node that last received the packet (the one writing the line, or a frame's
/// transmitter), which is already ns-2's.
pub(super) fn ns2_src(pkt: &Packet, rx: Option<RxNote>) -> NodeId {
    match (rx, &pkt.transport) {
        (Some(r), TransportHeader::Routing(m)) if m.wire().ns2_keeps_received_src() => r.ip_src,
        _ => pkt.ip.src,
    }
}

pub(super) fn ip_part(pkt: &Packet, src: NodeId) -> IpPart {
    let (sport, dport) = match &pkt.transport {
        TransportHeader::Udp(u) => (u.src_port, u.dst_port),
        TransportHeader::Tcp(h) => (h.src_port, h.dst_port),
        TransportHeader::Routing(_) => (255, 255), // ns-2's RT_PORT
    };
    // ns-2 may print another destination (DSR: a route request's target).
    let dst = match &pkt.transport {
        TransportHeader::Routing(m) => m.wire().ns2_ip_dst().unwrap_or(pkt.ip.dst),
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
/// without the MAC header): set on data, and on the control messages whose
/// protocol sets it (`WireFormat::ns2_calls_back`).
pub(super) fn ns2_calls_back(pkt: &Packet) -> bool {
    match &pkt.transport {
        TransportHeader::Routing(m) => m.wire().ns2_calls_back(),
        _ => true,
    }
}

/// The trace level of a drop reason.
pub(super) fn drop_level(r: DropReason) -> Level {
    match r.layer() {
        "mac" => Level::Mac,
        "ifq" => Level::Ifq,
        _ => Level::Rtr,
    }
}
