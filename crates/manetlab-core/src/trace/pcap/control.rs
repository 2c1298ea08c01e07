//! Routing control as the real protocols' bytes, so Wireshark's own dissectors
//! read every field (docs/metrics.md, "What a pcap holds"):
//!
//! * AODV: RFC 3561 §5 messages in a UDP datagram from and to port 654.
//! * DSR: an RFC 4728 §6.1 DSR Options header (IP protocol 48) holding the
//!   request, reply, error and source-route options; data packets on a source
//!   route carry the header in front of their TCP/UDP header.
//! * DSDV (no standard encoding): a UDP datagram from and to
//!   [`DSDV_UDP_PORT`], 12 bytes per advertised destination.
//!
//! These are the protocols' own encodings, not ns-2's accounting: the sizes
//! differ from the simulated on-air sizes by a few bytes (table in
//! docs/metrics.md); the simulation's sizes are untouched.

use super::node_addr;
use crate::ids::NodeId;
use crate::packet::{IpProto, Packet};
use crate::routing::aodv::AodvMessage;
use crate::routing::dsdv::DsdvMessage;
use crate::routing::dsr::{DsrMessage, SourceRoute};

/// AODV's UDP port (RFC 3561 §10, IANA "aodv").
pub const AODV_UDP_PORT: u16 = 654;
/// DSDV's UDP port in our pcap files: IANA-unassigned (dynamic range) and
/// claimed by no Wireshark 4.0 dissector, so the body shows as plain data.
pub const DSDV_UDP_PORT: u16 = 65_000;
/// IP protocol number of the DSR Options header (RFC 4728 §10).
pub const IPPROTO_DSR: u8 = 48;
/// "No Next Header" (RFC 4728 §6.1, IANA protocol 59): a DSR packet carrying options only.
pub const IPPROTO_NONE: u8 = 59;

/// AODV message types (RFC 3561 §5).
pub const AODV_RREQ: u8 = 1;
pub const AODV_RREP: u8 = 2;
pub const AODV_RERR: u8 = 3;

/// DSR option types (RFC 4728 §6).
pub const DSR_OPT_RREQ: u8 = 1;
pub const DSR_OPT_RREP: u8 = 2;
pub const DSR_OPT_RERR: u8 = 3;
pub const DSR_OPT_SRCRT: u8 = 96;
/// RFC 4728 §6.4.1: error type NODE_UNREACHABLE.
pub const DSR_ERR_NODE_UNREACHABLE: u8 = 1;

/// What follows the IP header of a routing control packet.
pub(super) enum Control {
    /// A UDP datagram from and to `port` with this body.
    Udp { port: u16, body: Vec<u8> },
    /// A DSR Options header (IP protocol 48) with nothing after it.
    Dsr(Vec<u8>),
}

fn put_addr(b: &mut Vec<u8>, n: NodeId) {
    b.extend_from_slice(&node_addr(n));
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}

/// Milliseconds, saturating (RFC 3561's Lifetime field is 32 bits of ms).
fn ms(ns: u64) -> u32 {
    u32::try_from(ns / 1_000_000).unwrap_or(u32::MAX)
}

/// An AODV message per RFC 3561 §5.1–5.3 (HELLO: §6.9, an RREP).
pub fn aodv_body(m: &AodvMessage) -> Vec<u8> {
    let mut b = Vec::with_capacity(24);
    match m {
        AodvMessage::Rreq(r) => {
            // |type|J R G D U reserved(11)|hop count|
            let flags = ((r.gratuitous as u8) << 5) | ((r.destination_only as u8) << 4) | ((r.unknown_seq as u8) << 3);
            b.extend_from_slice(&[AODV_RREQ, flags, 0, r.hop_count]);
            put_u32(&mut b, r.id);
            put_addr(&mut b, r.dst);
            put_u32(&mut b, r.dst_seq);
            put_addr(&mut b, r.originator);
            put_u32(&mut b, r.originator_seq);
        }
        AodvMessage::Rrep(r) => {
            // |type|R A reserved(9) prefix size(5)|hop count|: no repair or ack flags, prefix 0.
            b.extend_from_slice(&[AODV_RREP, 0, 0, r.hop_count]);
            put_addr(&mut b, r.dst);
            put_u32(&mut b, r.dst_seq);
            put_addr(&mut b, r.originator);
            put_u32(&mut b, ms(r.lifetime_ns));
        }
        AodvMessage::Hello(h) => {
            // §6.9: an RREP whose destination is the sender, hop count 0. The
            // originator field is not used by a HELLO; we put the sender there too.
            b.extend_from_slice(&[AODV_RREP, 0, 0, 0]);
            put_addr(&mut b, h.node);
            put_u32(&mut b, h.seq);
            put_addr(&mut b, h.node);
            put_u32(&mut b, ms(h.lifetime_ns));
        }
        AodvMessage::Rerr(e) => {
            // |type|N reserved(15)|DestCount|, then (address, sequence number) pairs.
            let count = u8::try_from(e.unreachable.len()).unwrap_or(u8::MAX);
            b.extend_from_slice(&[AODV_RERR, (e.no_delete as u8) << 7, 0, count]);
            for &(n, seq) in e.unreachable.iter().take(count as usize) {
                put_addr(&mut b, n);
                put_u32(&mut b, seq);
            }
        }
    }
    b
}

/// The DSDV body: per advertised destination its address, its sequence number
/// and the metric as a 32-bit number (250 = infinity), 12 bytes as ns-2 counts.
pub fn dsdv_body(m: &DsdvMessage) -> Vec<u8> {
    let mut b = Vec::with_capacity(12 * m.entries.len());
    for e in &m.entries {
        put_addr(&mut b, e.dst);
        put_u32(&mut b, e.seq);
        put_u32(&mut b, u32::from(e.metric));
    }
    b
}

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
pub fn dsr_data(sr: &SourceRoute, next_header: IpProto) -> Vec<u8> {
    let mut o = Vec::with_capacity(4 + 4 * sr.path.len());
    srcrt_option(&mut o, sr);
    dsr_header(next_header as u8, &o)
}

/// The bytes after the IP header of a routing packet.
pub(super) fn encode(pkt: &Packet, m: &crate::routing::RoutingMessage) -> Control {
    use crate::routing::RoutingMessage as R;
    match m {
        R::Aodv(a) => Control::Udp { port: AODV_UDP_PORT, body: aodv_body(a) },
        R::Dsdv(d) => Control::Udp { port: DSDV_UDP_PORT, body: dsdv_body(d) },
        R::Dsr(d) => Control::Dsr(dsr_control(d, pkt.ip.src)),
    }
}
