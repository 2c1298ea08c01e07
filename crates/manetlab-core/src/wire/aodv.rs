//! AODV message formats (RFC 3561 §5) and their sizes on the wire.
//!
//! Sizes are what ns-2's `aodv_packet.h` counts: the RFC's message plus one
//! 4-byte word for the timestamp ns-2 carries in requests and replies (to measure
//! the per-hop time): RREQ 28 B (`7*sizeof(u_int32_t)`, RFC 24), RREP 24 B
//! (`6*sizeof(u_int32_t)`, RFC 20), RERR 4 + 8·n B, HELLO (an RREP with the sender
//! as destination) 24 B. Like ns-2, the packet is charged the IP header (20 B) on
//! top but no UDP header: RFC 3561 runs over UDP port 654, which would add 8 B per
//! message (docs/routing.md).

use super::render::{ns2_addr, put_addr, put_u32, Ns2Style, PcapBody, WireFormat};
use crate::ids::NodeId;
use std::fmt::Write;

/// RREQ length: RFC 3561 §5.1's 24 B + ns-2's timestamp word.
pub const RREQ_BYTES: u32 = 28;
/// RREP length: RFC 3561 §5.2's 20 B + ns-2's timestamp word; HELLO is an RREP.
pub const RREP_BYTES: u32 = 24;
/// RERR fixed part: type, flags, reserved, DestCount (RFC 3561 §5.3).
pub const RERR_BASE_BYTES: u32 = 4;
/// Each unreachable destination in a RERR: address + sequence number.
pub const RERR_DEST_BYTES: u32 = 8;

/// Route Request (RFC 3561 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rreq {
    /// J, R: multicast flags, not modelled. G: gratuitous RREP wanted.
    pub gratuitous: bool,
    /// D: only the destination may reply.
    pub destination_only: bool,
    /// U: the destination sequence number is unknown.
    pub unknown_seq: bool,
    /// Hops from the originator to the node handling the request.
    pub hop_count: u8,
    /// RREQ ID: with `originator`, identifies the request.
    pub id: u32,
    pub dst: NodeId,
    pub dst_seq: u32,
    pub originator: NodeId,
    pub originator_seq: u32,
    /// When the originator sent the request (ns-2 `rq_timestamp`, echoed in the
    /// reply so the originator can measure discovery latency; not charged on
    /// the wire, as in ns-2's size).
    pub timestamp_ns: u64,
}

/// Route Reply (RFC 3561 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rrep {
    /// Hops from the node handling the reply to `dst`.
    pub hop_count: u8,
    /// The destination the route is for.
    pub dst: NodeId,
    pub dst_seq: u32,
    /// The node that asked for the route (the RREP travels towards it).
    pub originator: NodeId,
    /// How long the route may be used from receipt (ns).
    pub lifetime_ns: u64,
    /// The request's `timestamp_ns`, echoed (ns-2 `rp_timestamp`).
    pub timestamp_ns: u64,
}

/// Route Error (RFC 3561 §5.3): destinations that became unreachable, each with
/// its (incremented) sequence number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerr {
    /// N: no-delete flag (local repair in progress). Not generated (docs/routing.md).
    pub no_delete: bool,
    pub unreachable: Vec<(NodeId, u32)>,
}

/// HELLO (RFC 3561 §6.9): an RREP with TTL 1 advertising the sender itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    pub node: NodeId,
    pub seq: u32,
    pub lifetime_ns: u64,
}

/// An AODV control message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AodvMessage {
    Rreq(Rreq),
    Rrep(Rrep),
    Rerr(Rerr),
    Hello(Hello),
}

impl AodvMessage {
    /// Message bytes after the IP header.
    pub fn size_bytes(&self) -> u32 {
        match self {
            AodvMessage::Rreq(_) => RREQ_BYTES,
            AodvMessage::Rrep(_) | AodvMessage::Hello(_) => RREP_BYTES,
            AodvMessage::Rerr(e) => RERR_BASE_BYTES + RERR_DEST_BYTES * e.unreachable.len() as u32,
        }
    }

    /// The message type as RFC 3561 names it (keys of the per-type counters).
    pub fn kind(&self) -> &'static str {
        match self {
            AodvMessage::Rreq(_) => "RREQ",
            AodvMessage::Rrep(_) => "RREP",
            AodvMessage::Rerr(_) => "RERR",
            AodvMessage::Hello(_) => "HELLO",
        }
    }
}

/// Every message kind, for counters that list all of them.
pub const KINDS: [&str; 4] = ["RREQ", "RREP", "RERR", "HELLO"];

// ---- rendering: ns-2 trace fields and pcap bytes ------------------------------

/// AODV's UDP port (RFC 3561 §10, IANA "aodv").
pub const AODV_UDP_PORT: u16 = 654;

/// AODV message types (RFC 3561 §5).
pub const AODV_RREQ: u8 = 1;
pub const AODV_RREP: u8 = 2;
pub const AODV_RERR: u8 = 3;

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
            let flags = ((r.gratuitous as u8) << 5)
                | ((r.destination_only as u8) << 4)
                | ((r.unknown_seq as u8) << 3);
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

