//! Routing control as the real protocols' bytes, so Wireshark's own dissectors
//! read every field (docs/metrics.md, "What a pcap holds"):
//!
//! * AODV: RFC 3561 §5 messages in a UDP datagram from and to port 654.
//! * DSR: an RFC 4728 §6.1 DSR Options header (IP protocol 48) holding the
//!   request, reply, error and source-route options; data packets on a source
//!   route carry the header in front of their TCP/UDP header.
//! * DSDV (no standard encoding): a UDP datagram from and to
//!   [`DSDV_UDP_PORT`], 12 bytes per advertised destination.
//! * FRN (paper 003; no public encoding): a UDP datagram from and to
//!   [`FRN_UDP_PORT`] laid out as `FrnMessage::size_bytes` counts it.
//!
//! These are the protocols' own encodings, not ns-2's accounting: the sizes
//! differ from the simulated on-air sizes by a few bytes (table in
//! docs/metrics.md); the simulation's sizes are untouched.

use super::node_addr;
use crate::ids::NodeId;
use crate::routing::aodv::AodvMessage;
use crate::routing::dsdv::DsdvMessage;
use crate::routing::dsr::{DsrMessage, SourceRoute};
use crate::routing::frn::FrnMessage;
use crate::wire::{IpProto, Packet};

/// AODV's UDP port (RFC 3561 §10, IANA "aodv").
pub const AODV_UDP_PORT: u16 = 654;
/// DSDV's UDP port in our pcap files: IANA-unassigned (dynamic range) and
/// claimed by no Wireshark 4.0 dissector, so the body shows as plain data.
pub const DSDV_UDP_PORT: u16 = 65_000;
/// FRN's UDP port in our pcap files (unassigned, no dissector), as DSDV's.
pub const FRN_UDP_PORT: u16 = 65_001;
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

