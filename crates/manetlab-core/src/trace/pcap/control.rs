//! Routing control as the real protocols' bytes, so Wireshark's own dissectors
//! read every field (docs/metrics.md, "What a pcap holds"). Each protocol's
//! encoding lives with its messages (`wire/<protocol>.rs`, `WireFormat::pcap_bytes`);
//! the tests here read the bytes back per the RFCs:
//!
//! * AODV: RFC 3561 §5 messages in a UDP datagram from and to port 654.
//! * DSR: an RFC 4728 §6.1 DSR Options header (IP protocol 48) holding the
//!   request, reply, error and source-route options; data packets on a source
//!   route carry the header in front of their TCP/UDP header.
//! * DSDV (no standard encoding): a UDP datagram from and to
//!   [`crate::wire::dsdv::DSDV_UDP_PORT`], 12 bytes per advertised destination.
//! * FRN (paper 003; no public encoding): a UDP datagram from and to
//!   [`crate::wire::frn::FRN_UDP_PORT`] laid out as `FrnMessage::size_bytes` counts it.
//!
//! These are the protocols' own encodings, not ns-2's accounting: the sizes
//! differ from the simulated on-air sizes by a few bytes (table in
//! docs/metrics.md); the simulation's sizes are untouched.

#[cfg(test)]
mod tests {
    use crate::ids::NodeId;
    use crate::wire::aodv::*;
    use crate::wire::aodv::{Hello, Rerr as ARerr, Rrep as ARrep, Rreq as ARreq};
    use crate::wire::dsdv::*;
    use crate::wire::dsr::*;
    use crate::wire::dsr::{Rerr, Rrep, Rreq};
    use crate::wire::frn::*;
    use crate::wire::{IpProto, PcapBody, RoutingMessage};

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
            let (nh, opts) = dsr_options(&dsr_data(&sr, IpProto::Tcp as u8));
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
        let (_, opts) = dsr_options(&dsr_data(
            &SourceRoute::new(ids(&[0, 1])),
            IpProto::Udp as u8,
        ));
        assert!(
            opts.is_empty(),
            "a one-hop route needs no source route option (RFC 4728 §8.1.3)"
        );
    }

    #[test]
    fn each_message_picks_its_protocol_and_port() {
        let hello = RoutingMessage::Aodv(AodvMessage::Hello(Hello {
            node: NodeId(1),
            seq: 1,
            lifetime_ns: 0,
        }));
        assert!(matches!(
            hello.wire().pcap_bytes(NodeId(1), 0),
            PcapBody::Udp { port: 654, .. }
        ));
        let dsdv = RoutingMessage::Dsdv(DsdvMessage {
            kind: UpdateKind::Incremental,
            entries: vec![],
        });
        assert!(matches!(
            dsdv.wire().pcap_bytes(NodeId(1), 0),
            PcapBody::Udp {
                port: DSDV_UDP_PORT,
                ..
            }
        ));
        let probe = RoutingMessage::Frn(FrnMessage::Probe);
        assert!(matches!(
            probe.wire().pcap_bytes(NodeId(1), 0),
            PcapBody::Udp {
                port: FRN_UDP_PORT,
                ..
            }
        ));
    }
}