impl WireFormat for AodvMessage {
    fn size_bytes(&self) -> u32 {
        AodvMessage::size_bytes(self)
    }

    fn ns2_ptype(&self) -> &'static str {
        "AODV"
    }

    /// ns-2's `format_aodv`. ns-2 prints RREP, RERR and HELLO through the RREP
    /// header layout (type, hop count, destination, its sequence number,
    /// lifetime), and counts hops including the hop the message is crossing (an
    /// RREQ leaves its originator with hop count 1); RFC 3561, and manetlab,
    /// count from 0.
    fn ns2_trace_fields(&self, style: Ns2Style, out: &mut String) {
        let hops = |h: u8| u32::from(h) + 1;
        let (code, name, hops, dst, dst_seq, lifetime_s) = match self {
            AodvMessage::Rreq(r) => {
                let (hops, id) = (hops(r.hop_count), r.id);
                let (dst, dst_seq) = (ns2_addr(r.dst), r.dst_seq);
                let (src, src_seq) = (ns2_addr(r.originator), r.originator_seq);
                let _ = match style {
                    Ns2Style::Old => write!(
                        out,
                        "[0x2 {hops} {id} [{dst} {dst_seq}] [{src} {src_seq}]] (REQUEST)"
                    ),
                    Ns2Style::New => write!(
                        out,
                        "-P aodv -Pt 0x2 -Ph {hops} -Pb {id} -Pd {dst} -Pds {dst_seq} -Ps {src} -Pss {src_seq} -Pc REQUEST "
                    ),
                };
                return;
            }
            AodvMessage::Rrep(r) => (
                0x4,
                "REPLY",
                hops(r.hop_count),
                ns2_addr(r.dst),
                r.dst_seq,
                r.lifetime_ns as f64 * 1e-9,
            ),
            AodvMessage::Hello(h) => (
                0x1,
                "HELLO",
                1,
                ns2_addr(h.node),
                h.seq,
                h.lifetime_ns as f64 * 1e-9,
            ),
            // ns-2 prints an RERR through the RREP layout: its destination count
            // where the hop count is, then the first unreachable destination and
            // its number (ns-2's overlay shows the second address there; we print
            // the number) and no lifetime.
            AodvMessage::Rerr(e) => {
                let (d, s) = e
                    .unreachable
                    .first()
                    .map_or((-1, 0), |&(d, s)| (ns2_addr(d), s));
                (0x8, "ERROR", e.unreachable.len() as u32, d, s, 0.0)
            }
        };
        let _ = match style {
            Ns2Style::Old => write!(
                out,
                "[0x{code:x} {hops} [{dst} {dst_seq}] {lifetime_s:.6}] ({name})"
            ),
            Ns2Style::New => write!(
                out,
                "-P aodv -Pt 0x{code:x} -Ph {hops} -Pd {dst} -Pds {dst_seq} -Pl {lifetime_s:.6} -Pc {name} "
            ),
        };
    }

    fn pcap_bytes(&self, _ip_src: NodeId, _next_header: u8) -> PcapBody {
        PcapBody::Udp {
            port: AODV_UDP_PORT,
            body: aodv_body(self),
        }
    }

    /// ns-2's AODV forwards an RREP as the packet it received, IP source kept
    /// (so the forwarder's line is `f`); manetlab's AODV, as RFC 3561, sends it
    /// on from its own address (same uid).
    fn ns2_keeps_received_src(&self) -> bool {
        matches!(self, AodvMessage::Rrep(_))
    }

    /// ns-2's AODV sets the callback only in `rt_resolve`, on data; its own
    /// unicast replies go without (aodv.cc `sendReply`).
    fn ns2_calls_back(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::RoutingMessage;
    use crate::wire::{IpHeader, IpProto, Packet, TransportHeader, IP_HEADER_BYTES};

    #[test]
    fn sizes_match_rfc_and_ns2() {
        let rreq = AodvMessage::Rreq(Rreq {
            gratuitous: false,
            destination_only: false,
            unknown_seq: true,
            hop_count: 0,
            id: 1,
            dst: NodeId(3),
            dst_seq: 0,
            originator: NodeId(0),
            timestamp_ns: 0,
            originator_seq: 1,
        });
        let pkt = Packet {
            uid: 0,
            ip: IpHeader::new(NodeId(0), NodeId(0), 1, IpProto::Manet),
            transport: TransportHeader::Routing(RoutingMessage::Aodv(rreq)),
            payload_bytes: 0,
            tag: None,
            source_route: None,
            frn: None,
        };
        assert_eq!(
            pkt.size_bytes(),
            IP_HEADER_BYTES + 28,
            "ns-2: IP_HDR_LEN + 7*sizeof(u_int32_t)"
        );
        assert!(pkt.is_routing());
        let rerr = AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(NodeId(1), 2), (NodeId(2), 3)],
        });
        assert_eq!(rerr.size_bytes(), 4 + 16);
        let hello = AodvMessage::Hello(Hello {
            node: NodeId(1),
            seq: 1,
            lifetime_ns: 0,
        });
        assert_eq!(hello.size_bytes(), 24, "ns-2: 6*sizeof(u_int32_t)");
    }
}