/// An FRN control message: a 4-byte header (type 1 configuration, 2 probe,
/// 3 ERSN; 3 bytes zero), then per configuration entry the destination's
/// address, its hop count, the number of next hops and their addresses.
pub fn frn_body(m: &FrnMessage) -> Vec<u8> {
    let mut b = Vec::with_capacity(m.size_bytes() as usize);
    let kind = match m {
        FrnMessage::Config { .. } => 1,
        FrnMessage::Probe => 2,
        FrnMessage::Ersn => 3,
    };
    b.extend_from_slice(&[kind, 0, 0, 0]);
    if let FrnMessage::Config { entries } = m {
        for (dst, hops, next) in entries {
            put_addr(&mut b, *dst);
            b.push(*hops);
            b.push(next.len() as u8);
            for &n in next {
                put_addr(&mut b, n);
            }
        }
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
        R::Aodv(a) => Control::Udp {
            port: AODV_UDP_PORT,
            body: aodv_body(a),
        },
        R::Dsdv(d) => Control::Udp {
            port: DSDV_UDP_PORT,
            body: dsdv_body(d),
        },
        R::Frn(f) => Control::Udp {
            port: FRN_UDP_PORT,
            body: frn_body(f),
        },
        R::Dsr(d) => Control::Dsr(dsr_control(d, pkt.ip.src)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::aodv::{Hello, Rerr as ARerr, Rrep as ARrep, Rreq as ARreq};
    use crate::routing::dsdv::{Advert, UpdateKind, INFINITY};
    use crate::routing::dsr::{Rerr, Rrep, Rreq};
    use crate::routing::RoutingMessage;
    use crate::wire::IP_BROADCAST;

    fn ids(v: &[u32]) -> Vec<NodeId> {
        v.iter().map(|&i| NodeId(i)).collect()
    }
    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn addr(n: u32) -> [u8; 4] {
        [10, 0, 0, n as u8 + 1]
    }

    #[test]
    fn aodv_rreq_reads_back_per_rfc3561_5_1() {
        let m = AodvMessage::Rreq(ARreq {
            gratuitous: true,
            destination_only: false,
            unknown_seq: true,
            hop_count: 3,
            id: 0x0102_0304,
            dst: NodeId(7),
            dst_seq: 11,
            originator: NodeId(0),
            originator_seq: 42,
            timestamp_ns: 123,
        });
        let b = aodv_body(&m);
        assert_eq!(
            b.len(),
            24,
            "RFC 3561 RREQ is 24 bytes (ns-2 counts 28 with its timestamp)"
        );
        assert_eq!(b[0], 1, "type RREQ");
        assert_eq!(b[1], 0b0010_1000, "J R G D U: G and U set");
        assert_eq!(b[2], 0, "reserved");
        assert_eq!(b[3], 3, "hop count");
        assert_eq!(u32_at(&b, 4), 0x0102_0304, "RREQ ID");
        assert_eq!(&b[8..12], &addr(7), "destination IP");
        assert_eq!(u32_at(&b, 12), 11, "destination sequence number");
        assert_eq!(&b[16..20], &addr(0), "originator IP");
        assert_eq!(u32_at(&b, 20), 42, "originator sequence number");
    }

    #[test]
    fn aodv_rrep_hello_and_rerr_per_rfc3561() {
        let rp = aodv_body(&AodvMessage::Rrep(ARrep {
            hop_count: 2,
            dst: NodeId(7),
            dst_seq: 9,
            originator: NodeId(0),
            lifetime_ns: 10_000_000_000,
            timestamp_ns: 0,
        }));
        assert_eq!(rp.len(), 20);
        assert_eq!(
            &rp[..4],
            &[2, 0, 0, 2],
            "type RREP, no flags, prefix 0, hop count 2"
        );
        assert_eq!(&rp[4..8], &addr(7));
        assert_eq!(u32_at(&rp, 8), 9);
        assert_eq!(&rp[12..16], &addr(0));
        assert_eq!(u32_at(&rp, 16), 10_000, "lifetime in ms");
        let h = aodv_body(&AodvMessage::Hello(Hello {
            node: NodeId(4),
            seq: 6,
            lifetime_ns: 2_000_000_000,
        }));
        assert_eq!(
            &h[..4],
            &[2, 0, 0, 0],
            "§6.9: a HELLO is an RREP with hop count 0"
        );
        assert_eq!(&h[4..8], &addr(4), "destination = the sender");
        assert_eq!(u32_at(&h, 8), 6);
        assert_eq!(u32_at(&h, 16), 2_000);
        let e = aodv_body(&AodvMessage::Rerr(ARerr {
            no_delete: true,
            unreachable: vec![(NodeId(1), 5), (NodeId(2), 7)],
        }));
        assert_eq!(e.len(), 4 + 16);
        assert_eq!(&e[..4], &[3, 0x80, 0, 2], "type RERR, N flag, DestCount 2");
        assert_eq!(&e[4..8], &addr(1));
        assert_eq!(u32_at(&e, 8), 5);
        assert_eq!(&e[12..16], &addr(2));
        assert_eq!(u32_at(&e, 16), 7);
    }

    #[test]
    fn frn_body_is_as_long_as_the_simulation_counts_it() {
        let m = FrnMessage::Config {
            entries: vec![(NodeId(3), 2, ids(&[1, 4])), (NodeId(7), 1, ids(&[7]))],
        };
        let b = frn_body(&m);
        assert_eq!(b.len() as u32, m.size_bytes());
        assert_eq!((b[0], &b[4..8], b[8], b[9]), (1, &addr(3)[..], 2, 2));
        assert_eq!(
            frn_body(&FrnMessage::Probe).len() as u32,
            FrnMessage::Probe.size_bytes()
        );
    }

    #[test]
    fn dsdv_body_is_twelve_bytes_per_entry() {
        let m = DsdvMessage {
            kind: UpdateKind::FullDump,
            entries: vec![
                Advert {
                    dst: NodeId(3),
                    metric: 2,
                    seq: 10,
                },
                Advert {
                    dst: NodeId(5),
                    metric: INFINITY,
                    seq: 7,
                },
            ],
        };
        let b = dsdv_body(&m);
        assert_eq!(
            b.len() as u32,
            m.size_bytes(),
            "the pcap body is as long as ns-2 counts it"
        );
        assert_eq!(&b[..4], &addr(3));
        assert_eq!(u32_at(&b, 4), 10);
        assert_eq!(u32_at(&b, 8), 2);
        assert_eq!(u32_at(&b, 20), 250);
    }

    /// Walk a DSR options header: (next header, [(type, data)]).
    fn dsr_options(b: &[u8]) -> (u8, Vec<(u8, Vec<u8>)>) {
        let len = u16::from_be_bytes([b[2], b[3]]) as usize;
        assert_eq!(b[1], 0, "F (flow state) = 0, reserved");
        let mut opts = Vec::new();
        let mut at = 4;
        while at < 4 + len {
            let (t, l) = (b[at], b[at + 1] as usize);
            opts.push((t, b[at + 2..at + 2 + l].to_vec()));
            at += 2 + l;
        }
        assert_eq!(at, 4 + len, "options fill the payload length exactly");
        (b[0], opts)
    }

    #[test]
    fn dsr_request_with_piggybacked_error_per_rfc4728() {
        let m = DsrMessage::Rreq(Rreq {
            id: 0x1_0005,
            target: NodeId(9),
            path: ids(&[0, 2, 3]),
            max_propagation: 255,
            error: Some((NodeId(4), NodeId(6))),
            stale_bytes: 0,
        });
        let (next, opts) = dsr_options(&dsr_control(&m, NodeId(0)));
        assert_eq!(next, IPPROTO_NONE, "options only: No Next Header");
        assert_eq!(opts.len(), 2);
        let (t, d) = &opts[0];
        assert_eq!(
            (*t, d.len()),
            (DSR_OPT_RREQ, 6 + 4 * 2),
            "RREQ: id, target, the 2 addresses after the initiator"
        );
        assert_eq!(&d[..2], &[0, 5], "16-bit identification");
        assert_eq!(&d[2..6], &addr(9));
        assert_eq!(&d[6..10], &addr(2));
        assert_eq!(&d[10..14], &addr(3));
        let (t, d) = &opts[1];
        assert_eq!((*t, d.len()), (DSR_OPT_RERR, 14));
        assert_eq!(d[0], DSR_ERR_NODE_UNREACHABLE);
        assert_eq!(&d[2..6], &addr(4), "error source");
        assert_eq!(
            &d[6..10],
            &addr(0),
            "error destination: the initiator it was sent to"
        );
        assert_eq!(&d[10..14], &addr(6), "unreachable node");
    }

    #[test]
    fn dsr_reply_and_error_carry_their_source_route() {
        // A reply for the route 0-1-2-3 travelling back 3-2-1-0, now sent from 2 to 1.
        let rp = Rrep {
            route: ids(&[0, 1, 2, 3]),
            req_id: 1,
            sr: SourceRoute {
                path: ids(&[3, 2, 1, 0]),
                next: 2,
                salvaged: 0,
                flow: Default::default(),
            },
        };
        let (next, opts) = dsr_options(&dsr_control(&DsrMessage::Rrep(rp), NodeId(3)));
        assert_eq!(next, IPPROTO_NONE);
        let (t, d) = &opts[0];
        assert_eq!(
            (*t, d.len()),
            (DSR_OPT_RREP, 1 + 4 * 3),
            "L/reserved, then the route after the initiator"
        );
        assert_eq!(&d[1..5], &addr(1));
        assert_eq!(&d[9..13], &addr(3));
        let (t, d) = &opts[1];
        assert_eq!(
            (*t, d.len()),
            (DSR_OPT_SRCRT, 2 + 4 * 2),
            "source route: the two intermediate nodes"
        );
        assert_eq!(
            d[1] & 0x3f,
            1,
            "segments left: node 1 is still to be visited"
        );
        assert_eq!(&d[2..6], &addr(2));
        assert_eq!(&d[6..10], &addr(1));
        // A route error nested around an older one; one hop back: no source route option.
        let re = Rerr {
            from: NodeId(2),
            to: NodeId(3),
            tell: NodeId(0),
            nested: vec![(NodeId(5), NodeId(6), NodeId(7))],
            sr: SourceRoute::new(ids(&[2, 0])),
        };
        let (_, opts) = dsr_options(&dsr_control(&DsrMessage::Rerr(re), NodeId(2)));
        assert_eq!(
            opts.iter().map(|o| (o.0, o.1.len())).collect::<Vec<_>>(),
            vec![(DSR_OPT_RERR, 14), (DSR_OPT_RERR, 14)]
        );
        assert_eq!(
            &opts[1].1[2..14],
            &[addr(6), addr(5), addr(7)].concat(),
            "nested: source, destination, unreachable"
        );
    }

    #[test]
    fn dsr_data_header_segments_left_counts_down_along_the_route() {
        let mut sr = SourceRoute {
            path: ids(&[0, 1, 2, 3, 4]),
            next: 1,
            salvaged: 2,
            flow: Default::default(),
        };
        for (next, left) in [(1, 3), (2, 2), (3, 1), (4, 0)] {
            sr.next = next;
            let (nh, opts) = dsr_options(&dsr_data(&sr, IpProto::Tcp));
            assert_eq!(nh, 6, "next header TCP");
            let d = &opts[0].1;
            assert_eq!(opts[0].0, DSR_OPT_SRCRT);
            assert_eq!(
                u16::from_be_bytes([d[0], d[1]]) & 0x3f,
                left,
                "segments left when sent to path[{next}]"
            );
            assert_eq!(
                (u16::from_be_bytes([d[0], d[1]]) >> 6) & 0xf,
                2,
                "salvage count"
            );
            assert_eq!(&d[2..], &[addr(1), addr(2), addr(3)].concat());
        }
        let (_, opts) = dsr_options(&dsr_data(&SourceRoute::new(ids(&[0, 1])), IpProto::Udp));
        assert!(
            opts.is_empty(),
            "a one-hop route needs no source route option (RFC 4728 §8.1.3)"
        );
    }

    #[test]
    fn encode_picks_the_protocol_and_port() {
        let hello = AodvMessage::Hello(Hello {
            node: NodeId(1),
            seq: 1,
            lifetime_ns: 0,
        });
        let pkt = crate::wire::test_support::control(
            0,
            1,
            IP_BROADCAST,
            1,
            RoutingMessage::Aodv(hello.clone()),
        );
        assert!(matches!(
            encode(&pkt, &RoutingMessage::Aodv(hello)),
            Control::Udp { port: 654, .. }
        ));
        let dsdv = RoutingMessage::Dsdv(DsdvMessage {
            kind: UpdateKind::Incremental,
            entries: vec![],
        });
        assert!(matches!(
            encode(&pkt, &dsdv),
            Control::Udp {
                port: DSDV_UDP_PORT,
                ..
            }
        ));
    }
}
